"""Structured control flow: cond, switch, while_loop, fori_loop, scan.

Each branch or body is traced into an IR Function by a nested trace (a `RegionTrace`);
the primitive (`cond`, `while`, `scan` in compiler/primitives/control_flow.py) is then
bound with those Functions as its regions on the current backend: recorded inside jit,
compiled and run at once on the eager XLA backend, interpreted on the reference backend.

Closures work: a body may use tensors from outside it (values of an enclosing trace, or
concrete tensors). Its trace lifts each such tensor to an extra parameter of the region,
and the tensor becomes an extra operand of the op, so regions stay closed.

The carries and operands are pytrees. Every construct checks types by one rule, JAX's
(see "the type rule of every construct" below): a branch (or loop body) that returns a
different structure, shape or dtype than its peer (or than the loop carry) is a
TypeError naming the pytree leaf and both types, at the line that called cond /
while_loop / scan, raised while tracing, before anything runs. Nothing is converted
silently: a Python scalar (a weak type) matches only its own default dtype, except that
a loop's weakly typed initial carry takes the body's result type, as in JAX.
"""

from __future__ import annotations

import numbers
from typing import Any, NamedTuple

import numpy as np

from . import numpy as snp
from . import promotion, tree, writes
from .compiler import dtypes as dt
from .compiler.errors import ShapeError
from .compiler.ir import Attrs, Function, TensorType, Value
from .compiler.primitives import control_flow as cf
from .dispatch import bind
from .errors import at_user_line
from .staging import Spec, Staged, stage
from .tensor import Tensor
from .tracing import Trace, escaped_error

__all__ = ["cond", "switch", "while_loop", "fori_loop", "scan"]


class RegionTrace(Trace):
    """The trace of one control-flow body. While it is current it records every op (even
    ops whose operands all come from outside), and every outside tensor it meets becomes
    a parameter of the body (`captured`), never an embedded constant: the body stays a
    function of its inputs, so its compiled form can be reused."""

    records_all = True

    def _capture(self, t: Tensor) -> Value:
        if t._backend.stages and not t._backend.alive:
            raise escaped_error()
        v = self._captured_ids.get(id(t))
        if v is None:
            if t._backend.concrete:
                writes.note_read(t)
            v = self.builder.param(t.type)
            self.captured.append((t, v))
            self._captured_ids[id(t)] = v
        return v


def _functions(what: str, **fns) -> None:
    for name, f in fns.items():
        if not callable(f):
            raise TypeError(at_user_line(f"{what}: {name} must be a function (a def or a "
                                         f"lambda), got {type(f).__name__} {f!r:.40}"))


def _scalar(what: str, name: str, x, kind: str = "a bool or a number") -> Tensor:
    try:
        return _as_tensor(x)
    except TypeError:
        raise TypeError(at_user_line(f"{what}: {name} must be a scalar ({kind}), got "
                                     f"{type(x).__name__} {x!r:.40}")) from None


def _as_tensor(x) -> Tensor:
    return x if isinstance(x, Tensor) else snp.asarray(x)


def _trace(fun, in_tree, specs, name: str, split_output=None, spread=True) -> Staged:
    """Stage a body: `fun(*unflatten(in_tree, inputs))` (`fun(unflatten(...))` when not
    `spread`) with abstract inputs of `specs` (a list of (TensorType, weak)).
    `split_output` maps the return value to the pytree to flatten. The Function's params
    are the inputs, then the captured outside tensors."""

    def output(leaf, trace):
        if isinstance(leaf, Tensor):
            return leaf
        try:
            return _as_tensor(leaf)
        except TypeError:
            raise TypeError(at_user_line(
                f"{name} returned a {type(leaf).__name__} leaf; bodies of control flow "
                f"must return tensors, numbers or pytrees of them")) from None

    return stage(fun, in_tree, [Spec(t, w) for t, w in specs], RegionTrace(name),
                 spread=spread, split_output=split_output, output=output)


