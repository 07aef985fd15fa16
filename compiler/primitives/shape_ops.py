"""Primitives that move data without arithmetic: constant, iota, broadcast_in_dim,
reshape, transpose, slice, dynamic_slice, dynamic_update_slice, concatenate, pad,
reverse.
"""

from __future__ import annotations

import functools

import numpy as np

from .. import batch_rules as br
from .. import dtypes as dt
from ..emitter import dense_text, i64_array
from ..errors import ShapeError
from ..ir import Attrs, TensorType
from ..primitive import NO_OPERANDS, NOT_DIFFERENTIABLE, Primitive
from ..symbolic import DimExpr


def _axes_ok(opname: str, axes, ndim: int, what: str = "axis") -> None:
    for a in axes:
        if not 0 <= a < ndim:
            raise ShapeError(f"{opname}: {what} {a} is out of range for a rank-{ndim} operand")


# ---- constant, iota ------------------------------------------------------------------

def _constant_rule(*, value):
    return TensorType(value.array.shape, dt.dtype(value.array.dtype))


def _constant_emit(ctx):
    t = ctx.out_types[0]
    return ctx.op("stablehlo.constant", [], [t],
                  f"value = {dense_text(ctx.attrs['value'].array, t.dtype)} : {t.mlir()}")


constant = Primitive("constant", _constant_rule, _constant_emit,
                     lambda *, value: value.array, vjp=NOT_DIFFERENTIABLE, family="shape")


def _iota_rule(*, shape, dtype, dimension):
    _axes_ok("iota", [dimension], len(shape), "dimension")
    if dtype.kind == "b":
        raise ShapeError("iota: dtype must be numeric, not bool")
    return TensorType(shape, dtype)


def _iota_ref(*, shape, dtype, dimension):
    a = np.arange(shape[dimension], dtype=dtype.np)
    idx = [None] * len(shape)
    idx[dimension] = slice(None)
    return np.broadcast_to(a[tuple(idx)], shape).copy()


iota = Primitive("iota", _iota_rule,
                 lambda ctx: ctx.op("stablehlo.iota", [], ctx.out_types,
                                    f"iota_dimension = {ctx.attrs['dimension']} : i64"),
                 _iota_ref, vjp=NOT_DIFFERENTIABLE, family="shape")

# ---- broadcast, reshape, transpose ---------------------------------------------------


def _same_op_jvp(prim):
    """jvp of an op linear in its one operand: the op applied to the tangent."""
    def jvp(ops, tangents, primals, outs, **attrs):
        return (ops.bind(prim, tangents[0], **attrs),)
    return jvp



def _broadcast_rule(x, *, shape, broadcast_dimensions):
    dims = broadcast_dimensions
    if len(dims) != x.ndim:
        raise ShapeError(f"broadcast_in_dim: operand of rank {x.ndim} needs {x.ndim} "
                         f"broadcast_dimensions, got {dims}")
    _axes_ok("broadcast_in_dim", dims, len(shape), "broadcast dimension")
    if list(dims) != sorted(set(dims)):
        raise ShapeError(f"broadcast_in_dim: broadcast_dimensions {dims} must be increasing")
    for i, d in enumerate(dims):
        if x.shape[i] not in (1, shape[d]):
            raise ShapeError(f"broadcast_in_dim: cannot broadcast operand shape {x.shape} to "
                             f"{tuple(shape)} (dimension {i} has size {x.shape[i]}, target "
                             f"size {shape[d]})")
    return TensorType(shape, x.dtype)


def _broadcast_ref(x, *, shape, broadcast_dimensions):
    expanded = [1] * len(shape)
    for i, d in enumerate(broadcast_dimensions):
        expanded[d] = x.shape[i]
    return np.broadcast_to(x.reshape(expanded), shape)


broadcast_in_dim = Primitive(
    "broadcast_in_dim", _broadcast_rule,
    lambda ctx, x: ctx.op("stablehlo.broadcast_in_dim", [x], ctx.out_types,
                          "broadcast_dimensions = "
                          + i64_array(ctx.attrs["broadcast_dimensions"])),
    _broadcast_ref, family="shape")


