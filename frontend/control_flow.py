"""Structured control flow: cond, switch, while_loop, fori_loop, scan.

Each branch or body is traced into an IR Function by a nested trace (a `RegionTrace`);
the primitive (`cond`, `while`, `scan` in compiler/primitives/control_flow.py) is then
bound with those Functions as its regions on the current backend: recorded inside jit,
compiled and run at once on the eager XLA backend, interpreted on the reference backend.

Closures work: a body may use tensors from outside it (values of an enclosing trace, or
concrete tensors). Its trace lifts each such tensor to an extra parameter of the region,
and the tensor becomes an extra operand of the op, so regions stay closed.

The carries and operands are pytrees. A branch (or loop body) that returns a different
structure, shape or dtype than its peer (or than the loop carry) is an error naming the
pytree leaf and both types, at the line that called cond / while_loop / scan. A Python
scalar returned where a tensor of another dtype is expected (a weak type) is converted,
as in JAX.
"""

from __future__ import annotations

import numbers

import numpy as np

from . import numpy as snp
from . import tree, writes
from .compiler import dtypes as dt
from .compiler.errors import ShapeError
from .compiler.ir import Attrs, Function, TensorType, Value
from .compiler.primitives import control_flow as cf
from .compiler.primitives import elementwise as ew
from .context import using_backend
from .dispatch import bind
from .errors import at_user_line
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
        if isinstance(t._backend, Trace) and not t._backend.alive:
            raise escaped_error()
        v = self._captured_ids.get(id(t))
        if v is None:
            if t._backend.concrete:
                writes.note_read(t)
            v = self.builder.param(t.type)
            self.captured.append((t, v))
            self._captured_ids[id(t)] = v
        return v


class _Traced:
    """One traced body: its Function (params: inputs, then captures), output structure,
    output weakness and the outside tensors it captured."""

    __slots__ = ("fn", "out_tree", "out_weak", "captured", "builder")

    def __init__(self, fn, out_tree, out_weak, captured, builder):
        self.fn, self.out_tree, self.out_weak = fn, out_tree, out_weak
        self.captured, self.builder = captured, builder


def _as_tensor(x) -> Tensor:
    return x if isinstance(x, Tensor) else snp.asarray(x)


def _trace(fun, in_tree, specs, name: str, split_output=None, spread=True) -> _Traced:
    """Trace `fun(*unflatten(in_tree, inputs))` (`fun(unflatten(...))` when not `spread`)
    with abstract inputs of `specs` (a list of (TensorType, weak)). `split_output` maps
    the return value to the pytree to flatten."""
    tr = RegionTrace(name)
    ins = [tr.new_arg(t, w) for t, w in specs]
    try:
        with using_backend(tr):
            args = tree.unflatten(in_tree, ins)
            out = fun(*args) if spread else fun(args)
            if split_output is not None:
                out = split_output(out)
            leaves, out_tree = tree.flatten(out)
            values, weak = [], []
            for leaf in leaves:
                if not isinstance(leaf, Tensor):
                    try:
                        leaf = _as_tensor(leaf)
                    except TypeError:
                        raise TypeError(at_user_line(
                            f"{name} returned a {type(leaf).__name__} leaf; bodies of "
                            f"control flow must return tensors, numbers or pytrees of "
                            f"them")) from None
                values.append(tr.value_of(leaf))
                weak.append(leaf.weak)
    finally:
        tr.finish()
    n_in = len(specs)
    params = tr.builder.params
    fn = Function(name, params, tr.builder.ops, values)
    assert len(params) == n_in + len(tr.captured)
    return _Traced(fn, out_tree, weak, [t for t, _ in tr.captured], tr.builder)


# ---- pytree paths and type checks ---------------------------------------------------------

def leaf_paths(td) -> list[str]:
    """A readable path for each leaf of a TreeDef: [0], ['key'], .field."""
    return [tree.keystr(p) or "(the value itself)" for p in td.leaf_paths()]