# ---- the type rule of every construct -------------------------------------------------------
#
# One rule, JAX's (core.typematch over equal pytrees), for what each construct compares:
# a loop body's carry out against its carry in (while_loop, fori_loop, scan), the branches
# of cond / switch against branch 0, custom_root's f / solve / tangent_solve against
# initial_guess, associative_scan's fn against its inputs:
#   - the pytree structures are equal;
#   - every leaf has the same shape and dtype. Weakness is ignored: a Python scalar (a
#     weak value) matches a leaf of its own dtype (stablejit's defaults: int64, float32,
#     complex64), and no other; it is never converted to the other side's dtype.
# Loops add JAX's one relaxation, on the way in: a weakly typed initial carry leaf whose
# type differs from what the body returns is promoted once, to result_type(initial value,
# body result), and the body is traced again (`promote_weak_carry`).
# A mismatch is a TypeError (ShapeError for a leaf) naming the construct, the leaf's path
# and both types, at the user's line, raised while tracing: before anything runs.

class Mismatch(NamedTuple):
    """Where two (structure, leaf types) pairs part: at a leaf (`leaf` its index, `want`
    and `got` its TensorTypes) or, when leaf is None, at a node of the structures (`want`
    and `got` the TreeDefs there). `path` is a key path."""

    path: tuple
    leaf: int | None
    want: Any
    got: Any


def find_mismatch(want_tree, want_types, got_tree, got_types) -> Mismatch | None:
    """The first place where (got_tree, got_types) breaks the rule above against
    (want_tree, want_types); None when they match. Types are TensorTypes (interned, so
    equal types are the same object)."""
    if got_tree != want_tree:
        return _structure_mismatch(want_tree, got_tree)
    for i, (a, b) in enumerate(zip(want_types, got_types, strict=True)):
        if a is not b:
            return Mismatch(want_tree.leaf_paths()[i], i, a, b)
    return None


def _structure_mismatch(want, got, path=()) -> Mismatch:
    if _same_node(want, got):
        for key, a, b in zip(want.child_keys(), want.children, got.children, strict=True):
            if a != b:
                return _structure_mismatch(a, b, (*path, key))
    return Mismatch(path, None, want, got)


def _same_node(a, b) -> bool:
    if a.kind is not b.kind or len(a.children) != len(b.children):
        return False
    try:
        return type(a.aux) is type(b.aux) and bool(a.aux == b.aux)
    except Exception:  # noqa: BLE001 - aux data that does not compare: call them different
        return a.aux is b.aux


def describe_node(td) -> str:
    """A pytree node in words: 'a tuple of 2', "a dict with keys ['a', 'b']", 'a leaf'."""
    if td.kind is None:
        return "a leaf (an array or scalar)"
    if td.kind is type(None):
        return "None"
    if td.kind is dict:
        return f"a dict with keys {list(td.aux)}"
    name = getattr(td.kind, "__name__", str(td.kind))
    return f"a {name} of {len(td.children)}"


def promote_weak_carry(specs, out_types, out_weak) -> list | None:
    """JAX's rule for a weakly typed initial carry (a Python scalar): a weak leaf whose
    type differs from the body's result for it takes result_type(initial value, result)
    (strong), as `jax.lax.while_loop` / `scan` do before their second trace. Returns the
    new specs, or None when nothing changes."""
    new, changed = list(specs), False
    for i, ((t, weak), o, o_weak) in enumerate(zip(specs, out_types, out_weak, strict=True)):
        if weak and t is not o:
            d, _ = promotion.promote(t.dtype, True, o.dtype, o_weak)
            new[i] = (TensorType(t.shape, d), False)
            changed = True
    return new if changed else None


def _jax_name(what: str) -> str:
    return "jax.lax." + what.removeprefix("lax.")


def _weak_note(weak: bool) -> str:
    return " (weakly typed: a Python scalar, or computed from one)" if weak else ""


def leaf_paths(td) -> list[str]:
    """A readable path for each leaf of a TreeDef: [0], ['key'], .field."""
    return [tree.keystr(p) or "(the value itself)" for p in td.leaf_paths()]


