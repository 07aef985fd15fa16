"""Reductions over axes (sum, product, max, min, and, or) and argmax/argmin. Each
reduction is a `stablehlo.reduce` whose body is one binary op.
"""

from __future__ import annotations

import numpy as np

from .. import batch_rules as br
from .. import dtypes as dt
from ..errors import ShapeError
from ..ir import TensorType, scalar_type
from ..primitive import NOT_DIFFERENTIABLE, Primitive
from . import shape_ops
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

    p = Primitive(name, shape_rule, emit, reference,
                  vjp=NOT_DIFFERENTIABLE if kind in ("and", "or") else None,
                  family="reduction")
    p.batch = br.leading(p, tuple_attrs=("axes",))
    return p


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
    """d prod / d x_i = the product of the other elements of x_i's group."""
    (ct,), (x,) = cts, primals
    others = _others_product(ops, x, tuple(axes))
    return (ops.mul(others, ops.broadcast(ct, x.type.shape, _kept_dims(x, axes))),)


def _others_product(ops, x, axes):
    """For each element of x, the product of the other elements reduced with it over
    `axes`, by a pairwise tree (as JAX's rule): no division, so it is exact with zeros
    and has none of the overflow and underflow of prod / x_i (prod([1e-30, 1e-30, 2])
    underflows to 0, while each element's others are representable)."""
    shape, dtype = x.type.shape, x.type.dtype
    kept = _kept_dims(x, axes)
    n = int(np.prod([shape[a] for a in axes], dtype=np.int64))
    if n == 0:
        return ops.zeros_like(x)
    perm = kept + tuple(sorted(axes))
    moved = ops.transpose(x, perm)
    batch = tuple(shape[a] for a in kept)
    b = len(batch)
    size = 1 << (n - 1).bit_length()  # the next power of two: pad with ones
    level = ops.reshape(moved, batch + (n,))
    if size != n:
        level = ops.bind(shape_ops.pad, level, ops.const(1, dtype), low=(0,) * (b + 1),
                         high=(0,) * b + (size - n,), interior=(0,) * (b + 1))
    pairs = []
    while level.type.shape[-1] > 1:  # up: the products of ever larger blocks
        pair = ops.reshape(level, batch + (level.type.shape[-1] // 2, 2))
        pairs.append(pair)
        level = ops.bind(reduce_prod, pair, axes=(b + 1,))
    others = ops.full_like(level, 1)  # down: a block's others times its sibling
    for pair in reversed(pairs):
        m = pair.type.shape[-2]
        sibling = ops.bind(shape_ops.reverse, pair, axes=(b + 1,))
        up = ops.broadcast(others, batch + (m, 2), tuple(range(b + 1)))
        others = ops.reshape(ops.mul(up, sibling), batch + (2 * m,))
    if size != n:
        others = ops.bind(shape_ops.slice_, others, start=(0,) * (b + 1),
                          limit=batch + (n,), strides=(1,) * (b + 1))
    others = ops.reshape(others, tuple(shape[a] for a in perm))
    return ops.transpose(others, tuple(int(i) for i in np.argsort(perm)))


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

    p = Primitive(name, shape_rule, emit, reference, vjp=NOT_DIFFERENTIABLE,
                  family="reduction")
    p.batch = br.leading(p, axis_attrs=("axis",))
    return p


argmax = arg_reduction("max")
argmin = arg_reduction("min")

PRIMITIVES = [reduce_sum, reduce_prod, reduce_max, reduce_min, reduce_and, reduce_or,
              argmax, argmin]
