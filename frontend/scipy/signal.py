"""stablejit.scipy.signal: N-d convolution and correlation (direct, by XLA's
convolution, or by FFT), as jax.scipy.signal; checked against scipy.signal.

Modes are SciPy's: "full" (every overlap), "same" (centred, in1's shape), "valid" (full
overlaps only; one input must be at least as large as the other in every dimension).
"""

from __future__ import annotations

import builtins

from .. import conv as _conv
from .. import numpy as snp
from ..errors import at_user_line
from ..tensor import Tensor

_MODES = ("full", "same", "valid")


def _operands(name: str, in1, in2, mode: str) -> tuple[Tensor, Tensor]:
    if mode not in _MODES:
        raise ValueError(at_user_line(f"{name}: mode must be one of {_MODES}, got {mode!r}"))
    a, b = snp.asarray(in1), snp.asarray(in2)
    if a.ndim != b.ndim:
        raise ValueError(at_user_line(
            f"{name}: in1 and in2 need the same number of dimensions, got {a.ndim} and "
            f"{b.ndim}"))
    if a.size == 0 or b.size == 0:
        raise ValueError(at_user_line(f"{name}: in1 and in2 must not be empty"))
    pairs = list(zip(a.shape, b.shape, strict=True))
    if mode == "valid" and not (builtins.all(p >= q for p, q in pairs)
                                or builtins.all(p <= q for p, q in pairs)):
        raise ValueError(at_user_line(
            f"{name}: in 'valid' mode one input must be at least as large as the other in "
            f"every dimension, got shapes {a.shape} and {b.shape}"))
    kind = snp.result_type(a, b)
    if kind.kind not in "fc":  # (integers and booleans: the default float, as jax)
        kind = snp.asarray(0.0).dtype
    return snp.astype(a, kind), snp.astype(b, kind)