class LoopNames(NamedTuple):
    """How a loop's type errors name things: the construct, its body function, and the
    carry's paths (`root` before them, after dropping `strip` leading keys: fori_loop
    runs as a loop over (index, init_val) and reports init_val's paths)."""

    what: str
    body: str
    root: str = ""
    strip: int = 0

    def path(self, p: tuple) -> str:
        return self.root + tree.keystr(p[self.strip:])

    def own(self, td, p: tuple):
        """The part of carry structure `td` that the user's carry is (below the stripped
        keys of path `p`)."""
        for key in p[:self.strip]:
            td = td.children[key.idx]
        return td


class CarryTypeError(ShapeError):
    """A loop body returned a carry leaf of another type than the one it got."""


def check_carry(names: LoopNames, in_tree, specs, out_tree, out_types, out_weak,
                orig_specs=None) -> None:
    """The loop rule: the body's carry out (out_tree, out_types) must match the carry in
    (in_tree, specs). `orig_specs`: the specs before promote_weak_carry, to say so."""
    m = find_mismatch(in_tree, [t for t, _ in specs], out_tree, out_types)
    if m is None:
        return
    what, body = names.what, names.body
    where = names.path(m.path)
    if m.leaf is None:
        # (fori_loop: the trees under the index, not the loop's own tuple)
        whole_in, whole_out = (names.own(in_tree, m.path), names.own(out_tree, m.path))
        raise TypeError(at_user_line(
            f"{what}: {body} returns a carry of another pytree structure than the one it "
            f"gets: at {where or 'the top'}, the carry has {describe_node(m.want)} but "
            f"{body} returns {describe_node(m.got)} (the whole carry: {whole_in!r}; "
            f"returned: {whole_out!r}). The body must return the carry's structure (as in "
            f"{_jax_name(what)})"))
    t_in, t_out = m.want, m.got
    note_in = ""
    if orig_specs is not None and orig_specs[m.leaf][1]:
        note_in = (f" (it starts weakly typed, as a Python scalar, and so takes the result "
                   f"type of itself and what {body} returns, as in JAX: "
                   f"{t_in.dtype.name})")
    leaf = f"carry leaf {where}" if where else "carry"
    if t_in.shape != t_out.shape:
        fix = (f"make {body} return shape {t_in.shape} there, or start the loop from a "
               f"carry of shape {t_out.shape}")
    else:
        fix = (f"cast {body}'s result with .astype({t_in.dtype.name}), or start the loop "
               f"from a carry of dtype {t_out.dtype.name}")
    raise CarryTypeError(at_user_line(
        f"{what}: {body} changes the type of {leaf}: it enters the loop as {t_in}{note_in} "
        f"and {body} returns {t_out}{_weak_note(out_weak[m.leaf])}. The carry must keep "
        f"its shape and dtype (as in {_jax_name(what)}): {fix}"))


def check_branches(what: str, names, traced) -> None:
    """cond / switch: every branch's output (structure, leaf types) must match branch
    0's."""
    first = traced[0]
    types0 = [v.type for v in first.fn.results]
    for k, t in enumerate(traced[1:], 1):
        m = find_mismatch(first.out_tree, types0, t.out_tree, [v.type for v in t.fn.results])
        if m is None:
            continue
        where = tree.keystr(m.path)
        if m.leaf is None:
            raise TypeError(at_user_line(
                f"{what}: {names[k]} returns {t.out_tree!r} but {names[0]} returns "
                f"{first.out_tree!r}: at {where or 'the top'}, {names[0]} has "
                f"{describe_node(m.want)} and {names[k]} {describe_node(m.got)}. Every "
                f"branch must return the same pytree structure (as in {_jax_name(what)})"))
        if m.want.shape != m.got.shape:
            fix = "broadcast or reshape one branch's result to the other's shape"
        else:
            fix = (f"cast what {names[k]} returns with .astype({m.want.dtype.name}) (or "
                   f"{names[0]}'s with .astype({m.got.dtype.name}))")
        weak0, weak_k = first.out_weak[m.leaf], t.out_weak[m.leaf]
        scalars = ("; a Python scalar does not take the other branch's dtype"
                   if weak0 or weak_k else "")
        raise ShapeError(at_user_line(
            f"{what}: output leaf {where or '(the output itself)'} differs between "
            f"branches: {names[0]} returns {m.want}{_weak_note(weak0)}, {names[k]} returns "
            f"{m.got}{_weak_note(weak_k)}. Every branch must return the same shapes and "
            f"dtypes (as in {_jax_name(what)}{scalars}): {fix}"))


