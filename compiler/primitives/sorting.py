"""Sorting and scans: sort (multi-operand, stable, along one axis), top_k, and the
cumulative reductions cumsum, cumprod, cummax, cummin.

sort's comparator is generated from attributes (no user region): the first `num_keys`
operands are compared lexicographically, the rest ride along. Floats are ordered as
NumPy orders them: -0.0 == 0.0 and every NaN after +inf (the comparator canonicalises
both, then compares in total order). `descending` reverses the order, so NaNs come
first, while ties keep their original order when `is_stable`.

The scans are `stablehlo.reduce_window` with a window as long as the axis, padded on
one side: the form jax emits, which XLA rewrites into an efficient scan.
"""

from __future__ import annotations

import numpy as np

from .. import batch_rules as br
from .. import dtypes as dt
from ..emitter import i64_array
from ..errors import ShapeError
from ..ir import TensorType, scalar_type
from ..primitive import Primitive
from . import shape_ops
from .elementwise import _COMPARE_TYPE, check_kind
from .indexing import scatter_add_along_axis
from .reductions import _identity

# ---- sort ----------------------------------------------------------------------------


def _sort_rule(*xs, dimension, num_keys=1, descending=False, is_stable=True):
    if not xs:
        raise ShapeError("sort: needs at least one operand")
    first = xs[0]
    for i, x in enumerate(xs):
        if x.shape != first.shape:
            raise ShapeError(f"sort: operand {i} has shape {x.shape}, operand 0 has "
                             f"{first.shape}; all operands must have one shape")
    if first.ndim == 0:
        raise ShapeError("sort: operand 0 is a scalar; sort needs at least one axis")
    if not 0 <= dimension < first.ndim:
        raise ShapeError(f"sort: dimension {dimension} is out of range for operands of shape "
                         f"{first.shape}")
    if not 1 <= num_keys <= len(xs):
        raise ShapeError(f"sort: num_keys {num_keys} must be between 1 and the number of "
                         f"operands ({len(xs)})")
    for i, x in enumerate(xs[:num_keys]):
        if x.dtype.is_complex:
            raise ShapeError(f"sort: key operand {i} is complex, which has no order; sort "
                             f"by its real part or absolute value instead")
    return tuple(xs)


def _compare(ctx, a, b, direction, kind):
    ct = "TOTALORDER" if kind == "f" else _COMPARE_TYPE[kind]
    return ctx.op("stablehlo.compare", [a, b], [scalar_type(dt.bool_)],
                  f"comparison_direction = #stablehlo<comparison_direction {direction}>, "
                  f"compare_type = #stablehlo<comparison_type {ct}>")[0]


def _canonical(ctx, x, t: TensorType):
    """-0.0 -> 0.0 and every NaN -> +NaN, so a total-order compare orders as NumPy."""
    s = scalar_type(t.dtype)
    b = scalar_type(dt.bool_)

    def cmp(a, c, direction):
        return ctx.op("stablehlo.compare", [a, c], [b],
                      f"comparison_direction = #stablehlo<comparison_direction {direction}>, "
                      "compare_type = #stablehlo<comparison_type FLOAT>")[0]

    zero = ctx.constant(0.0, t.dtype)
    # select, not x + 0.0: XLA simplifies the addition away
    x = ctx.op("stablehlo.select", [cmp(x, zero, "EQ"), zero, x], [s])[0]
    return ctx.op("stablehlo.select", [cmp(x, x, "NE"), ctx.constant(np.nan, t.dtype), x],
                  [s])[0]


def _sort_emit(ctx, *xs):
    a = ctx.attrs
    types = ctx.in_types
    num_keys = a.get("num_keys", 1)
    before = "GT" if a.get("descending", False) else "LT"
    b = scalar_type(dt.bool_)

    def body(*args):
        result = None
        for i in reversed(range(num_keys)):
            t = types[i]
            lhs, rhs = args[2 * i], args[2 * i + 1]
            if t.dtype.is_float:
                lhs, rhs = _canonical(ctx, lhs, t), _canonical(ctx, rhs, t)
            first = _compare(ctx, lhs, rhs, before, t.dtype.kind)
            if result is not None:
                same = _compare(ctx, lhs, rhs, "EQ", t.dtype.kind)
                tie = ctx.op("stablehlo.and", [same, result], [b])[0]
                first = ctx.op("stablehlo.or", [first, tie], [b])[0]
            result = first
        return [result]

    arg_types = [s for t in types for s in (scalar_type(t.dtype),) * 2]
    region = ctx.region(arg_types, body)
    return ctx.op("stablehlo.sort", list(xs), ctx.out_types,
                  f"dimension = {a['dimension']} : i64, "
                  f"is_stable = {str(bool(a.get('is_stable', True))).lower()}",
                  regions=[region])


