"""Ahead-of-time use of a jitted function: `f.lower(*args)` gives a Lowered (our IR and
StableHLO text), `.compile()` a Compiled (XLA's optimised HLO, cost and memory
analysis) that runs only on arguments of the signature it was lowered for."""

from __future__ import annotations

import inspect

from . import promotion, tree
from .backends import XlaBackend
from .compilation import lower
from .compiler import dtypes as dt
from .compiler.ir import Function, TensorType
from .errors import at_user_line
from .runtime.client import PLATFORMS
from .signature import PY_SCALARS, Entry, leaf_signature, static_key


class Lowered:
    """A traced and lowered call: our IR, the StableHLO text; `.compile()` for XLA's."""

    def __init__(self, jitted, key, fn: Function, out_tree, captured, backend,
                 out_weak=None, platform: str | None = None, mutated=()):
        self._jitted, self._key, self.ir, self._out_tree = jitted, key, fn, out_tree
        self._mutated = mutated
        self._captured, self.backend, self._out_weak = captured, backend, out_weak
        self.platform = _lowering_platform(platform, backend)
        self.optimized_ir, self._text = lower(fn, platform=self.platform)

    def as_text(self, dialect: str = "stablehlo") -> str:
        if dialect == "stablehlo":
            return self._text
        if dialect == "ir":
            return str(self.optimized_ir)
        raise ValueError(f"unknown dialect {dialect!r}: use 'stablehlo' or 'ir'")

    def ir_text(self, optimized: bool = True) -> str:
        return str(self.optimized_ir if optimized else self.ir)

    def compile(self) -> Compiled:
        backend = self.backend
        if not backend.device_buffers or backend.platform != self.platform:
            backend = XlaBackend.for_platform(self.platform)
        entry = self._jitted._cache.get(self._key)
        if entry is None or entry.backend is not backend:
            prog = backend.program(self.ir, name=self._jitted.__name__)
            entry = Entry(self.ir, prog, self._out_tree, self._captured, backend,
                           out_weak=self._out_weak, mutated=self._mutated)
        return Compiled(entry, self._jitted, self._key)


def _lowering_platform(platform: str | None, backend) -> str:
    if platform is None:
        return backend.platform if backend.device_buffers else "host"
    if platform not in PLATFORMS:
        raise ValueError(at_user_line(
            f"lower(platform={platform!r}): unknown platform; use one of "
            f"{', '.join(PLATFORMS)}"))
    return platform


# a Python scalar type -> the dtype of its 0-d operand, with x64 mode off and on
_SCALAR_DTYPES = {bool: (dt.bool_, dt.bool_), int: (dt.int64, dt.int64),
                  float: (dt.float32, dt.float64), complex: (dt.complex64, dt.complex128)}


def _type_text(sig, x64: bool | None = None) -> str:
    """A leaf signature as jax writes it (float32[2,3]); Python scalars as their 0-d type
    in x64 mode or not (None: the current mode)."""
    if isinstance(sig, tuple):  # a weak tensor: weakness does not change the program
        sig = sig[0]
    if sig in PY_SCALARS:
        sig = TensorType((), _SCALAR_DTYPES[sig][promotion.x64 if x64 is None else x64])
    return f"{sig.dtype.name}[{','.join(map(str, sig.shape))}]"


class Compiled:
    """A compiled call for one signature: calling it with any other raises TypeError
    (running the executable on other data would reinterpret its bytes)."""

    def __init__(self, entry: Entry, jitted, key):
        self._entry = entry
        self._jitted, self._key = jitted, key
        self.executable = entry.exe

    def _check(self, args, kwargs) -> list:
        """The dynamic leaves of a call, after checking them against the signature."""
        static, dyn_args, dyn_kwargs = self._jitted._split(args, kwargs)
        leaves, treedef = tree.flatten((dyn_args, dyn_kwargs))
        want_tree, want_sig, want_static = self._key[0], self._key[1], self._key[2]
        if static_key(static) != want_static:
            raise TypeError(at_user_line(
                f"this Compiled was lowered with static arguments {want_static} and was "
                f"called with {static_key(static)}; lower and compile again for new static "
                f"values"))
        if treedef != want_tree:
            raise TypeError(at_user_line(
                f"this Compiled was lowered for arguments of structure {want_tree} and was "
                f"called with structure {treedef}"))
        names = self._leaf_names(args, dyn_args, dyn_kwargs)
        bad = [(n, _type_text(w, self._key[4]), _type_text(leaf_signature(x)))
               for n, w, x in zip(names, want_sig, leaves, strict=True)]
        bad = [b for b in bad if b[1] != b[2]]
        if bad:
            raise TypeError(at_user_line(
                "Argument types differ from the types for which this computation was "
                "compiled. The mismatches are:\n" + "\n".join(
                    f"argument {n!r} compiled with {w} and called with {g}"
                    for n, w, g in bad)))
        return leaves

    def _leaf_names(self, args, dyn_args, dyn_kwargs) -> list[str]:
        try:
            params = list(inspect.signature(self._jitted.fn).parameters)
        except (TypeError, ValueError):
            params = []
        static_pos = set(self._jitted.static_argnums)
        positions = [i for i in range(len(args)) if i not in static_pos]
        named = [(params[i] if i < len(params) else f"args[{i}]", a)
                 for i, a in zip(positions, dyn_args, strict=True)] + sorted(dyn_kwargs.items())
        names = []
        for name, a in named:
            n = len(tree.flatten(a)[0])
            names += [name] if n == 1 else [f"{name} (leaf {k})" for k in range(n)]
        return names

    def as_text(self) -> str:
        """XLA's optimised HLO."""
        return self.executable.optimized_hlo()

    def cost_analysis(self) -> dict:
        return self.executable.cost_analysis()

    def memory_analysis(self) -> dict:
        return self.executable.memory_analysis()

    def __call__(self, *args, **kwargs):
        return self._entry.run(self._check(args, kwargs))