def check_structure(what: str, got_name: str, got_tree, want_name: str, want_tree) -> None:
    """Only the structures (custom_root's rule in JAX)."""
    if got_tree == want_tree:
        return
    m = _structure_mismatch(want_tree, got_tree)
    where = tree.keystr(m.path)
    raise TypeError(at_user_line(
        f"{what}: {got_name} returns {got_tree!r} but {want_name} is {want_tree!r}: at "
        f"{where or 'the top'}, {want_name} has {describe_node(m.want)} and {got_name} "
        f"returns {describe_node(m.got)}. {got_name} must return the structure of "
        f"{want_name} (as in {_jax_name(what)})"))


def check_elements(what: str, fn_name: str, want_name: str, want_tree, want_types,
                   got_tree, got_types, got_weak) -> None:
    """A function that must return values of its inputs' types (associative_scan's fn):
    the same structure, and per leaf the same shape and dtype."""
    m = find_mismatch(want_tree, want_types, got_tree, got_types)
    if m is None:
        return
    if m.leaf is None:
        check_structure(what, fn_name, got_tree, want_name, want_tree)
    t_in, t_out = m.want, m.got
    if t_in.shape != t_out.shape:
        fix = f"make {fn_name} return shape {t_in.shape} there (it combines elementwise)"
    else:
        fix = f"cast {fn_name}'s result with .astype({t_in.dtype.name})"
    raise ShapeError(at_user_line(
        f"{what}: {fn_name} changes the type of {want_name}{tree.keystr(m.path)}: it gets "
        f"{t_in} and returns {t_out}{_weak_note(got_weak[m.leaf])}. {fn_name} must return "
        f"values of its inputs' shapes and dtypes: {fix}"))


def _unify_params(traced: list[Staged], n_lead: int, consts_first: bool
                  ) -> tuple[list[Function], list[Tensor]]:
    """Give every body the same parameters: the union of their captured tensors.
    Returns the Functions (params: inputs then captures, or captures then inputs when
    `consts_first`) and the captured tensors in operand order."""
    union: list[Tensor] = []
    index: dict[int, int] = {}
    for t in traced:
        for c in t.captured:
            if id(c) not in index:
                index[id(c)] = len(union)
                union.append(c)
    fns = []
    for t in traced:
        f = t.fn
        inputs = list(f.params[:n_lead])
        own = {id(c): p for c, p in zip(t.captured, f.params[n_lead:], strict=True)}
        caps = [own.get(id(c)) or Value(c.type) for c in union]
        params = caps + inputs if consts_first else inputs + caps
        fns.append(Function(f.name, params, f.ops, f.results))
    return fns, union


# ---- cond / switch -------------------------------------------------------------------------

def cond(pred, true_fn, false_fn, *operands):
    """`true_fn(*operands)` if pred else `false_fn(*operands)`, as one compiled op.

    pred is a scalar (bool, or a number compared with 0). Both functions must return
    the same pytree structure with the same shapes and dtypes. Only the chosen branch
    runs (unlike `where`). Differentiable in both modes.

    Example:
        >>> stablejit.cond(snp.asarray(3.0) > 0, lambda x: x * 2, lambda x: -x, snp.asarray(3.0))
        Tensor<f32[] xla:host:0>
        6.
    """
    _functions("cond", true_fn=true_fn, false_fn=false_fn)
    p = _scalar("cond", "pred", pred)
    if p.shape != ():
        raise TypeError(at_user_line(
            f"cond: pred must be a scalar, got a tensor of shape {p.shape}; reduce it first "
            f"(snp.any / snp.all), or use stablejit.numpy.where for an elementwise choice"))
    if p.dtype is not dt.bool_:
        if p.dtype.kind not in "biuf":
            raise TypeError(at_user_line(f"cond: pred must be boolean or a real number, got "
                                         f"{p.dtype.name}"))
        p = p != 0
    return _branches("cond", p, [false_fn, true_fn], ["false_fn", "true_fn"], operands)


