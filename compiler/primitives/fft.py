"""Fast Fourier transforms: `stablehlo.fft` over the trailing len(fft_length) axes.

    fft_type  FFT (complex -> complex), IFFT (complex -> complex, scaled by 1/n),
              RFFT (real -> complex, last axis n -> n//2+1),
              IRFFT (complex -> real, last axis n//2+1 -> n)
    fft_length  the transform sizes of the trailing axes (1 to 3 of them)

Derivatives follow JAX's convention for complex values (the transpose of the linear
map, not its adjoint), so gradients agree with JAX's grad.
"""

from __future__ import annotations

import numpy as np

from .. import batch_rules as br
from .. import dtypes as dt
from ..emitter import i64_array
from ..errors import ShapeError
from ..ir import Literal, TensorType
from ..primitive import Primitive
from . import shape_ops

TYPES = ("FFT", "IFFT", "RFFT", "IRFFT")


def _rule(x, *, fft_type, fft_length):
    if fft_type not in TYPES:
        raise ShapeError(f"fft: fft_type must be one of {TYPES}, got {fft_type!r}")
    k = len(fft_length)
    if not 1 <= k <= 3 or k > x.ndim:
        raise ShapeError(f"fft: transforms 1 to 3 trailing axes of the operand; fft_length "
                         f"{tuple(fft_length)} does not fit an operand of shape {x.shape}")
    if any(n < 0 for n in fft_length):
        raise ShapeError(f"fft: fft_length {tuple(fft_length)} must be non-negative")
    lead, tail = x.shape[:-k], x.shape[-k:]
    if fft_type == "RFFT":
        if x.dtype not in (dt.float32, dt.float64):
            raise ShapeError(f"fft (RFFT): operand must be float32 or float64, got "
                             f"{x.dtype.name}")
        if tuple(tail) != tuple(fft_length):
            raise ShapeError(f"fft (RFFT): the trailing axes {tail} must equal fft_length "
                             f"{tuple(fft_length)}; pad or slice the operand first")
        return TensorType((*lead, *fft_length[:-1], fft_length[-1] // 2 + 1),
                          dt.complex_dtype(x.dtype))
    if x.dtype not in (dt.complex64, dt.complex128):
        raise ShapeError(f"fft ({fft_type}): operand must be complex64 or complex128, got "
                         f"{x.dtype.name}; convert it first")
    if fft_type == "IRFFT":
        want = (*fft_length[:-1], fft_length[-1] // 2 + 1)
        if tuple(tail) != want:
            raise ShapeError(f"fft (IRFFT): the trailing axes {tail} must be {want} for "
                             f"fft_length {tuple(fft_length)}")
        return TensorType((*lead, *fft_length), dt.real_dtype(x.dtype))
    if tuple(tail) != tuple(fft_length):
        raise ShapeError(f"fft ({fft_type}): the trailing axes {tail} must equal fft_length "
                         f"{tuple(fft_length)}; pad or slice the operand first")
    return x


def _emit(ctx, x):
    a = ctx.attrs
    return ctx.op("stablehlo.fft", [x], ctx.out_types,
                  f"fft_type = #stablehlo<fft_type {a['fft_type']}>, "
                  f"fft_length = {i64_array(a['fft_length'])}")


def _reference(x, *, fft_type, fft_length):
    k = len(fft_length)
    axes = tuple(range(x.ndim - k, x.ndim))
    if fft_type == "FFT":
        return np.fft.fftn(x, axes=axes).astype(x.dtype)
    if fft_type == "IFFT":
        return np.fft.ifftn(x, axes=axes).astype(x.dtype)
    if fft_type == "RFFT":
        return np.fft.rfftn(x, axes=axes).astype(dt.complex_dtype(dt.dtype(x.dtype)).np)
    return np.fft.irfftn(x, s=fft_length, axes=axes).astype(
        dt.real_dtype(dt.dtype(x.dtype)).np)


def _vjp(ops, cts, primals, outs, *, fft_type, fft_length):
    (ct,) = cts
    if ct is None:
        return (None,)
    fl = tuple(fft_length)
    if fft_type in ("FFT", "IFFT"):  # the DFT matrix is symmetric: its transpose is itself
        return (ops.bind(fft, ct, fft_type=fft_type, fft_length=fl),)
    if fft_type == "RFFT":
        # pad the half spectrum with zeros to the full length, full FFT, real part
        pad = fl[-1] - ct.type.shape[-1]
        r = ct.type.ndim
        full = ops.bind(shape_ops.pad, ct, ops.const(0, ct.type.dtype), low=(0,) * r,
                        high=(0,) * (r - 1) + (pad,), interior=(0,) * r)
        return (ops.real(ops.bind(fft, full, fft_type="FFT", fft_length=fl)),)
    # IRFFT: RFFT of the cotangent, interior bins doubled, scaled by 1/n, conjugated
    y = ops.bind(fft, ct, fft_type="RFFT", fft_length=fl)
    m = y.type.shape[-1]
    odd = fl[-1] % 2
    mask = np.concatenate([[1.0], np.full(m - 2 + odd, 2.0), np.ones(1 - odd)])[:m]
    mask = mask / float(np.prod(fl))
    rt = dt.real_dtype(y.type.dtype)
    mask_v = ops.broadcast(ops.bind(shape_ops.constant, value=Literal(mask.astype(rt.np))),
                           y.type.shape, (y.type.ndim - 1,))
    mask_c = ops.convert(mask_v, y.type.dtype)
    return (ops.conj(ops.mul(y, mask_c)),)


fft = Primitive("fft", _rule, _emit, _reference, vjp=_vjp, family="fft")
fft.batch = br.leading(fft)  # it transforms trailing axes, so a leading one is free

PRIMITIVES = [fft]