def _fix_weak(traced: _Traced, i: int, target: TensorType) -> bool:
    """Convert output leaf i of a body to `target`'s dtype when the leaf is a weakly
    typed value (a Python scalar) of the same shape. Returns whether it did."""
    v = traced.fn.results[i]
    if not traced.out_weak[i] or v.type.shape != target.shape:
        return False
    (c,) = traced.builder.bind(ew.convert, (v,), Attrs({"dtype": target.dtype}),
                               out_types=(target,))
    results = list(traced.fn.results)
    results[i] = c
    f = traced.fn
    traced.fn = Function(f.name, f.params, traced.builder.ops, results)
    traced.out_weak[i] = False
    return True


def _unify_params(traced: list[_Traced], n_lead: int, consts_first: bool
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


def _describe_tree(td) -> str:
    return repr(td)


# ---- cond / switch -------------------------------------------------------------------------

def cond(pred, true_fn, false_fn, *operands):
    """`true_fn(*operands)` if pred else `false_fn(*operands)`, as one compiled op.

    pred is a scalar (bool, or a number compared with 0). Both functions must return
    the same pytree structure with the same shapes and dtypes. Only the chosen branch
    runs (unlike `where`). Differentiable in both modes."""
    p = _as_tensor(pred)
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
    JAX's `lax.switch`. All branches must return the same structure, shapes and dtypes."""
    branches = list(branches)
    if not branches:
        raise ValueError(at_user_line("switch: needs at least one branch"))
    i = _as_tensor(index)
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
    first = traced[0]
    for k, t in enumerate(traced[1:], 1):
        if t.out_tree != first.out_tree:
            raise TypeError(at_user_line(
                f"{what}: {names[k]} returns a {_describe_tree(t.out_tree)} but {names[0]} "
                f"returns a {_describe_tree(first.out_tree)}; every branch must return the "
                f"same pytree structure"))
    paths = leaf_paths(first.out_tree)
    for i, path in enumerate(paths):
        types = [t.fn.results[i].type for t in traced]
        if all(ty == types[0] for ty in types):
            continue
        strong = {ty for t, ty in zip(traced, types, strict=True) if not t.out_weak[i]}
        target = strong.pop() if len(strong) == 1 else None
        if target is not None:
            for t, ty in zip(traced, types, strict=True):
                if ty != target:
                    _fix_weak(t, i, target)
        types = [t.fn.results[i].type for t in traced]
        bad = next((k for k, ty in enumerate(types) if ty != types[0]), None)
        if bad is not None:
            raise ShapeError(at_user_line(
                f"{what}: output leaf {path} differs between branches: {names[0]} returns "
                f"{types[0]}, {names[bad]} returns {types[bad]}. Every branch must return "
                f"the same shapes and dtypes (convert with .astype(...), or broadcast)"))
    fns_u, captured = _unify_params(traced, len(specs), consts_first=False)
    outs = bind(cf.cond, (index, *tensors, *captured), Attrs(), regions=tuple(fns_u))
    outs = list(outs)
    for i, o in enumerate(outs):
        if all(t.out_weak[i] for t in traced):
            o.weak = True
    return tree.unflatten(first.out_tree, outs)


# ---- loops ---------------------------------------------------------------------------------

class CarryTypeError(ShapeError):
    """A loop body returned a carry leaf of another type than the one it got; fori_loop
    reports it in its own terms (it runs as a scan or a while_loop)."""

    def __init__(self, what: str, body_name: str, leaf: int, path: str, t_in, t_out):
        self.leaf, self.t_in, self.t_out = leaf, t_in, t_out
        super().__init__(at_user_line(carry_type_message(what, body_name, path, t_in, t_out)))


def carry_type_message(what, body_name, path, t_in, t_out) -> str:
    if t_in.shape != t_out.shape:
        fix = (f"make {body_name} return shape {t_in.shape} there, or start the loop from a "
               f"value of shape {t_out.shape}")
    else:
        fix = (f"convert in {body_name} with .astype({t_in.dtype.name}), or start the loop "
               f"from a {t_out.dtype.name} value")
    return (f"{what}: {body_name} changes the type of carry leaf {path}: it enters the loop "
            f"as {t_in} and {body_name} returns {t_out}. The carry must keep its shape and "
            f"dtype: {fix}")


def _check_carry(what: str, body: _Traced, specs, in_tree, paths, body_name: str):
    """Body outputs must match the carry. Returns the index of a carry leaf whose weak
    input type should be promoted to the body's output type (then the caller traces
    again), or None when everything matches (after converting weak outputs)."""
    if body.out_tree != in_tree:
        raise TypeError(at_user_line(
            f"{what}: {body_name} returns a {_describe_tree(body.out_tree)}, but the loop "
            f"carry is a {_describe_tree(in_tree)}; the body must return the carry's "
            f"structure"))
    for i, ((t_in, weak_in), path) in enumerate(zip(specs, paths, strict=True)):
        t_out = body.fn.results[i].type
        if t_out == t_in:
            continue
        if _fix_weak(body, i, t_in):
            continue
        if weak_in and t_out.shape == t_in.shape:
            return i
        raise CarryTypeError(what, body_name, i, path, t_in, t_out)
    return None


def _trace_body(what, fun, in_tree, specs, name, body_name):
    paths = leaf_paths(in_tree)
    for _ in range(len(specs) + 1):
        body = _trace(fun, in_tree, specs, name, spread=False)
        promote = _check_carry(what, body, specs, in_tree, paths, body_name)
        if promote is None:
            return body, specs
        # a weakly typed initial value (a Python scalar) takes the body's dtype
        specs = list(specs)
        specs[promote] = (body.fn.results[promote].type, False)
    raise AssertionError("carry types did not settle")


def while_loop(cond_fun, body_fun, init_val):
    """Repeat `val = body_fun(val)` while `cond_fun(val)`; returns the final val.

    The carry (a pytree) must keep its structure, shapes and dtypes. Forward-mode
    differentiable; reverse mode needs a known trip count: use fori_loop with Python
    int bounds, or scan."""
    leaves, in_tree = tree.flatten(init_val)
    tensors = [_as_tensor(x) for x in leaves]
    specs = [(t.type, t.weak) for t in tensors]
    body, specs = _trace_body("while_loop", body_fun, in_tree, specs, "while_body",
                              "body_fun")
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
    return tree.unflatten(in_tree, _reweak(outs, specs))


def _promote(tensors, specs):
    return [t if t.type == ty else snp.astype(t, ty.dtype)
            for t, (ty, _) in zip(tensors, specs, strict=True)]


def _reweak(outs, specs):
    outs = list(outs)
    for o, (_, w) in zip(outs, specs, strict=True):
        o.weak = w
    return outs


def _static_int(x) -> bool:
    return isinstance(x, (numbers.Integral, np.integer)) and not isinstance(x, bool)


def fori_loop(lower, upper, body_fun, init_val):
    """`for i in range(lower, upper): val = body_fun(i, val)`; returns val.

    With Python int bounds it is a scan of upper - lower steps, so reverse-mode
    gradients work (as in JAX); with traced bounds it is a while_loop."""
    if _static_int(lower) and _static_int(upper):
        lower, upper = int(lower), int(upper)

        def step(carry, _):
            i, val = carry
            return (i + 1, body_fun(i, val)), None

        # the index is a weak int (a Python int), as in JAX: i * dt keeps dt's dtype
        try:
            (_, val), _ = scan(step, (snp.asarray(lower), init_val), None,
                               length=max(0, upper - lower))
        except CarryTypeError as e:
            raise _fori_carry_error(e, init_val, 1) from None
        return val
    lo, hi = _as_tensor(lower), _as_tensor(upper)
    if lo.shape != () or hi.shape != () or lo.dtype.kind not in "iu" or \
            hi.dtype.kind not in "iu":
        raise TypeError(at_user_line(f"fori_loop: lower and upper must be integer scalars, "
                                     f"got {lo.type} and {hi.type}"))
    d = snp.result_type(lo, hi)
    lo, hi = snp.astype(lo, d), snp.astype(hi, d)

    def body(c):
        i, u, val = c
        return i + 1, u, body_fun(i, val)

    try:
        _, _, val = while_loop(lambda c: c[0] < c[1], body, (lo, hi, init_val))
    except CarryTypeError as e:
        raise _fori_carry_error(e, init_val, 2) from None
    return val


def _fori_carry_error(e: CarryTypeError, init_val, n_lead: int) -> ShapeError:
    """A carry type error of the scan or while_loop that runs a fori_loop, told in
    fori_loop's terms: its body_fun and the leaf of init_val (the loop's own leading
    carries, the index and bound, never change type)."""
    paths = leaf_paths(tree.flatten(init_val)[1])
    path = "init_val" + paths[e.leaf - n_lead].replace("(the value itself)", "")
    return ShapeError(at_user_line(carry_type_message(
        "fori_loop", "body_fun", path, e.t_in, e.t_out)))


def scan(f, init, xs=None, length=None, reverse=False, unroll=1):
    """Scan `f(carry, x) -> (carry, y)` over the leading axis of `xs`; returns
    (final carry, ys stacked on a new leading axis), like JAX's `lax.scan`.

    xs may be None (then `length` says how many steps). With reverse=True the steps
    run from the last slice to the first (ys keep their positions). unroll=k (an int,
    or True for all steps) runs k steps per loop iteration, as in JAX; the results
    are the same."""
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
        return _unrolled_scan(f, init, xts, x_tree, n, k, reverse)
    c_specs = [(t.type, t.weak) for t in carry]
    x_specs = [(TensorType(t.shape[1:], t.dtype), t.weak) for t in xts]
    nk = len(c_specs)

    def split(out):
        if not (isinstance(out, (tuple, list)) and len(out) == 2):
            raise TypeError(at_user_line(
                "scan: f must return a pair (new carry, y); y may be None"))
        return out[0], out[1]

    def body_fn(c, x):
        return f(c, x)

    pair_tree = tree.flatten(((init, xs),))[1].children[0]
    paths = leaf_paths(c_tree)
    specs = c_specs
    for _ in range(nk + 1):
        body = _trace(body_fn, pair_tree, specs + x_specs, "scan_body", split)
        k_tree, y_tree = body.out_tree.children
        carry_view = _Traced(Function("", body.fn.params, body.fn.ops, body.fn.results[:nk]),
                             k_tree, body.out_weak[:nk], body.captured, body.builder)
        promote = _check_carry("scan", carry_view, specs, c_tree, paths, "f")
        # weak conversions made on the view carry over to the body
        results = list(carry_view.fn.results) + list(body.fn.results[nk:])
        body.fn = Function(body.fn.name, body.fn.params, body.builder.ops, results)
        if promote is None:
            break
        specs = list(specs)
        specs[promote] = (body.fn.results[promote].type, False)
    carry = _promote(carry, specs)
    (body_f,), consts = _unify_params([body], len(specs) + len(x_specs), consts_first=True)
    attrs = Attrs({"num_consts": len(consts), "num_carry": nk, "length": n,
                   "reverse": bool(reverse)})
    outs = bind(cf.scan, (*consts, *carry, *xts), attrs, regions=(body_f,))
    c_out = _reweak(outs[:nk], specs)
    return tree.unflatten(c_tree, c_out), tree.unflatten(y_tree, list(outs[nk:]))


def _unroll_factor(unroll, n: int) -> int:
    if isinstance(unroll, bool):
        return n if unroll else 1
    if not _static_int(unroll) or unroll < 0:
        raise ValueError(at_user_line(
            f"scan: unroll must be a bool or a non-negative int, got {unroll!r}"))
    return min(int(unroll), n)


def _unrolled_scan(f, init, xts, x_tree, n: int, k: int, reverse: bool):
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
        carry, y = scan(block_body(size), carry, blocks(lo, hi, size), length=(hi - lo) // size,
                        reverse=reverse)
        ys.append((lo, y))
    ys.sort(key=lambda p: p[0])
    y_leaves = [tree.flatten(y)[0] for _, y in ys]
    y_tree = tree.flatten(ys[0][1])[1]
    flat = [snp.reshape(leaf, (-1, *leaf.shape[2:])) for leaf in y_leaves[0]]
    if len(ys) > 1:
        rest = [snp.reshape(leaf, (-1, *leaf.shape[2:])) for leaf in y_leaves[1]]
        flat = [snp.concatenate([a, b]) for a, b in zip(flat, rest, strict=True)]
    return carry, tree.unflatten(y_tree, flat)