def switch(index, branches, *operands):
    """`branches[index](*operands)`, with index clamped to [0, len(branches) - 1] as in
    JAX's `lax.switch`. All branches must return the same structure, shapes and dtypes.

    Example:
        >>> branches = [lambda x: x + 1, lambda x: x * 10, lambda x: -x]
        >>> stablejit.switch(1, branches, snp.asarray(2.0))
        Tensor<f32[] xla:host:0>
        20.
    """
    branches = list(branches)
    if not branches:
        raise ValueError(at_user_line("switch: needs at least one branch"))
    _functions("switch", **{f"branches[{k}]": b for k, b in enumerate(branches)})
    i = _scalar("switch", "index", index, "an integer")
    if i.shape != () or i.dtype.kind not in "iu":
        raise TypeError(at_user_line(f"switch: index must be an integer scalar, got {i.type}"))
    if len(branches) == 1:
        return branches[0](*operands)
    i = snp.astype(snp.clip(i, 0, len(branches) - 1), dt.int32)
    names = [f"branch {k} ({getattr(b, '__name__', 'fn')})" for k, b in enumerate(branches)]
    return _branches("switch", i, branches, names, operands)


def _branches(what: str, index: Tensor, fns, names, operands):
    leaves, in_tree = tree.flatten(tuple(operands))
    tensors = [_as_tensor(x) for x in leaves]
    specs = [(t.type, t.weak) for t in tensors]
    traced = [_trace(f, in_tree, specs, f"{what}_{k}") for k, f in enumerate(fns)]
    check_branches(what, names, traced)
    first = traced[0]
    fns_u, captured = _unify_params(traced, len(specs), consts_first=False)
    outs = bind(cf.cond, (index, *tensors, *captured), Attrs(), regions=tuple(fns_u))
    # the results are weak where branch 0's are (JAX's cond takes branch 0's types)
    return tree.unflatten(first.out_tree, _reweak(outs, first.out_weak))


# ---- loops ---------------------------------------------------------------------------------

def _trace_loop(names: LoopNames, trace, in_tree, specs):
    """Trace a loop body with the carry `specs` (a list of (TensorType, weak)) and check
    its carry out against them, with JAX's two passes: a weakly typed initial leaf that
    the body changes is promoted (promote_weak_carry) and the body traced again.
    `trace(specs)` returns (traced body, carry out structure, carry out types, carry out
    weakness). Returns (traced body, final specs, carry out weakness)."""
    body, out_tree, out_types, out_weak = trace(specs)
    orig = None
    if out_tree == in_tree:
        promoted = promote_weak_carry(specs, out_types, out_weak)
        if promoted is not None:
            orig, specs = specs, promoted
            body, out_tree, out_types, out_weak = trace(specs)
    check_carry(names, in_tree, specs, out_tree, out_types, out_weak, orig)
    return body, specs, out_weak


def while_loop(cond_fun, body_fun, init_val):
    """Repeat `val = body_fun(val)` while `cond_fun(val)`; returns the final val.

    The carry (a pytree) must keep its structure, shapes and dtypes (JAX's rule: a
    weakly typed initial leaf, a Python scalar, takes the body's result type; nothing
    else is converted). Forward-mode differentiable; reverse mode needs a known trip
    count: use fori_loop with Python int bounds, or scan.

    Example:
        >>> body = lambda c: (c[0] + 1, c[1] * 2.0)
        >>> stablejit.while_loop(lambda c: c[0] < 5, body, (0, snp.asarray(1.0)))
        (Tensor<i64[] xla:host:0>
        5, Tensor<f32[] xla:host:0>
        32.)
    """
    _functions("while_loop", cond_fun=cond_fun, body_fun=body_fun)
    return _while_loop(cond_fun, body_fun, init_val, LoopNames("while_loop", "body_fun"))


def _while_body(body_fun, in_tree, specs, names):
    def trace(specs):
        body = _trace(body_fun, in_tree, specs, "while_body", spread=False)
        return body, body.out_tree, [v.type for v in body.fn.results], body.out_weak

    return _trace_loop(names, trace, in_tree, specs)


