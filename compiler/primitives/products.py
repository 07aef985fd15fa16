"""Products: dot_general, the one contraction primitive (matmul, dot, tensordot,
einsum and the batched forms are all written with it).

precision (optional): a pair of "DEFAULT" / "HIGH" / "HIGHEST" for lhs and rhs, emitted
as StableHLO's precision_config. The host computes float32 in full precision whatever it
says; GPUs take float32 products as TF32 by default (as in jax) and in full float32 with
"HIGHEST".
"""

from __future__ import annotations

import numpy as np

from .. import batch_rules as br
from .. import dtypes as dt
from ..emitter import i64_list
from ..errors import ShapeError
from ..ir import TensorType
from ..primitive import Primitive


def _dot_rule(x, y, *, contracting, batch, preferred_element_type=None, precision=None):
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
    for a, b in zip(xc, yc, strict=True):
        if x.shape[a] != y.shape[b]:
            raise ShapeError(f"dot_general: contracting dimension {a} of lhs {x.shape} "
                             f"(size {x.shape[a]}) does not match dimension {b} of rhs "
                             f"{y.shape} (size {y.shape[b]})")
    for a, b in zip(xb, yb, strict=True):
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
    attrs = f"dot_dimension_numbers = #stablehlo.dot<{', '.join(parts)}>"
    precision = ctx.attrs.get("precision")
    x, y, exact = _gpu_integer_operands(ctx, x, y)
    if exact:
        precision = ("HIGHEST", "HIGHEST")
    if precision is not None:
        attrs += (", precision_config = [" +
                  ", ".join(f"#stablehlo<precision {p}>" for p in precision) + "]")
    return ctx.op("stablehlo.dot_general", [x, y], ctx.out_types, attrs)


def _gpu_integer_operands(ctx, x, y):
    """(x, y, whether their products must be exact floats): on cuda and rocm, integer
    operands with a wider preferred_element_type are converted to it first. XLA's GPU
    backends give other values than the host for int8 x int8 -> int32 (jax's too), and
    int8 x int8 -> float32 stopped the test worker (2026-11-26, H200): the converted
    operands take the plain int32 or float32 GEMM path, whose products are exact as the
    host's (a float one at HIGHEST precision: TF32 would round 127 * 127)."""
    xt, yt = ctx.in_types
    out = ctx.out_types[0].dtype
    if ctx.emitter.platform not in ("cuda", "rocm") or xt.dtype.kind not in "iu" \
            or out.bits <= xt.dtype.bits:  # (a narrower result: not what was seen fail)
        return x, y, False
    x, y = (ctx.op("stablehlo.convert", [v], [t.with_dtype(out)])[0]
            for v, t in ((x, xt), (y, yt)))
    return x, y, out.kind == "f"


def _dot_ref(x, y, *, contracting, batch, preferred_element_type=None, precision=None):
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


dot_general = Primitive("dot_general", _dot_rule, _dot_emit, _dot_ref, family="products")


def _dot_transpose(ops, ct, other, contracting, batch, this_ndim, ct_first: bool,
                   precision=None):
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
    g = ops.dot_general(ct, other, (ct_o, o_free), (list(range(nb)), list(ob)),
                        precision=precision)
    # g's dims: batch (this's tb), ct's remaining (t_free), other's remaining (its
    # contracting dims in increasing order -> this's matching tc dims)
    order = sorted(range(len(oc)), key=lambda k: oc[k])
    layout = list(tb) + t_free + [tc[k] for k in order]
    perm = [layout.index(i) for i in range(this_ndim)]
    return ops.transpose(g, perm)


def _dot_vjp(ops, cts, primals, outs, *, contracting, batch, preferred_element_type=None,
             precision=None):
    (ct,), (x, y) = cts, primals
    ct = ops.convert(ct, x.type.dtype)
    (xc, yc), (xb, yb) = contracting, batch
    # the cotangent's products keep the requested precision (the operand's own side)
    gx = _dot_transpose(ops, ct, y, (xc, yc), (xb, yb), x.type.ndim, True, precision)
    gy = _dot_transpose(ops, ct, x, (yc, xc), (yb, xb), y.type.ndim, False,
                        None if precision is None else precision[::-1])
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

PRIMITIVES = [dot_general]


def _dot_batch(ops, xs, batched, *, contracting, batch, preferred_element_type=None,
               precision=None):
    """Both operands batched: the batch axis becomes a new leading batch dimension. One
    batched: it is a free dimension of that operand, moved to the front afterwards."""
    (x, y), (bx, by) = xs, batched
    (xc, yc), (xb, yb) = contracting, batch
    attrs = {} if preferred_element_type is None else \
        {"preferred_element_type": preferred_element_type}
    if precision is not None:
        attrs["precision"] = precision
    if bx and by:
        out = ops.dot_general(x, y, (br.shift(xc), br.shift(yc)),
                              ((0,) + br.shift(xb), (0,) + br.shift(yb)), **attrs)
        return (out,)
    if bx:
        out = ops.dot_general(x, y, (br.shift(xc), yc), (br.shift(xb), yb), **attrs)
        return (br.move_axis(ops, out, len(xb), 0),)
    x_free = x.type.ndim - len(xc) - len(xb)
    out = ops.dot_general(x, y, (xc, br.shift(yc)), (xb, br.shift(yb)), **attrs)
    return (br.move_axis(ops, out, len(xb) + x_free, 0),)


dot_general.batch = _dot_batch