def _ranks(key: np.ndarray, descending: bool) -> np.ndarray:
    """Integer ranks that order as the comparator does (NaNs last, -0.0 == 0.0)."""
    if key.dtype.kind == "V":  # bfloat16: NumPy's sort misorders it around a NaN
        key = key.astype(np.float32)  # (exact)
    _, inv = np.unique(key.reshape(-1), return_inverse=True, equal_nan=True)
    inv = inv.reshape(key.shape).astype(np.int64)
    return -inv if descending else inv


def _sort_ref(*xs, dimension, num_keys=1, descending=False, is_stable=True):
    keys = [_ranks(np.moveaxis(x, dimension, -1), descending) for x in xs[:num_keys]]
    order = np.lexsort(keys[::-1], axis=-1)  # lexsort is stable; its last key is primary
    return tuple(np.moveaxis(np.take_along_axis(np.moveaxis(x, dimension, -1), order, -1),
                             -1, dimension) for x in xs)


def _sort_vjp(ops, cts, primals, outs, *, dimension, num_keys=1, descending=False,
              is_stable=True):
    if all(c is None for c in cts):
        return (None,) * len(primals)
    shape = primals[0].type.shape
    # sort once more with positions riding along: where each output element came from
    iota = ops.iota(shape, dt.int32, dimension)
    perm = ops.bind_many(sort, *primals[:num_keys], iota, dimension=dimension,
                         num_keys=num_keys, descending=descending, is_stable=True)[-1]
    return tuple(None if c is None or not p.type.dtype.is_inexact
                 else scatter_add_along_axis(ops, shape, perm, c, dimension)
                 for c, p in zip(cts, primals, strict=True))


sort = Primitive("sort", _sort_rule, _sort_emit, _sort_ref, vjp=_sort_vjp,
                 multiple_results=True, family="sorting")
sort.batch = br.leading(sort, axis_attrs=("dimension",))  # every operand gets the batch axis

# ---- top_k ---------------------------------------------------------------------------


def _top_k_rule(x, *, k):
    check_kind("top_k", x, "iuf")
    if x.ndim == 0:
        raise ShapeError("top_k: the operand is a scalar; top_k works along the last axis")
    if not 0 <= k <= x.shape[-1]:
        raise ShapeError(f"top_k: k={k} must be between 0 and the size of the last axis "
                         f"({x.shape[-1]}) of the operand {x}")
    shape = x.shape[:-1] + (k,)
    return TensorType(shape, x.dtype), TensorType(shape, dt.int32)


def _total_order_key(x: np.ndarray) -> np.ndarray:
    """Integers that order floats as XLA's total order (-NaN < -inf < -0 < 0 < inf < NaN)."""
    if x.dtype.kind != "f":
        return x
    bits = {2: np.int16, 4: np.int32, 8: np.int64}[x.dtype.itemsize]
    i = np.ascontiguousarray(x).view(bits).astype(np.int64)
    return np.where(i < 0, -(i & np.iinfo(bits).max) - 1, i)  # flip the negatives' order


def _top_k_ref(x, *, k):
    key = _total_order_key(x)
    key = key.astype(np.uint64 if key.dtype.kind == "u" else np.int64)
    order = np.argsort(~key, axis=-1, kind="stable")[..., :k]  # ~ reverses, stably
    return np.take_along_axis(x, order, -1), order.astype(np.int32)


def _top_k_vjp(ops, cts, primals, outs, *, k):
    ct, _ = cts
    (x,) = primals
    if ct is None or not x.type.dtype.is_inexact:
        return (None,)
    return (scatter_add_along_axis(ops, x.type.shape, outs[1], ct, x.type.ndim - 1),)


top_k = Primitive("top_k", _top_k_rule,
                  lambda ctx, x: ctx.op("chlo.top_k", [x], ctx.out_types,
                                        f"k = {ctx.attrs['k']} : i64"),
                  _top_k_ref, vjp=_top_k_vjp, multiple_results=True, family="sorting")
top_k.batch = br.leading(top_k)  # works on the last axis, so a leading one is free

# ---- cumulative reductions -----------------------------------------------------------

_SCAN_BODY = {"sum": "stablehlo.add", "prod": "stablehlo.multiply", "max": "stablehlo.maximum",
              "min": "stablehlo.minimum"}
_SCAN_NUMPY = {"sum": np.cumsum, "prod": np.cumprod, "max": np.maximum.accumulate,
               "min": np.minimum.accumulate}