def _while_loop(cond_fun, body_fun, init_val, names: LoopNames):
    leaves, in_tree = tree.flatten(init_val)
    tensors = [_as_tensor(x) for x in leaves]
    specs = [(t.type, t.weak) for t in tensors]
    body, specs, out_weak = _while_body(body_fun, in_tree, specs, names)
    tensors = _promote(tensors, specs)
    cond_t = _trace(cond_fun, in_tree, specs, "while_cond", spread=False)
    if len(cond_t.fn.results) != 1 or cond_t.fn.results[0].type.shape != ():
        raise TypeError(at_user_line(
            f"while_loop: cond_fun must return one boolean scalar, it returns "
            f"{[v.type for v in cond_t.fn.results]}"))
    r = cond_t.fn.results[0]
    if r.type.dtype is not dt.bool_:
        raise TypeError(at_user_line(
            f"while_loop: cond_fun must return a boolean scalar, it returns {r.type}; "
            f"compare explicitly (x != 0)"))
    (cond_fn, body_fn), consts = _unify_params([cond_t, body], len(specs), consts_first=True)
    outs = bind(cf.while_, (*consts, *tensors), Attrs({"num_consts": len(consts)}),
                regions=(cond_fn, body_fn))
    # weak where the body's results are (the loop's type is the body's, as in JAX)
    return tree.unflatten(in_tree, _reweak(outs, out_weak))


def _promote(tensors, specs):
    return [t if t.type == ty else snp.astype(t, ty.dtype)
            for t, (ty, _) in zip(tensors, specs, strict=True)]


def _reweak(outs, weak):
    outs = list(outs)
    for o, w in zip(outs, weak, strict=True):
        o.weak = w
    return outs


def _static_int(x) -> bool:
    return isinstance(x, (numbers.Integral, np.integer)) and not isinstance(x, bool)


def _concrete_int(x) -> bool:
    """A bound whose value is known while tracing: a Python or NumPy int, or a 0-d integer
    tensor outside any trace (JAX's core.is_concrete)."""
    if isinstance(x, Tensor):
        return x._backend.concrete and x.shape == () and x.dtype.kind in "iu"
    return _static_int(x)


def _bounds_dtype(lower, upper):
    """JAX's rule for fori_loop's bounds: one dtype, except that a weakly typed bound (a
    Python int) pairs with a signed integer bound of another dtype, taking its dtype.
    Stablejit also requires integer scalars (JAX lets float bounds of one dtype by)."""
    lo, hi = (_scalar("fori_loop", n, b, "an integer") for n, b in (("lower", lower),
                                                                    ("upper", upper)))
    if lo.shape != () or hi.shape != () or lo.dtype.kind not in "iu" or \
            hi.dtype.kind not in "iu":
        raise TypeError(at_user_line(f"fori_loop: lower and upper must be integer scalars, "
                                     f"got {lo.type} and {hi.type}"))
    if lo.dtype is hi.dtype:
        return lo, hi, lo.dtype
    if lo.dtype.kind == "i" and hi.dtype.kind == "i" and lo.weak != hi.weak:
        return lo, hi, hi.dtype if lo.weak else lo.dtype
    if lo.weak or hi.weak:
        strong = hi.dtype.name if lo.weak else lo.dtype.name
        fix = (f"give the Python int bound as a {strong} too (snp.asarray(n, dtype={strong})), "
               f"or make the other bound a signed integer")
    else:
        fix = f"cast one with .astype({hi.dtype.name}) or .astype({lo.dtype.name})"
    names = [f"{'a Python int' if t.weak else t.dtype.name}" for t in (lo, hi)]
    raise TypeError(at_user_line(
        f"fori_loop: lower and upper must have the same dtype, got {names[0]} and "
        f"{names[1]} (as in jax.lax.fori_loop, where a Python int bound pairs only with a "
        f"signed integer bound): {fix}"))


