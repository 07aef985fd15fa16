"""Primitives on the bit patterns of numbers: clz (count leading zeros) of integers and
reduce_precision of floats (round to a narrower float format, kept in the operand's
dtype). Both are elementwise; their reference rules work on the bits with NumPy, as
XLA does.
"""

from __future__ import annotations

import numpy as np

from .. import batch_rules as br
from .. import dtypes as dt
from ..errors import ShapeError
from ..primitive import NOT_DIFFERENTIABLE, Primitive
from .elementwise import FLOAT, INTEGER, _elementwise_emit, check_kind

_UINT = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}


# ---- clz -----------------------------------------------------------------------------

def _clz_rule(x):
    check_kind("clz", x, INTEGER)
    return x


def _clz_ref(x):
    """The bit width minus the bit length of x's two's-complement pattern, by halving
    the window that holds the highest set bit (32, 16, ..., 1)."""
    bits = 8 * x.dtype.itemsize
    v = np.ascontiguousarray(x).view(_UINT[bits]).astype(np.uint64)
    count = np.full(x.shape, bits, np.int64)
    for s in (32, 16, 8, 4, 2, 1):
        if s < bits:
            high = v >> np.uint64(s)
            nonzero = high != 0
            count -= np.where(nonzero, s, 0)
            v = np.where(nonzero, high, v)
    return (count - (v != 0)).astype(x.dtype)


clz = Primitive("clz", _clz_rule, _elementwise_emit("stablehlo.count_leading_zeros"),
                _clz_ref, vjp=NOT_DIFFERENTIABLE, family="elementwise")


# ---- reduce_precision ----------------------------------------------------------------

def _reduce_precision_rule(x, *, exponent_bits, mantissa_bits):
    check_kind("reduce_precision", x, FLOAT)
    if exponent_bits < 1 or mantissa_bits < 0:
        raise ShapeError(f"reduce_precision: exponent_bits must be at least 1 and "
                         f"mantissa_bits at least 0, got exponent_bits={exponent_bits}, "
                         f"mantissa_bits={mantissa_bits}")
    return x


def _reduce_precision_emit(ctx, x):
    a = ctx.attrs
    return ctx.op("stablehlo.reduce_precision", [x], ctx.out_types,
                  f"exponent_bits = {a['exponent_bits']} : i32, "
                  f"mantissa_bits = {a['mantissa_bits']} : i32")


def _reduce_precision_ref(x, *, exponent_bits, mantissa_bits):
    """XLA's algorithm on the bits: round the mantissa to nearest even, then overflow to
    a signed infinity and underflow (the narrow format's subnormals too) to a signed
    zero; a NaN stays as it was unless no mantissa bit is left to hold it."""
    x = np.ascontiguousarray(x)
    info = dt.finfo(dt.dtype(x.dtype))
    nbits, src_m, src_e = 8 * x.dtype.itemsize, info.nmant, info.nexp
    u = _UINT[nbits]
    v = x.view(u).astype(np.uint64)
    if mantissa_bits < src_m:
        drop = src_m - mantissa_bits
        last = 1 << drop
        bias = ((v & np.uint64(last)) >> np.uint64(drop)) + np.uint64((last >> 1) - 1)
        v = (v + bias) & np.uint64(~(last - 1) & ((1 << nbits) - 1))
    if exponent_bits < src_e:
        sign = v & np.uint64(1 << (nbits - 1))
        exp_mask = ((1 << src_e) - 1) << src_m
        bias = (1 << (src_e - 1)) - 1
        reduced = (1 << (exponent_bits - 1)) - 1
        exponent = v & np.uint64(exp_mask)
        v = np.where(exponent > np.uint64((bias + reduced) << src_m), sign | np.uint64(exp_mask),
                     np.where(exponent <= np.uint64((bias - reduced) << src_m), sign, v))
    out = v.astype(u).view(x.dtype)
    return np.where(np.isnan(x), x, out) if mantissa_bits > 0 else out


def _reduce_precision_linear(ops, vs, primals, outs, **attrs):
    """reduce_precision is linear in jax's sense: a tangent or cotangent is rounded
    to the same format (jax's ad.deflinear)."""
    return (None if vs[0] is None else ops.bind(reduce_precision, vs[0], **attrs),)


reduce_precision = Primitive(
    "reduce_precision", _reduce_precision_rule, _reduce_precision_emit,
    _reduce_precision_ref, vjp=_reduce_precision_linear, jvp=_reduce_precision_linear,
    family="elementwise")

PRIMITIVES = [clz, reduce_precision]
for _p in PRIMITIVES:
    _p.batch = br.elementwise(_p)