def _window(full: Tensor, in1_shape, in2_shape, mode: str) -> Tensor:
    """The part of a full convolution that `mode` keeps (SciPy's centring for same)."""
    if mode == "full":
        return full
    if mode == "same":
        starts = [(f - s) // 2 for f, s in zip(full.shape, in1_shape, strict=True)]
        sizes = in1_shape
    else:
        pairs = list(zip(in1_shape, in2_shape, strict=True))
        sizes = [builtins.max(p, q) - builtins.min(p, q) + 1 for p, q in pairs]
        starts = [builtins.min(p, q) - 1 for p, q in pairs]
    return full[tuple(slice(s, s + n) for s, n in zip(starts, sizes, strict=True))]


def _direct_full(a: Tensor, b: Tensor, precision) -> Tensor:
    """The full convolution of a and b by one XLA convolution (b flipped, both padded)."""
    if a.dtype.kind == "c":  # (by real products: XLA's CPU convolution is real)
        (ar, ai), (br, bi) = (snp.real(a), snp.imag(a)), (snp.real(b), snp.imag(b))
        real = _direct_full(ar, br, precision) - _direct_full(ai, bi, precision)
        imag = _direct_full(ar, bi, precision) + _direct_full(ai, br, precision)
        return real + imag * 1j
    kernel = snp.flip(b)
    pads = [(n - 1, n - 1) for n in b.shape]
    out = _conv.conv_general(a[None, None], kernel[None, None], (1,) * a.ndim, pads,
                             precision=precision)
    return out[0, 0]


def _fft_full(a: Tensor, b: Tensor, axes=None) -> Tensor:
    axes = tuple(range(a.ndim)) if axes is None else tuple(a_ % a.ndim for a_ in axes)
    shape = [a.shape[i] + b.shape[i] - 1 for i in axes]
    if a.dtype.kind == "c" or b.dtype.kind == "c":
        return snp.fft.ifftn(snp.fft.fftn(a, shape, axes) * snp.fft.fftn(b, shape, axes),
                             shape, axes)
    return snp.fft.irfftn(snp.fft.rfftn(a, shape, axes) * snp.fft.rfftn(b, shape, axes),
                          shape, axes)


def convolve(in1, in2, mode: str = "full", method: str = "auto",
             precision=None) -> Tensor:
    """The N-d convolution of in1 and in2 (scipy.signal.convolve). method "direct" (and
    "auto") uses XLA's convolution; "fft" multiplies FFTs (faster for large kernels, a
    rounding error of about eps * the sum of magnitudes)."""
    if method not in ("auto", "direct", "fft"):
        raise ValueError(at_user_line(
            f"convolve: method must be 'auto', 'direct' or 'fft', got {method!r}"))
    a, b = _operands("convolve", in1, in2, mode)
    full = _fft_full(a, b) if method == "fft" else _direct_full(a, b, precision)
    return _window(full, a.shape, b.shape, mode)


def correlate(in1, in2, mode: str = "full", method: str = "auto",
              precision=None) -> Tensor:
    """The N-d cross-correlation of in1 and in2 (scipy.signal.correlate): in1 against
    in2 shifted, in2 conjugated."""
    a, b = _operands("correlate", in1, in2, mode)
    return convolve(a, snp.flip(snp.conj(b) if b.dtype.kind == "c" else b), mode, method,
                    precision)


def fftconvolve(in1, in2, mode: str = "full", axes=None) -> Tensor:
    """The convolution of in1 and in2 by FFTs (scipy.signal.fftconvolve), over `axes`
    (default all; the other axes broadcast)."""
    a, b = _operands("fftconvolve", in1, in2, "full" if mode == "valid" and axes else mode)
    if axes is None:
        return _window(_fft_full(a, b), a.shape, b.shape, mode)
    full = _fft_full(a, b, axes)
    axes = tuple(x % a.ndim for x in axes)
    index = []
    for i in range(a.ndim):
        if i not in axes:
            index.append(slice(None))
            continue
        f, p, q = full.shape[i], a.shape[i], b.shape[i]
        if mode == "full":
            index.append(slice(None))
        elif mode == "same":
            index.append(slice((f - p) // 2, (f - p) // 2 + p))
        else:
            index.append(slice(builtins.min(p, q) - 1, builtins.max(p, q)))
    return full[tuple(index)]


def _two_d(name: str, in1, in2, boundary: str, fillvalue):
    if boundary != "fill" or fillvalue != 0:
        raise NotImplementedError(at_user_line(
            f"{name}: only boundary='fill' with fillvalue=0 is supported (as in jax); pad "
            f"the input with snp.pad(mode='wrap' / 'symmetric') and use mode='valid'"))
    if snp.ndim(in1) != 2 or snp.ndim(in2) != 2:
        raise ValueError(at_user_line(f"{name}: in1 and in2 must be 2-d"))


def convolve2d(in1, in2, mode: str = "full", boundary: str = "fill", fillvalue=0,
               precision=None) -> Tensor:
    """The 2-d convolution of in1 and in2 (scipy.signal.convolve2d; zero fill only)."""
    _two_d("convolve2d", in1, in2, boundary, fillvalue)
    return convolve(in1, in2, mode, "direct", precision)


def correlate2d(in1, in2, mode: str = "full", boundary: str = "fill", fillvalue=0,
                precision=None) -> Tensor:
    """The 2-d cross-correlation of in1 and in2 (scipy.signal.correlate2d; zero fill
    only)."""
    _two_d("correlate2d", in1, in2, boundary, fillvalue)
    a, b = snp.asarray(in1), snp.asarray(in2)
    if mode == "valid" and a.shape != b.shape and builtins.all(
            p <= q for p, q in zip(a.shape, b.shape, strict=True)):
        # SciPy swaps the inputs here and reverses the result without conjugating it
        return snp.flip(correlate(b, a, mode, "direct", precision))
    if mode != "same":
        return correlate(a, b, mode, "direct", precision)
    # SciPy centres correlate2d's 'same' window half a sample later than correlate's
    full = correlate(a, b, "full", "direct", precision)
    starts = [(f - n + 1) // 2 for f, n in zip(full.shape, a.shape, strict=True)]
    return full[tuple(slice(i, i + n) for i, n in zip(starts, a.shape, strict=True))]


__all__ = ["convolve", "convolve2d", "correlate", "correlate2d", "fftconvolve"]


def __dir__() -> list[str]:  # dir(), help() and tab completion show the public names only
    return sorted(__all__)