def fori_loop(lower, upper, body_fun, init_val, *, unroll=None):
    """`for i in range(lower, upper): val = body_fun(i, val)`; returns val.

    With bounds known while tracing (Python ints, or concrete tensors outside jit) it is
    a scan of upper - lower steps with a Python int index (weakly typed), so reverse-mode
    gradients work (as in JAX); with traced bounds it is a while_loop and the index has
    the bounds' dtype. The carry follows while_loop's type rule. unroll (an int, or
    True for all steps) is scan's, so it needs bounds known while tracing, as in JAX.

    Example:
        >>> stablejit.fori_loop(0, 4, lambda i, acc: acc + i * i, snp.asarray(0.0))
        Tensor<f32[] xla:host:0>
        14.
    """
    _functions("fori_loop", body_fun=body_fun)
    lo, hi, d = _bounds_dtype(lower, upper)
    if _concrete_int(lower) and _concrete_int(upper):
        lower, upper = int(lower), int(upper)

        def step(carry, _):
            i, val = carry
            return (i + 1, body_fun(i, val)), None

        # the index is a weak int (a Python int), as in JAX: i * dt keeps dt's dtype
        (_, val), _ = _scan(step, (snp.asarray(lower), init_val), None,
                            max(0, upper - lower), False,
                            1 if unroll is None or unroll is False else unroll,
                            LoopNames("fori_loop", "body_fun", "init_val", 1))
        return val
    if unroll is not None and unroll is not False and unroll != 1:
        raise ValueError(at_user_line(
            f"fori_loop: unroll={unroll!r} needs bounds known while tracing (Python ints), "
            f"but lower or upper is traced here; pass the bounds as Python ints (a static "
            f"argument of jit), or leave unroll out"))
    lo, hi = snp.astype(lo, d), snp.astype(hi, d)

    def body(c):
        i, u, val = c
        return i + 1, u, body_fun(i, val)

    _, _, val = _while_loop(lambda c: c[0] < c[1], body, (lo, hi, init_val),
                            LoopNames("fori_loop", "body_fun", "init_val", 1))
    return val


def scan(f, init, xs=None, length=None, reverse=False, unroll=1):
    """Scan `f(carry, x) -> (carry, y)` over the leading axis of `xs`; returns
    (final carry, ys stacked on a new leading axis), like JAX's `lax.scan`.

    xs may be None (then `length` says how many steps). With reverse=True the steps
    run from the last slice to the first (ys keep their positions). unroll=k (an int,
    or True for all steps) runs k steps per loop iteration, as in JAX; the results
    are the same. The carry follows while_loop's type rule.

    Example:
        >>> def cumsum_step(carry, x):
        ...     carry = carry + x
        ...     return carry, carry
        >>> stablejit.scan(cumsum_step, snp.asarray(0.0), snp.asarray([1.0, 2.0, 3.0]))
        (Tensor<f32[] xla:host:0>
        6., Tensor<f32[3] xla:host:0>
        [1., 3., 6.])
    """
    _functions("scan", f=f)
    return _scan(f, init, xs, length, reverse, unroll, LoopNames("scan", "f"))


