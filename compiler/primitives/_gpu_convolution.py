"""Convolutions that XLA's GPU backends cannot compile, written with other ops.

XLA on cuda and rocm hands convolutions to cuDNN / MIOpen, which have only floating-point
ones (and int8 ones in special layouts): a complex convolution fails with "UNIMPLEMENTED:
Convolutions must have floating-point or integral operands/outputs, but got convolution
with type c64", an integer one with a bare "UNIMPLEMENTED". convolution._emit calls these
for those dtypes there; the host keeps its single op.

    complex_conv: four real convolutions of the real and imaginary parts (not Gauss's
        three: its (ar + ai)(br + bi) - rr - ii loses the imaginary part to cancellation
        when it is small next to the real one), then stablehlo.complex.
    integer_conv: no convolution op at all. For each kernel tap, a strided slice of the
        padded, lhs-dilated input (one stablehlo.pad does both, negative padding too),
        times the kernel's tap broadcast over batch and output features, reduced over
        the input features, summed over the taps. Integer multiply and add wrap around
        as the host's convolution does (the sum is the same modulo 2^bits in any order
        and width). Feature and batch groups are axes of the product. Up to UNROLL_TAPS
        taps are written out; more (snp.convolve of long operands) loop over the taps
        in a stablehlo.while so that the program stays small.
"""

from __future__ import annotations

import math

import numpy as np

from .. import dtypes as dt
from ..emitter import i64_array
from ..ir import TensorType, scalar_type
from ._matrix import _unsupported

# kernel taps written out one by one; a kernel with more taps loops over them
UNROLL_TAPS = 16


def complex_conv(ctx, lhs, rhs, conv_op):
    """conv(a, b) = conv(ar, br) - conv(ai, bi) + i (conv(ar, bi) + conv(ai, br)), each
    with the op's attributes (conv_op(ctx, lhs, rhs, out_type) writes one)."""
    out = ctx.out_types[0]
    ft = out.with_dtype(dt.real_dtype(out.dtype))

    def parts(x, t):
        pt = t.with_dtype(dt.real_dtype(t.dtype))
        return (ctx.op("stablehlo.real", [x], [pt])[0], ctx.op("stablehlo.imag", [x], [pt])[0])

    (ar, ai), (br, bi) = parts(lhs, ctx.in_types[0]), parts(rhs, ctx.in_types[1])
    re = ctx.op("stablehlo.subtract", [conv_op(ctx, ar, br, ft), conv_op(ctx, ai, bi, ft)],
                [ft])[0]
    im = ctx.op("stablehlo.add", [conv_op(ctx, ar, bi, ft), conv_op(ctx, ai, br, ft)], [ft])[0]
    return ctx.op("stablehlo.complex", [re, im], [out])[0]


def _transpose(ctx, x, t: TensorType, perm) -> tuple[str, TensorType]:
    perm = [int(p) for p in perm]
    if perm == list(range(t.ndim)):
        return x, t
    rt = TensorType([t.shape[p] for p in perm], t.dtype)
    return ctx.op("stablehlo.transpose", [x], [rt], f"permutation = {i64_array(perm)}")[0], rt


def _reshape(ctx, x, shape, dtype) -> str:
    return ctx.op("stablehlo.reshape", [x], [TensorType(shape, dtype)])[0]


def _bcast(ctx, x, shape, dtype, dims) -> str:
    return ctx.op("stablehlo.broadcast_in_dim", [x], [TensorType(shape, dtype)],
                  f"broadcast_dimensions = {i64_array(dims)}")[0]