def _broadcast_vjp(ops, cts, primals, outs, *, shape, broadcast_dimensions):
    (ct,), (x,) = cts, primals
    dims = broadcast_dimensions
    axes = [d for d in range(len(shape)) if d not in dims]
    axes += [d for i, d in enumerate(dims) if x.type.shape[i] == 1 and shape[d] != 1]
    return (ops.reshape(ops.reduce_sum(ct, sorted(axes)), x.type.shape),)


broadcast_in_dim.vjp = _broadcast_vjp
broadcast_in_dim.jvp = _same_op_jvp(broadcast_in_dim)


@functools.lru_cache(maxsize=1024)
def trailing_broadcast(ndim: int, shape: tuple[int, ...]) -> Attrs:
    """broadcast_in_dim's attributes for NumPy broadcasting: an operand of rank `ndim`
    aligned with the trailing axes of `shape` (cached: eager ops ask on every call)."""
    return Attrs({"shape": shape,
                  "broadcast_dimensions": tuple(range(len(shape) - ndim, len(shape)))})


def _reshape_rule(x, *, shape):
    t = TensorType(shape, x.dtype)
    if t.size != x.size:
        raise ShapeError(f"reshape: cannot reshape {x.shape} ({x.size} elements) to "
                         f"{tuple(shape)} ({t.size} elements)")
    return t


reshape = Primitive("reshape", _reshape_rule,
                    lambda ctx, x: ctx.op("stablehlo.reshape", [x], ctx.out_types),
                    lambda x, *, shape: np.reshape(x, shape), family="shape")
reshape.vjp = lambda ops, cts, primals, outs, *, shape: (
    ops.reshape(cts[0], primals[0].type.shape),)
reshape.jvp = _same_op_jvp(reshape)


def _transpose_rule(x, *, permutation):
    if sorted(permutation) != list(range(x.ndim)):
        raise ShapeError(f"transpose: {permutation} is not a permutation of the "
                         f"{x.ndim} axes of an operand of shape {x.shape}")
    return TensorType([x.shape[p] for p in permutation], x.dtype)


transpose = Primitive(
    "transpose", _transpose_rule,
    lambda ctx, x: ctx.op("stablehlo.transpose", [x], ctx.out_types,
                          "permutation = " + i64_array(ctx.attrs["permutation"])),
    lambda x, *, permutation: np.transpose(x, permutation), family="shape")
transpose.vjp = lambda ops, cts, primals, outs, *, permutation: (
    ops.transpose(cts[0], tuple(int(i) for i in np.argsort(permutation))),)
transpose.jvp = _same_op_jvp(transpose)

# ---- slicing -------------------------------------------------------------------------


