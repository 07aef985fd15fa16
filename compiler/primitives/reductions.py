"""Reductions over axes (sum, product, max, min, and, or), argmax/argmin, and
dot_general. Each reduction is a `stablehlo.reduce` whose body is one binary op.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes as dt
from ..emitter import i64_list
from ..errors import ShapeError
from ..ir import TensorType, scalar_type
from ..primitive import NOT_DIFFERENTIABLE, Primitive
from .elementwise import _COMPARE_TYPE, check_kind


def _reduced_shape(opname: str, x: TensorType, axes) -> list[int]:
    if len(set(axes)) != len(axes):
        raise ShapeError(f"{opname}: repeated axis in {axes}")
    for a in axes:
        if not 0 <= a < x.ndim:
            raise ShapeError(f"{opname}: axis {a} is out of range for an operand of shape "
                             f"{x.shape}")
    return [n for i, n in enumerate(x.shape) if i not in axes]


def _identity(kind: str, d: dt.DType):
    if kind == "sum":
        return 0
    if kind == "prod":
        return 1
    if kind == "and":
        return True if d.kind == "b" else -1 if d.kind == "i" else np.iinfo(d.np).max
    if kind == "or":
        return False if d.kind == "b" else 0
    if d.kind == "f":
        return -np.inf if kind == "max" else np.inf
    if d.kind == "b":
        return kind == "min"
    info = np.iinfo(d.np)
    return info.min if kind == "max" else info.max


_BODY = {"sum": "stablehlo.add", "prod": "stablehlo.multiply", "max": "stablehlo.maximum",
         "min": "stablehlo.minimum", "and": "stablehlo.and", "or": "stablehlo.or"}
_NUMPY = {"sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min,
          "and": np.bitwise_and.reduce, "or": np.bitwise_or.reduce}
_KINDS = {"sum": "biufc", "prod": "biufc", "max": "biuf", "min": "biuf", "and": "biu",
          "or": "biu"}


def reducer(ctx, kind: str, dtype: dt.DType) -> tuple[str, str]:
    """The initial value and the scalar body region of a `kind` reduction (shared by
    stablehlo.reduce and stablehlo.reduce_window emission)."""
    s = scalar_type(dtype)
    body = _BODY[kind]
    if dtype.kind == "b":
        body = {"sum": "stablehlo.or", "prod": "stablehlo.and"}.get(kind, body)
    init = ctx.constant(_identity(kind, dtype), dtype)
    return init, ctx.region([s, s], lambda a, b: ctx.op(body, [a, b], [s]))


def reduction(kind: str) -> Primitive:
    name = f"reduce_{kind}"

    def shape_rule(x, *, axes):
        check_kind(name, x, _KINDS[kind])
        return TensorType(_reduced_shape(name, x, axes), x.dtype)

    def emit(ctx, x):
        init, region = reducer(ctx, kind, ctx.in_types[0].dtype)
        return ctx.op("stablehlo.reduce", [x, init], ctx.out_types,
                      f"dimensions = array<i64{': ' if ctx.attrs['axes'] else ''}"
                      f"{', '.join(map(str, ctx.attrs['axes']))}>", regions=[region])

    def reference(x, *, axes):
        if x.dtype == np.bool_ and kind in ("sum", "prod"):
            return (np.any if kind == "sum" else np.all)(x, axis=tuple(axes))
        with np.errstate(all="ignore"):
            if kind in ("and", "or"):
                out = x
                for a in sorted(axes, reverse=True):
                    out = _NUMPY[kind](out, axis=a)
                return np.asarray(out, dtype=x.dtype)
            if kind in ("max", "min") and x.size == 0:
                return np.full(_reduced_shape(name, _t(x), axes), _identity(kind, dt.dtype(
                    x.dtype)), x.dtype)
            return np.asarray(_NUMPY[kind](x, axis=tuple(axes)), dtype=x.dtype)

    return Primitive(name, shape_rule, emit, reference,
                     vjp=NOT_DIFFERENTIABLE if kind in ("and", "or") else None,
                     family="reduction")


def _t(x: np.ndarray) -> TensorType:
    return TensorType(x.shape, dt.dtype(x.dtype))


reduce_sum = reduction("sum")
reduce_prod = reduction("prod")
reduce_max = reduction("max")
reduce_min = reduction("min")
reduce_and = reduction("and")
reduce_or = reduction("or")


def _kept_dims(x, axes):
    return tuple(i for i in range(x.type.ndim) if i not in axes)


def _sum_vjp(ops, cts, primals, outs, *, axes):
    x = primals[0]
    return (ops.broadcast(cts[0], x.type.shape, _kept_dims(x, axes)),)


def _extremum_vjp(ops, cts, primals, outs, *, axes):
    """The gradient goes to the elements equal to the result, shared evenly on ties."""
    (ct,), (x,), (out,) = cts, primals, outs
    kept = _kept_dims(x, axes)
    hit = ops.convert(ops.eq(x, ops.broadcast(out, x.type.shape, kept)), x.type.dtype)
    count = ops.reduce_sum(hit, axes)
    share = ops.div(ct, count)
    return (ops.mul(hit, ops.broadcast(share, x.type.shape, kept)),)


def _prod_vjp(ops, cts, primals, outs, *, axes):
    """d prod / d x_i = product of the other elements, exact with zeros: out / x_i when
    the group has no zero; the product of the non-zeros at the one zero; else 0."""
    (ct,), (x,) = cts, primals
    kept, shape = _kept_dims(x, axes), x.type.shape
    zero, one = ops.zeros_like(x), ops.ones_like(x)
    is_zero = ops.eq(x, zero)
    nonzero_prod = ops.bind(reduce_prod, ops.select(is_zero, one, x), axes=axes)
    zeros = ops.reduce_sum(ops.convert(is_zero, x.type.dtype), axes)
    zeros_b = ops.broadcast(zeros, shape, kept)
    nz_b = ops.broadcast(nonzero_prod, shape, kept)
    no_zero = ops.div(nz_b, ops.select(is_zero, one, x))
    one_zero = ops.select(is_zero, nz_b, zero)
    c = ops.full_like(zeros_b, 0)
    d = ops.select(ops.eq(zeros_b, c), no_zero,
                   ops.select(ops.eq(zeros_b, ops.full_like(zeros_b, 1)), one_zero, zero))
    return (ops.mul(d, ops.broadcast(ct, shape, kept)),)


reduce_sum.vjp = _sum_vjp
reduce_sum.jvp = lambda ops, tangents, primals, outs, *, axes: (
    ops.reduce_sum(tangents[0], axes),)
reduce_prod.vjp = _prod_vjp
reduce_max.vjp = _extremum_vjp
reduce_min.vjp = _extremum_vjp


def arg_reduction(kind: str) -> Primitive:
    """argmax/argmin along one axis; NaN counts as the extreme, ties go to the first."""
    name = f"arg{kind}"

    def shape_rule(x, *, axis, index_dtype):
        check_kind(name, x, "biuf")
        if not index_dtype.is_integer:
            raise ShapeError(f"{name}: index_dtype must be an integer type")
        shape = _reduced_shape(name, x, (axis,))
        if x.shape[axis] == 0:
            raise ShapeError(f"{name}: attempt to get {name} of an empty axis {axis}")
        return TensorType(shape, index_dtype)

    def emit(ctx, x):
        t = ctx.in_types[0]
        axis, idt = ctx.attrs["axis"], ctx.attrs["index_dtype"]
        vs, ids = scalar_type(t.dtype), scalar_type(idt)
        b = scalar_type(dt.bool_)
        cmp_type = _COMPARE_TYPE[t.dtype.kind]
        better = "GT" if kind == "max" else "LT"

        def cmp(a, c, direction, ct=cmp_type):
            return ctx.op("stablehlo.compare", [a, c], [b],
                          f"comparison_direction = #stablehlo<comparison_direction "
                          f"{direction}>, compare_type = #stablehlo<comparison_type {ct}>")[0]

        def body(av, ai, bv, bi):
            a_wins = cmp(av, bv, better)
            b_wins = cmp(bv, av, better)
            if t.dtype.is_float:  # NaN beats everything
                a_nan, b_nan = cmp(av, av, "NE"), cmp(bv, bv, "NE")
                not_b_nan = ctx.op("stablehlo.not", [b_nan], [b])[0]
                not_a_nan = ctx.op("stablehlo.not", [a_nan], [b])[0]
                a_nan_only = ctx.op("stablehlo.and", [a_nan, not_b_nan], [b])[0]
                b_nan_only = ctx.op("stablehlo.and", [b_nan, not_a_nan], [b])[0]
                a_wins = ctx.op("stablehlo.or", [a_wins, a_nan_only], [b])[0]
                b_wins = ctx.op("stablehlo.or", [b_wins, b_nan_only], [b])[0]
            first = ctx.op("stablehlo.minimum", [ai, bi], [ids])[0]
            idx = ctx.op("stablehlo.select", [b_wins, bi, first], [ids])[0]
            idx = ctx.op("stablehlo.select", [a_wins, ai, idx], [ids])[0]
            val = ctx.op("stablehlo.select", [b_wins, bv, av], [vs])[0]
            return [val, idx]

        iota_t = TensorType(t.shape, idt)
        iota = ctx.op("stablehlo.iota", [], [iota_t], f"iota_dimension = {axis} : i64")[0]
        init_v = ctx.constant(_identity("max" if kind == "max" else "min", t.dtype), t.dtype)
        init_i = ctx.constant(0, idt)
        region = ctx.region([vs, ids, vs, ids], body)
        out_v = TensorType(ctx.out_types[0].shape, t.dtype)
        results = ctx.op("stablehlo.reduce", [x, iota, init_v, init_i],
                         [out_v, ctx.out_types[0]], f"dimensions = array<i64: {axis}>",
                         regions=[region])
        return results[1]

    def reference(x, *, axis, index_dtype):
        f = np.argmax if kind == "max" else np.argmin
        return np.asarray(f(x, axis=axis), dtype=index_dtype.np)

    return Primitive(name, shape_rule, emit, reference, vjp=NOT_DIFFERENTIABLE,
                     family="reduction")


argmax = arg_reduction("max")
argmin = arg_reduction("min")

# ---- dot_general ---------------------------------------------------------------------


def _dot_rule(x, y, *, contracting, batch, preferred_element_type=None):
    (xc, yc), (xb, yb) = contracting, batch
    if x.dtype is not y.dtype:
        raise ShapeError(f"dot_general: operand dtypes {x.dtype.name} and {y.dtype.name} "
                         f"differ; convert one first")
    if len(xc) != len(yc) or len(xb) != len(yb):
        raise ShapeError("dot_general: lhs and rhs need as many contracting (and batch) "
                         "dimensions each")
    for which, t, dims in (("lhs", x, xc + xb), ("rhs", y, yc + yb)):
        if len(set(dims)) != len(dims) or any(not 0 <= d < t.ndim for d in dims):
            raise ShapeError(f"dot_general: bad dimension numbers {dims} for {which} {t}")
    for a, b in zip(xc, yc):
        if x.shape[a] != y.shape[b]:
            raise ShapeError(f"dot_general: contracting dimension {a} of lhs {x.shape} "
                             f"(size {x.shape[a]}) does not match dimension {b} of rhs "
                             f"{y.shape} (size {y.shape[b]})")
    for a, b in zip(xb, yb):
        if x.shape[a] != y.shape[b]:
            raise ShapeError(f"dot_general: batch dimension {a} of lhs {x.shape} does not "
                             f"match dimension {b} of rhs {y.shape}")
    free_x = [n for i, n in enumerate(x.shape) if i not in xc and i not in xb]
    free_y = [n for i, n in enumerate(y.shape) if i not in yc and i not in yb]
    out = preferred_element_type or x.dtype
    return TensorType([x.shape[a] for a in xb] + free_x + free_y, out)


def _dot_emit(ctx, x, y):
    (xc, yc), (xb, yb) = ctx.attrs["contracting"], ctx.attrs["batch"]
    parts = []
    if xb:
        parts += [f"lhs_batching_dimensions = {i64_list(xb)}",
                  f"rhs_batching_dimensions = {i64_list(yb)}"]
    parts += [f"lhs_contracting_dimensions = {i64_list(xc)}",
              f"rhs_contracting_dimensions = {i64_list(yc)}"]
    return ctx.op("stablehlo.dot_general", [x, y], ctx.out_types,
                  f"dot_dimension_numbers = #stablehlo.dot<{', '.join(parts)}>")


def _dot_ref(x, y, *, contracting, batch, preferred_element_type=None):
    # transpose to (batch, free, contract) x (batch, contract, free) and use matmul
    (xc, yc), (xb, yb) = contracting, batch
    xf = [i for i in range(x.ndim) if i not in xc and i not in xb]
    yf = [i for i in range(y.ndim) if i not in yc and i not in yb]
    bshape = [x.shape[a] for a in xb]
    m = int(np.prod([x.shape[i] for i in xf], dtype=np.int64))
    k = int(np.prod([x.shape[i] for i in xc], dtype=np.int64))
    n = int(np.prod([y.shape[i] for i in yf], dtype=np.int64))
    b = int(np.prod(bshape, dtype=np.int64))
    xt = np.transpose(x, [*xb, *xf, *xc]).reshape(b, m, k)
    yt = np.transpose(y, [*yb, *yc, *yf]).reshape(b, k, n)
    dtype = (preferred_element_type or dt.dtype(x.dtype)).np
    if x.dtype == np.bool_:
        r = np.matmul(xt.astype(np.int64), yt.astype(np.int64)) > 0
    else:  # accumulate in the result type (int8 x int8 -> int32 must not wrap at 8 bits)
        r = np.matmul(xt.astype(dtype, copy=False), yt.astype(dtype, copy=False))
    out_shape = bshape + [x.shape[i] for i in xf] + [y.shape[i] for i in yf]
    return np.asarray(r, dtype=dtype).reshape(out_shape)


dot_general = Primitive("dot_general", _dot_rule, _dot_emit, _dot_ref, family="linalg")


def _dot_transpose(ops, ct, other, contracting, batch, this_ndim, ct_first: bool):
    """Cotangent of one dot_general operand ("this") given the other (as JAX's
    _dot_general_transpose_lhs). ct's dims are batch, free-lhs, free-rhs."""
    (tc, oc), (tb, ob) = contracting, batch
    o_ndim = other.type.ndim
    t_free = [i for i in range(this_ndim) if i not in tc and i not in tb]
    o_free = [i for i in range(o_ndim) if i not in oc and i not in ob]
    nb = len(tb)
    # positions of the other operand's free dims inside ct
    if ct_first:  # this = lhs: ct = [batch, t_free, o_free]
        ct_o = list(range(nb + len(t_free), nb + len(t_free) + len(o_free)))
    else:         # this = rhs: ct = [batch, o_free, t_free]
        ct_o = list(range(nb, nb + len(o_free)))
    g = ops.dot_general(ct, other, (ct_o, o_free), (list(range(nb)), list(ob)))
    # g's dims: batch (this's tb), ct's remaining (t_free), other's remaining (its
    # contracting dims in increasing order -> this's matching tc dims)
    order = sorted(range(len(oc)), key=lambda k: oc[k])
    layout = list(tb) + t_free + [tc[k] for k in order]
    perm = [layout.index(i) for i in range(this_ndim)]
    return ops.transpose(g, perm)


def _dot_vjp(ops, cts, primals, outs, *, contracting, batch, preferred_element_type=None):
    (ct,), (x, y) = cts, primals
    ct = ops.convert(ct, x.type.dtype)
    (xc, yc), (xb, yb) = contracting, batch
    gx = _dot_transpose(ops, ct, y, (xc, yc), (xb, yb), x.type.ndim, True)
    gy = _dot_transpose(ops, ct, x, (yc, xc), (yb, xb), y.type.ndim, False)
    return (gx, gy)


def _dot_jvp(ops, tangents, primals, outs, **attrs):
    (tx, ty), (x, y) = tangents, primals
    parts = []
    if tx is not None:
        parts.append(ops.bind(dot_general, tx, y, **attrs))
    if ty is not None:
        parts.append(ops.bind(dot_general, x, ty, **attrs))
    return (parts[0] if len(parts) == 1 else ops.add(*parts),)


dot_general.vjp = _dot_vjp
dot_general.jvp = _dot_jvp

PRIMITIVES = [reduce_sum, reduce_prod, reduce_max, reduce_min, reduce_and, reduce_or,
              argmax, argmin, dot_general]