def integer_conv(ctx, lhs, rhs):
    a = ctx.attrs
    (lt, rt), out = ctx.in_types, ctx.out_types[0]
    if lt.symbolic or rt.symbolic or out.symbolic:
        raise _unsupported(ctx, f"an integer convolution ({out.dtype.name}) with symbolic "
                                f"dimensions", "XLA's GPU backends have no integer "
                                "convolution, and its lowering without one needs static "
                                "shapes; export with concrete shapes, or convert the "
                                "operands to a float dtype")
    d = out.dtype
    ls, rs, os = a["dimension_numbers"]
    nsp = lt.ndim - 2
    g, b = a["feature_group_count"], a["batch_group_count"]
    strides, rdil = list(a["window_strides"]), list(a["rhs_dilation"])
    x, xt = _transpose(ctx, lhs, lt, ls)  # N C L...
    w, wt = _transpose(ctx, rhs, rt, rs)  # O I K...
    n, c = xt.shape[:2]
    o, i = wt.shape[:2]
    ks = list(wt.shape[2:])
    sp = [out.shape[os[2 + k]] for k in range(nsp)]  # output spatial sizes
    lo = [int(p[0]) for p in a["padding"]]
    hi = [int(p[1]) for p in a["padding"]]
    interior = [int(v) - 1 for v in a["lhs_dilation"]]
    if any(lo) or any(hi) or any(interior):  # pad (negative: crop) and lhs-dilate at once
        shape = [*xt.shape[:2], *(max(0, (m - 1) * e + m) + lo_ + hi_ for m, e, lo_, hi_ in
                                  zip(xt.shape[2:], interior, lo, hi, strict=True))]
        xt = TensorType(shape, d)
        x = ctx.op("stablehlo.pad", [x, ctx.constant(0, d)], [xt],
                   f"edge_padding_low = {i64_array([0, 0, *lo])}, "
                   f"edge_padding_high = {i64_array([0, 0, *hi])}, "
                   f"interior_padding = {i64_array([0, 0, *interior])}")[0]
    op_ = o // (b * g)  # output features per group
    w5t = TensorType([b, g, op_, i, *ks], d)
    w5 = _reshape(ctx, w, w5t.shape, d)
    # the product of one tap: [batch group, batch, feature group, out feature, in feature,
    # spatial...]; its sum over the in features: acc_t
    pt = [b, n // b, g, op_, i, *sp]
    acc_t = TensorType([b, n // b, g, op_, *sp], d)
    spans = [(m - 1) * s + 1 for m, s in zip(sp, strides, strict=True)]

    def tap(xk, wk, acc):
        """acc + sum over in features of x's window xk [N, C, S...] times the kernel's tap
        wk [b, g, O', I]."""
        xk = _reshape(ctx, xk, [b, n // b, g, i, *sp], d)
        xk = _bcast(ctx, xk, pt, d, [0, 1, 2, 4, *range(5, 5 + nsp)])
        wk = _bcast(ctx, wk, pt, d, [0, 2, 3, 4])
        prod = ctx.op("stablehlo.multiply", [xk, wk], [TensorType(pt, d)])[0]
        s = scalar_type(d)
        region = ctx.region([s, s], lambda u, v: ctx.op("stablehlo.add", [u, v], [s]))
        red = ctx.op("stablehlo.reduce", [prod, ctx.constant(0, d)], [acc_t],
                     f"dimensions = {i64_array([4])}", regions=[region])[0]
        return red if acc is None else ctx.op("stablehlo.add", [acc, red], [acc_t])[0]

    taps = math.prod(ks)
    wk_t = TensorType([b, g, op_, i, *[1] * nsp], d)
    if taps == 0 or n // b == 0 or o == 0 or math.prod(sp) == 0:
        acc = ctx.constant(0, d, acc_t.shape)
    elif taps <= UNROLL_TAPS:
        acc = None
        for k in np.ndindex(*ks):
            off = [kk * r for kk, r in zip(k, rdil, strict=True)]
            end = [f + s for f, s in zip(off, spans, strict=True)]
            xk = ctx.op("stablehlo.slice", [x], [TensorType([n, c, *sp], d)],
                        f"start_indices = {i64_array([0, 0, *off])}, "
                        f"limit_indices = {i64_array([n, c, *end])}, "
                        f"strides = {i64_array([1, 1, *strides])}")[0]
            wk = ctx.op("stablehlo.slice", [w5], [wk_t],
                        f"start_indices = {i64_array([0, 0, 0, 0, *k])}, "
                        f"limit_indices = {i64_array([b, g, op_, i, *(kk + 1 for kk in k)])}, "
                        f"strides = {i64_array([1] * (4 + nsp))}")[0]
            acc = tap(xk, _reshape(ctx, wk, [b, g, op_, i], d), acc)
    else:
        acc = _tap_loop(ctx, x, xt, w5, w5t, ks, rdil, strides, spans, sp, wk_t, acc_t, tap)
    if b > 1:  # [b, N/b, ...] -> [N/b, b, ...]: the batch groups are output features
        acc, _ = _transpose(ctx, acc, acc_t, [1, 0, *range(2, acc_t.ndim)])
    canon = [n // b, o, *sp]
    acc = _reshape(ctx, acc, canon, d)
    return _transpose(ctx, acc, TensorType(canon, d), np.argsort(os))[0]


def _tap_loop(ctx, x, xt, w5, w5t, ks, rdil, strides, spans, sp, wk_t, acc_t, tap):
    """acc summed over the kernel taps in a stablehlo.while: tap t's window is a
    dynamic_slice of the input at the tap's offset, then a static strided slice."""
    i64 = scalar_type(dt.int64)
    d = acc_t.dtype
    n, c = xt.shape[:2]
    nsp = len(ks)
    types = [i64, acc_t, xt, w5t]

    def cond(t, acc, x, w5):
        ok = ctx.op("stablehlo.compare", [t, ctx.constant(math.prod(ks), dt.int64)],
                    [scalar_type(dt.bool_)],
                    "comparison_direction = #stablehlo<comparison_direction LT>, "
                    "compare_type = #stablehlo<comparison_type SIGNED>")[0]
        return [ok]

    def body(t, acc, x, w5):
        zero = ctx.constant(0, dt.int64)
        k = []
        for j in range(nsp):  # tap t's index along each kernel axis (row-major)
            kj = t
            if math.prod(ks[j + 1:]) > 1:
                kj = ctx.op("stablehlo.divide", [kj, ctx.constant(math.prod(ks[j + 1:]),
                                                                  dt.int64)], [i64])[0]
            if j > 0:
                kj = ctx.op("stablehlo.remainder", [kj, ctx.constant(ks[j], dt.int64)],
                            [i64])[0]
            k.append(kj)
        off = [kj if r == 1 else ctx.op("stablehlo.multiply", [kj, ctx.constant(r, dt.int64)],
                                        [i64])[0] for kj, r in zip(k, rdil, strict=True)]
        win_t = TensorType([n, c, *spans], d)
        xk = ctx.op("stablehlo.dynamic_slice", [x, zero, zero, *off], [win_t],
                    f"slice_sizes = {i64_array(win_t.shape)}")[0]
        if any(s > 1 for s in strides):
            xk = ctx.op("stablehlo.slice", [xk], [TensorType([n, c, *sp], d)],
                        f"start_indices = {i64_array([0] * (2 + nsp))}, "
                        f"limit_indices = {i64_array(win_t.shape)}, "
                        f"strides = {i64_array([1, 1, *strides])}")[0]
        wk = ctx.op("stablehlo.dynamic_slice", [w5, zero, zero, zero, zero, *k], [wk_t],
                    f"slice_sizes = {i64_array(wk_t.shape)}")[0]
        acc = tap(xk, _reshape(ctx, wk, wk_t.shape[:4], d), acc)
        t1 = ctx.op("stablehlo.add", [t, ctx.constant(1, dt.int64)], [i64])[0]
        return [t1, acc, x, w5]

    init = [ctx.constant(0, dt.int64), ctx.constant(0, d, acc_t.shape), x, w5]
    return ctx.op("stablehlo.while", init, types,
                  regions=[ctx.region(types, cond), ctx.region(types, body)])[1]