def cumulative(kind: str, vjp) -> Primitive:
    name = f"cum{kind}"

    def shape_rule(x, *, axis, reverse=False):
        check_kind(name, x, "iufc" if kind in ("sum", "prod") else "iuf")
        if not 0 <= axis < x.ndim:
            raise ShapeError(f"{name}: axis {axis} is out of range for an operand of shape "
                             f"{x.shape}")
        return x

    def emit(ctx, x):
        t = ctx.in_types[0]
        axis, rev = ctx.attrs["axis"], ctx.attrs.get("reverse", False)
        s = scalar_type(t.dtype)
        n = t.shape[axis]
        window = [n if d == axis else 1 for d in range(t.ndim)]
        pads = [[0, 0] for _ in range(t.ndim)]
        pads[axis] = [0, n - 1] if rev else [n - 1, 0]
        init = _identity(kind, t.dtype)
        if kind == "sum" and t.dtype.is_inexact:  # -0.0 + x is x, also for x = -0.0
            init = complex(-0.0, -0.0) if t.dtype.is_complex else -0.0
        init = ctx.constant(init, t.dtype)
        region = ctx.region([s, s], lambda a, b: ctx.op(_SCAN_BODY[kind], [a, b], [s]))
        pad_text = ", ".join(f"[{lo}, {hi}]" for lo, hi in pads)
        return ctx.op("stablehlo.reduce_window", [x, init], ctx.out_types,
                      f"window_dimensions = {i64_array(window)}, "
                      f"window_strides = {i64_array([1] * t.ndim)}, "
                      f"padding = dense<[{pad_text}]> : tensor<{t.ndim}x2xi64>",
                      regions=[region])

    def reference(x, *, axis, reverse=False):
        with np.errstate(all="ignore"):
            if reverse:
                x = np.flip(x, axis)
            out = np.asarray(_SCAN_NUMPY[kind](x, axis=axis), dtype=x.dtype)
            return np.flip(out, axis) if reverse else out

    p = Primitive(name, shape_rule, emit, reference, vjp=vjp, family="sorting")
    p.batch = br.leading(p, axis_attrs=("axis",))
    return p


def _cumsum_vjp(ops, cts, primals, outs, *, axis, reverse=False):
    (ct,) = cts
    return (None if ct is None else ops.bind(cumsum, ct, axis=axis, reverse=not reverse),)


def _extremum_vjp(kind):
    def vjp(ops, cts, primals, outs, *, axis, reverse=False):
        (ct,), (x,), (out,) = cts, primals, outs
        if ct is None or not x.type.dtype.is_inexact:
            return (None,)
        # the element each output took its value from: the last i <= j (first i >= j when
        # reversed) where x[i] equals the running extremum
        n = x.type.shape[axis]
        iota = ops.iota(x.type.shape, dt.int32, axis)
        sentinel = ops.const(n if reverse else -1, dt.int32, x.type.shape)
        marked = ops.select(ops.eq(x, out), iota, sentinel)
        src = ops.bind(cummin if reverse else cummax, marked, axis=axis, reverse=reverse)
        return (scatter_add_along_axis(ops, x.type.shape, src, ct, axis),)
    return vjp


def _shift(ops, v, axis: int, s: int, fill):
    """v[i + s] along axis (s > 0), `fill` past the end."""
    t = v.type
    n = t.shape[axis]
    s = min(s, n)
    start = [0] * t.ndim
    start[axis] = s
    part = ops.bind(shape_ops.slice_, v, start=tuple(start), limit=t.shape,
                    strides=(1,) * t.ndim)
    high = [0] * t.ndim
    high[axis] = s
    return ops.bind(shape_ops.pad, part, ops.const(fill, t.dtype), low=(0,) * t.ndim,
                    high=tuple(high), interior=(0,) * t.ndim)


def _cumprod_vjp(ops, cts, primals, outs, *, axis, reverse=False):
    (ct,), (x,), (out,) = cts, primals, outs
    if ct is None or not x.type.dtype.is_inexact:
        return (None,)
    rev = shape_ops.reverse
    if reverse:  # solve the forward problem on reversed data
        ct, x, out = (ops.bind(rev, v, axes=(axis,)) for v in (ct, x, out))
    # d out[j] / d x[i] = prod_{k<=j, k!=i} x[k], without dividing (x may hold zeros):
    # g[i] = prod_{k<i} x[k] * h[i], with h[i] = ct[i] + x[i+1] * h[i+1], a linear
    # recurrence solved by log2(n) doubling steps
    n = x.type.shape[axis]
    a, h = _shift(ops, x, axis, 1, 0), ct
    s = 1
    while s < n:
        h = ops.add(h, ops.mul(a, _shift(ops, h, axis, s, 0)))
        a = ops.mul(a, _shift(ops, a, axis, s, 0))
        s *= 2
    before = ops.bind(rev, _shift(ops, ops.bind(rev, out, axes=(axis,)), axis, 1, 1),
                      axes=(axis,))  # exclusive product prod_{k<i} x[k]
    g = ops.mul(before, h)
    return (ops.bind(rev, g, axes=(axis,)) if reverse else g,)


cumsum = cumulative("sum", _cumsum_vjp)
cumprod = cumulative("prod", _cumprod_vjp)
cummax = cumulative("max", _extremum_vjp("max"))
cummin = cumulative("min", _extremum_vjp("min"))

PRIMITIVES = [sort, top_k, cumsum, cumprod, cummax, cummin]