def _scan(f, init, xs, length, reverse, unroll, names: LoopNames):
    c_leaves, c_tree = tree.flatten(init)
    x_leaves, x_tree = tree.flatten(xs)
    carry = [_as_tensor(x) for x in c_leaves]
    xts = [_as_tensor(x) for x in x_leaves]
    lengths = {t.shape[0] if t.ndim else None for t in xts}
    if None in lengths:
        raise ValueError(at_user_line("scan: every leaf of xs needs a leading axis to scan "
                                      "over; got a 0-d tensor"))
    if length is not None:
        if not _static_int(length):
            raise TypeError(at_user_line(f"scan: length must be a Python int, got "
                                         f"{type(length).__name__}"))
        lengths.add(int(length))
    if len(lengths) > 1:
        paths = leaf_paths(x_tree)
        sizes = ", ".join(f"xs{p}: {t.shape[0]}" for p, t in zip(paths, xts, strict=True))
        raise ValueError(at_user_line(
            f"scan: the scanned leaves have different leading sizes ({sizes}"
            f"{', length: ' + str(length) if length is not None else ''}); they must agree"))
    if not lengths:
        raise ValueError(at_user_line("scan: with no xs to scan over, give length="))
    n = lengths.pop()
    k = _unroll_factor(unroll, n)
    if k > 1:
        return _unrolled_scan(f, init, xts, x_tree, n, k, reverse, names)
    c_specs = [(t.type, t.weak) for t in carry]
    x_specs = [(TensorType(t.shape[1:], t.dtype), t.weak) for t in xts]
    nk = len(c_specs)

    def split(out):
        if not (isinstance(out, (tuple, list)) and len(out) == 2):
            raise TypeError(at_user_line(
                f"{names.what}: {names.body} must return a pair (new carry, y); y may be "
                f"None"))
        return out[0], out[1]

    pair_tree = tree.flatten(((init, xs),))[1].children[0]

    def trace(specs):
        body = _trace(f, pair_tree, specs + x_specs, "scan_body", split)
        k_tree = body.out_tree.children[0]
        n_out = k_tree.num_leaves
        return (body, k_tree, [v.type for v in body.fn.results[:n_out]],
                body.out_weak[:n_out])

    body, specs, _ = _trace_loop(names, trace, c_tree, c_specs)
    y_tree = body.out_tree.children[1]
    carry = _promote(carry, specs)
    (body_f,), consts = _unify_params([body], len(specs) + len(x_specs), consts_first=True)
    attrs = Attrs({"num_consts": len(consts), "num_carry": nk, "length": n,
                   "reverse": bool(reverse)})
    outs = bind(cf.scan, (*consts, *carry, *xts), attrs, regions=(body_f,))
    # weak where the body's results are, the stacked ys included (as in JAX)
    outs = _reweak(outs, body.out_weak)
    return tree.unflatten(c_tree, outs[:nk]), tree.unflatten(y_tree, outs[nk:])


def _unroll_factor(unroll, n: int) -> int:
    if isinstance(unroll, bool):
        return n if unroll else 1
    if not _static_int(unroll) or unroll < 0:
        raise ValueError(at_user_line(
            f"scan: unroll must be a bool or a non-negative int, got {unroll!r}"))
    return min(int(unroll), n)


def _unrolled_scan(f, init, xts, x_tree, n: int, k: int, reverse: bool, names: LoopNames):
    """scan with k steps of f per loop iteration: a scan over the n // k blocks of k
    slices, then one over the n % k slices left (in the reverse order when reverse).
    Each step is the same f on the same values, so the results are the ones of the
    rolled loop."""
    m = n // k

    def blocks(lo, hi, size):
        return [snp.reshape(x[lo:hi], ((hi - lo) // size, size, *x.shape[1:])) for x in xts]

    def block_body(size):
        def body(carry, xb):
            ys = [None] * size
            for j in (range(size - 1, -1, -1) if reverse else range(size)):
                carry, ys[j] = f(carry, tree.unflatten(x_tree, [x[j] for x in xb]))
            leaves = [tree.flatten(y) for y in ys]
            stacked = [snp.stack([_as_tensor(ls[i]) for ls, _ in leaves])
                       for i in range(len(leaves[0][0]))]
            return carry, tree.unflatten(leaves[0][1], stacked)
        return body

    parts = [(0, m * k, k)] + ([(m * k, n, n - m * k)] if n > m * k else [])
    carry, ys = init, []
    for lo, hi, size in (reversed(parts) if reverse else parts):
        carry, y = _scan(block_body(size), carry, blocks(lo, hi, size), (hi - lo) // size,
                         reverse, 1, names)
        ys.append((lo, y))
    ys.sort(key=lambda p: p[0])
    y_leaves = [tree.flatten(y)[0] for _, y in ys]
    y_tree = tree.flatten(ys[0][1])[1]
    flat = [snp.reshape(leaf, (-1, *leaf.shape[2:])) for leaf in y_leaves[0]]
    if len(ys) > 1:
        rest = [snp.reshape(leaf, (-1, *leaf.shape[2:])) for leaf in y_leaves[1]]
        flat = [snp.concatenate([a, b]) for a, b in zip(flat, rest, strict=True)]
    return carry, tree.unflatten(y_tree, flat)
