"""Why a jitted function was traced again: the closest earlier signature and what
differs, named by the user's argument names (STABLEJIT_LOG_COMPILES and
RecompileWarning say it)."""

from __future__ import annotations

import inspect

from .compiler.ir import TensorType


def arg_names(fn, treedef, static) -> list[str]:
    """A readable name for each dynamic leaf: `x`, `params['w']`, `args[2][0]`."""

    try:
        names = list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        names = []
    static_pos = {i for i, _ in static if isinstance(i, int)}
    positions = [i for i in range(len(treedef.children[0].children) + len(static_pos))
                 if i not in static_pos]
    out = []
    for child, pos in zip(treedef.children[0].children, positions, strict=True):
        base = names[pos] if pos < len(names) else f"args[{pos}]"
        out += _leaf_paths(child, base)
    kw = treedef.children[1]
    out += _leaf_paths(kw, "")
    return out


def _leaf_paths(td, base: str) -> list[str]:
    if td.kind is None:
        return [base]
    out = []
    fields = getattr(td.kind, "_fields", None)
    for i, child in enumerate(td.children):
        if td.kind is dict:
            sub = f"{base}[{td.aux[i]!r}]" if base else str(td.aux[i])
        elif fields is not None:
            sub = f"{base}.{fields[i]}"
        else:
            sub = f"{base}[{i}]"
        out += _leaf_paths(child, sub)
    return out


def _precision(pair) -> str:
    return "DEFAULT" if pair is None else pair[0] if pair[0] == pair[1] else "/".join(pair)


def describe_retrace(fn, new_key, old_keys) -> str:
    """Why `new_key` missed the cache: the closest earlier signature and what differs."""
    if not old_keys:
        return "first call"
    treedef, sig, static, backend, x64, precision = new_key

    def diff(old):
        o_treedef, o_sig, o_static, o_backend, o_x64, o_precision = old
        if o_x64 != x64:
            return [f"x64 mode changed from {_on(o_x64)} to {_on(x64)} (the default float "
                    f"is float{64 if x64 else 32})"]
        if o_precision != precision:
            return [f"the default matmul precision changed from {_precision(o_precision)} "
                    f"to {_precision(precision)} (config default_matmul_precision)"]
        if o_treedef != treedef:
            return ["the structure of the arguments changed (a different pytree: "
                    f"{o_treedef} -> {treedef})"]
        out = []
        try:
            names = arg_names(fn, treedef, static)
        except Exception:
            names = []
        for i, (a, b) in enumerate(zip(o_sig, sig, strict=False)):
            if a != b:
                who = names[i] if i < len(names) else f"argument leaf {i}"
                out.append(f"argument {who!s} changed from {_sig_text(a)} to {_sig_text(b)}")
        for (k, v), (k2, v2) in zip(o_static, static, strict=False):
            if v != v2 or k != k2:
                out.append(f"static argument {k!r} changed from {v!r} to {v2!r}")
        if len(o_static) != len(static):
            out.append("the set of static arguments changed")
        if o_backend is not backend:
            out.append(f"the device changed from {getattr(o_backend, 'name', o_backend)} to "
                       f"{getattr(backend, 'name', backend)}")
        return out

    best = min((diff(k) for k in old_keys), key=len)
    return "; ".join(best) if best else "an equal signature was evicted"


def _on(flag: bool) -> str:
    return "on" if flag else "off"


def _sig_text(s) -> str:
    if isinstance(s, TensorType):
        return str(s)
    if isinstance(s, tuple) and len(s) == 4:  # a view (signature.leaf_signature)
        return f"{s[0]} (a view with strides {s[3]}{', weak type' if s[1] else ''})"
    if isinstance(s, tuple) and s and isinstance(s[0], TensorType):
        return f"{s[0]} (weak type)"
    return getattr(s, "__name__", repr(s))