def _slice_rule(x, *, start, limit, strides):
    if not len(start) == len(limit) == len(strides) == x.ndim:
        raise ShapeError(f"slice: start/limit/strides need one entry per axis of {x.shape}")
    out = []
    for i, (s, l, st, n) in enumerate(zip(start, limit, strides, x.shape, strict=True)):
        if not (0 <= s <= l <= n) or st < 1:
            raise ShapeError(f"slice: axis {i}: [{s}:{l}:{st}] is not within 0..{n}")
        out.append(max(0, -(-(l - s) // st)))
    return TensorType(out, x.dtype)


def _slice_emit(ctx, x):
    start, limit, strides = (ctx.attrs[k] for k in ("start", "limit", "strides"))
    if any(type(v) is DimExpr for v in (*start, *limit)):  # known when an export runs
        bounds = [ctx.dims_operand(v) for v in (start, limit, strides)]
        return ctx.op("stablehlo.real_dynamic_slice", [x, *bounds], ctx.out_types)
    return ctx.op("stablehlo.slice", [x], ctx.out_types,
                  f"start_indices = {i64_array(start)}, limit_indices = {i64_array(limit)}, "
                  f"strides = {i64_array(strides)}")


slice_ = Primitive(
    "slice", _slice_rule, _slice_emit,
    lambda x, *, start, limit, strides: x[tuple(
        slice(s, l, st) for s, l, st in zip(start, limit, strides, strict=True))],
    family="shape")


def _slice_vjp(ops, cts, primals, outs, *, start, limit, strides):
    (ct,), (x,) = cts, primals
    if ct.type.size == 0:
        return (ops.zeros_like(x),)
    high = [n - s - (k - 1) * st - 1 for n, s, k, st in zip(x.type.shape, start,
                                                           ct.type.shape, strides, strict=True)]
    zero = ops.const(0, ct.type.dtype)
    return (ops.bind(pad, ct, zero, low=tuple(start), high=tuple(high),
                     interior=tuple(st - 1 for st in strides)),)


slice_.vjp = _slice_vjp
slice_.jvp = _same_op_jvp(slice_)


def _index_operands(opname: str, x: TensorType, starts) -> None:
    if len(starts) != x.ndim:
        raise ShapeError(f"{opname}: needs {x.ndim} start indices for an operand of shape "
                         f"{x.shape}, got {len(starts)}")
    for i, s in enumerate(starts):
        if s.shape != () or not s.dtype.is_integer:
            raise ShapeError(f"{opname}: start index {i} must be an integer scalar, got {s}")
        if s.dtype is not starts[0].dtype:
            raise ShapeError(f"{opname}: start indices must share one dtype")


def _dynamic_slice_rule(x, *starts, sizes):
    _index_operands("dynamic_slice", x, starts)
    if len(sizes) != x.ndim or any(not 0 <= s <= n for s, n in zip(sizes, x.shape, strict=True)):
        raise ShapeError(f"dynamic_slice: slice sizes {sizes} do not fit operand {x.shape}")
    return TensorType(sizes, x.dtype)


def _clamped_starts(shape, sizes, starts):
    # StableHLO clamps start indices so the window stays inside the operand
    return [int(min(max(int(s), 0), n - k)) for s, n, k in zip(starts, shape, sizes, strict=True)]


def _dynamic_slice_ref(x, *starts, sizes):
    st = _clamped_starts(x.shape, sizes, starts)
    return x[tuple(slice(s, s + k) for s, k in zip(st, sizes, strict=True))]


dynamic_slice = Primitive(
    "dynamic_slice", _dynamic_slice_rule,
    lambda ctx, x, *starts: ctx.dynamic_slice(x, starts, ctx.out_types[0]),
    _dynamic_slice_ref, family="shape")
dynamic_slice.vjp = lambda ops, cts, primals, outs, *, sizes: (
    ops.bind(dynamic_update_slice, ops.zeros_like(primals[0]), cts[0], *primals[1:]),
    *[None] * (len(primals) - 1))
dynamic_slice.jvp = lambda ops, tangents, primals, outs, *, sizes: (
    ops.bind(dynamic_slice, tangents[0], *primals[1:], sizes=sizes),)


def _dus_rule(x, update, *starts):
    _index_operands("dynamic_update_slice", x, starts)
    if update.dtype is not x.dtype or update.ndim != x.ndim or any(
            u > n for u, n in zip(update.shape, x.shape, strict=True)):
        raise ShapeError(f"dynamic_update_slice: update {update} does not fit into operand {x}")
    return x


def _dus_ref(x, update, *starts):
    st = _clamped_starts(x.shape, update.shape, starts)
    out = np.array(x, copy=True)
    out[tuple(slice(s, s + k) for s, k in zip(st, update.shape, strict=True))] = update
    return out


dynamic_update_slice = Primitive(
    "dynamic_update_slice", _dus_rule,
    lambda ctx, x, u, *starts: ctx.op("stablehlo.dynamic_update_slice", [x, u, *starts],
                                      ctx.out_types),
    _dus_ref, family="shape")


def _dus_vjp(ops, cts, primals, outs):
    (ct,), (_, update, *starts) = cts, primals
    return (ops.bind(dynamic_update_slice, ct, ops.zeros_like(update), *starts),
            ops.bind(dynamic_slice, ct, *starts, sizes=update.type.shape),
            *[None] * len(starts))


def _dus_jvp(ops, tangents, primals, outs):
    tx, tu = tangents[:2]
    x, update, *starts = primals
    return (ops.bind(dynamic_update_slice, tx if tx is not None else ops.zeros_like(x),
                     tu if tu is not None else ops.zeros_like(update), *starts),)


dynamic_update_slice.vjp = _dus_vjp
dynamic_update_slice.jvp = _dus_jvp

# ---- concatenate, pad, reverse -------------------------------------------------------


def _concat_rule(*xs, dimension):
    if not xs:
        raise ShapeError("concatenate: needs at least one operand")
    first = xs[0]
    _axes_ok("concatenate", [dimension], first.ndim)
    total = 0
    for i, x in enumerate(xs):
        if x.dtype is not first.dtype:
            raise ShapeError(f"concatenate: operand {i} has dtype {x.dtype.name}, operand 0 "
                             f"has {first.dtype.name}")
        if x.ndim != first.ndim or any(a != b for j, (a, b) in enumerate(
                zip(x.shape, first.shape, strict=True)) if j != dimension):
            raise ShapeError(f"concatenate: operand {i} has shape {x.shape}, which does not "
                             f"match operand 0's {first.shape} outside axis {dimension}")
        total += x.shape[dimension]
    shape = list(first.shape)
    shape[dimension] = total
    return TensorType(shape, first.dtype)


concatenate = Primitive(
    "concatenate", _concat_rule,
    lambda ctx, *xs: ctx.op("stablehlo.concatenate", list(xs), ctx.out_types,
                            f"dimension = {ctx.attrs['dimension']} : i64"),
    lambda *xs, dimension: np.concatenate(xs, axis=dimension), family="shape")


def _concat_vjp(ops, cts, primals, outs, *, dimension):
    (ct,), grads, at = cts, [], 0
    for x in primals:
        n = x.type.shape[dimension]
        start = [0] * ct.type.ndim
        limit = list(ct.type.shape)
        start[dimension], limit[dimension] = at, at + n
        grads.append(ops.bind(slice_, ct, start=tuple(start), limit=tuple(limit),
                              strides=(1,) * ct.type.ndim))
        at += n
    return tuple(grads)


concatenate.vjp = _concat_vjp
concatenate.jvp = lambda ops, tangents, primals, outs, *, dimension: (ops.bind(
    concatenate, *[t if t is not None else ops.zeros_like(x)
                   for t, x in zip(tangents, primals, strict=True)], dimension=dimension),)


def _pad_rule(x, value, *, low, high, interior):
    if value.shape != () or value.dtype is not x.dtype:
        raise ShapeError(f"pad: padding value must be a {x.dtype.short}[] scalar, got {value}")
    if not len(low) == len(high) == len(interior) == x.ndim:
        raise ShapeError(f"pad: low/high/interior need one entry per axis of {x.shape}")
    out = []
    for n, lo, hi, it in zip(x.shape, low, high, interior, strict=True):
        if it < 0:
            raise ShapeError("pad: interior padding must be non-negative")
        size = lo + hi + n + max(n - 1, 0) * it
        if size < 0:
            raise ShapeError(f"pad: negative padding removes more than axis size {n}")
        out.append(size)
    return TensorType(out, x.dtype)


def _pad_ref(x, value, *, low, high, interior):
    shape = [n + max(n - 1, 0) * it for n, it in zip(x.shape, interior, strict=True)]
    inner = np.full(shape, value, dtype=x.dtype)
    inner[tuple(slice(None, None, it + 1) for it in interior)] = x
    pos = [(max(lo, 0), max(hi, 0)) for lo, hi in zip(low, high, strict=True)]
    padded = np.pad(inner, pos, constant_values=value)
    crop = tuple(slice(max(-lo, 0), padded.shape[i] - max(-hi, 0))
                 for i, (lo, hi) in enumerate(zip(low, high, strict=True)))
    return padded[crop]


pad = Primitive(
    "pad", _pad_rule,
    lambda ctx, x, v: ctx.op("stablehlo.pad", [x, v], ctx.out_types,
                             f"edge_padding_low = {i64_array(ctx.attrs['low'])}, "
                             f"edge_padding_high = {i64_array(ctx.attrs['high'])}, "
                             f"interior_padding = {i64_array(ctx.attrs['interior'])}"),
    _pad_ref, family="shape")


def _pad_vjp(ops, cts, primals, outs, *, low, high, interior):
    """Undo the edge padding (negative padding crops), then take every (interior+1)-th
    element; the padding value gets what is left (as JAX's pad transpose)."""
    (ct,) = cts
    zero = ops.const(0, ct.type.dtype)
    unpadded = ops.bind(pad, ct, zero, low=tuple(-lo for lo in low),
                        high=tuple(-hi for hi in high), interior=(0,) * len(low))
    g_x = ops.bind(slice_, unpadded, start=(0,) * len(low), limit=unpadded.type.shape,
                   strides=tuple(i + 1 for i in interior))
    every = tuple(range(ct.type.ndim))
    g_v = ops.sub(ops.reduce_sum(ct, every), ops.reduce_sum(g_x, every))
    return (g_x, g_v)


pad.vjp = _pad_vjp
pad.jvp = lambda ops, tangents, primals, outs, **attrs: (ops.bind(
    pad, *[t if t is not None else ops.zeros_like(x)
           for t, x in zip(tangents, primals, strict=True)],
    **attrs),)


def _reverse_rule(x, *, axes):
    _axes_ok("reverse", axes, x.ndim)
    return x


reverse = Primitive(
    "reverse", _reverse_rule,
    lambda ctx, x: ctx.op("stablehlo.reverse", [x], ctx.out_types,
                          "dimensions = " + i64_array(ctx.attrs["axes"])),
    lambda x, *, axes: np.flip(x, axes) if axes else x, family="shape")
reverse.vjp = lambda ops, cts, primals, outs, *, axes: (ops.bind(reverse, cts[0], axes=axes),)
reverse.jvp = _same_op_jvp(reverse)

# ---- batching rules (the batch axis is axis 0 of every batched value) ---------------


def _broadcast_batch(ops, xs, batched, *, shape, broadcast_dimensions):
    (x,) = xs
    n = x.type.shape[0]
    return (ops.broadcast(x, (n,) + tuple(shape), (0,) + br.shift(broadcast_dimensions)),)


def _pad_batch(ops, xs, batched, *, low, high, interior):
    x, value = xs
    n = br.batch_size(xs, batched)
    x = br.bring(ops, x, batched[0], n)
    attrs = {"low": (0,) + tuple(low), "high": (0,) + tuple(high),
             "interior": (0,) + tuple(interior)}
    if not batched[1]:
        return (ops.bind(pad, x, value, **attrs),)
    # a batched padding value: pad with zeros, then put each example's value where a
    # padded mask says the padding is
    padded = ops.bind(pad, x, ops.const(0, x.type.dtype), **attrs)
    ones = ops.const(True, dt.bool_, x.type.shape)
    mask = ops.bind(pad, ones, ops.const(False, dt.bool_), **attrs)
    fill = ops.broadcast(value, padded.type.shape, (0,))
    return (ops.select(mask, padded, fill),)


constant.batch = NO_OPERANDS
iota.batch = NO_OPERANDS
broadcast_in_dim.batch = _broadcast_batch
reshape.batch = lambda ops, xs, batched, *, shape: (
    ops.reshape(xs[0], (xs[0].type.shape[0],) + tuple(shape)),)
transpose.batch = lambda ops, xs, batched, *, permutation: (
    ops.transpose(xs[0], (0,) + br.shift(permutation)),)
slice_.batch = lambda ops, xs, batched, *, start, limit, strides: (ops.bind(
    slice_, xs[0], start=(0,) + tuple(start), limit=(xs[0].type.shape[0],) + tuple(limit),
    strides=(1,) + tuple(strides)),)
concatenate.batch = br.leading(concatenate, axis_attrs=("dimension",))
pad.batch = _pad_batch
reverse.batch = br.leading(reverse, tuple_attrs=("axes",))
# dynamic_slice and dynamic_update_slice batch through gather and scatter when their
# start indices are batched: their rules are in primitives/indexing.py.

PRIMITIVES = [constant, iota, broadcast_in_dim, reshape, transpose, slice_, dynamic_slice,
              dynamic_update_slice, concatenate, pad, reverse]
