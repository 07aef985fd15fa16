"""stablejit.numpy.fft: NumPy's discrete Fourier transforms over the `fft` primitive.

Axes are moved to the end (the primitive transforms trailing axes), inputs are
cropped or zero-padded to `n` / `s`, and `norm` ("backward", "ortho", "forward")
scales as in NumPy. float64/complex128 stay double precision, other floats compute in
float32/complex64, and integers in the default float (float64 in x64 mode).
"""

from __future__ import annotations

import math

import numpy as np

from ..compiler import dtypes as dt
from ..compiler.primitives import fft as fft_family
from ..dispatch import bind1
from ..errors import at_user_line
from ..promotion import default_complex, default_float
from ..tensor import Tensor
from ._creation import zeros
from ._elementwise import conj
from ._manipulation import concatenate, moveaxis
from ._operands import as_tensor, asarray, normalize_axis

__all__ = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "fftn", "ifftn",
           "rfftn", "irfftn", "rfft2", "irfft2",
           "fftfreq", "rfftfreq", "fftshift", "ifftshift"]


def _complex(x: Tensor) -> Tensor:
    d = dt.complex128 if x.dtype in (dt.float64, dt.complex128) else dt.complex64 \
        if x.dtype.is_inexact else default_complex()  # integers: the default complex
    return x if x.dtype is d else x.astype(d)


def _real(x: Tensor) -> Tensor:
    if x.dtype.is_complex:
        raise TypeError(at_user_line("rfft needs real input; use fft for complex data"))
    d = dt.float64 if x.dtype is dt.float64 else dt.float32 if x.dtype.is_inexact \
        else default_float()
    return x if x.dtype is d else x.astype(d)


def _fit(x: Tensor, axis: int, n: int) -> Tensor:
    """Crop or zero-pad axis to length n."""
    size = x.shape[axis]
    if n < 1:
        raise ValueError(at_user_line(f"fft: invalid number of points n={n}; it must be >= 1"))
    if n == size:
        return x
    if n < size:
        idx = [slice(None)] * x.ndim
        idx[axis] = slice(0, n)
        return x[tuple(idx)]
    shape = list(x.shape)
    shape[axis] = n - size
    return concatenate([x, zeros(tuple(shape), dtype=x.dtype)], axis=axis)


def _axes_and_sizes(x: Tensor, s, axes, default_all: bool = True):
    if axes is None:
        axes = tuple(range(x.ndim)) if s is None else tuple(range(x.ndim - len(s), x.ndim))
    axes = tuple(normalize_axis(a, x.ndim) for a in (axes if not isinstance(axes, int)
                                                    else (axes,)))
    if len(set(axes)) != len(axes):
        raise ValueError(at_user_line(f"fft: repeated axis in {axes}"))
    if s is not None and len(s) != len(axes):
        raise ValueError(at_user_line(f"fft: s {tuple(s)} and axes {axes} differ in length"))
    return axes, s


def _scale(x: Tensor, norm, n: int, inverse: bool) -> Tensor:
    if norm in (None, "backward"):
        return x
    if norm == "ortho":
        return x * (1.0 / math.sqrt(n) if n else 1.0) if not inverse else x * math.sqrt(n)
    if norm == "forward":
        return x * (1.0 / n) if not inverse else x * float(n)
    raise ValueError(at_user_line(f"fft: norm must be 'backward', 'ortho' or 'forward', got "
                                  f"{norm!r}"))


def _transform(x, s, axes, norm, kind: str) -> Tensor:
    x = as_tensor(x)
    axes, s = _axes_and_sizes(x, s, axes)
    if not axes:
        return x
    x = _real(x) if kind == "RFFT" else _complex(x)
    # the primitive handles up to 3 trailing axes; do more in chunks of 3 (separable)
    if len(axes) > 3 and kind in ("FFT", "IFFT"):
        y = _transform(x, None if s is None else s[:-3], axes[:-3], norm, kind)
        return _transform(y, None if s is None else s[-3:], axes[-3:], norm, kind)
    if len(axes) > 3:
        raise NotImplementedError(at_user_line("rfftn/irfftn over more than 3 axes is not "
                                               "supported; split it into fftn and rfftn"))
    k = len(axes)
    lengths = []
    for i, a in enumerate(axes):
        last = i == k - 1
        if s is not None:
            n = int(s[i])
        elif kind == "IRFFT" and last:
            n = 2 * (x.shape[a] - 1)
        else:
            n = x.shape[a]
        fit = n // 2 + 1 if kind == "IRFFT" and last else n
        x = _fit(x, a, fit)
        lengths.append(n)
    dest = tuple(range(x.ndim - k, x.ndim))
    x = moveaxis(x, axes, dest)
    y = bind1(fft_family.fft, x, fft_type=kind, fft_length=tuple(lengths))
    y = moveaxis(y, dest, axes)
    return _scale(y, norm, math.prod(lengths), kind in ("IFFT", "IRFFT"))


def fft(a, n=None, axis: int = -1, norm=None) -> Tensor:
    """The one-dimensional discrete Fourier transform along `axis`, as numpy.fft.fft.

    a: the input (integers and booleans become the default float, real inputs complex).
    n: the length of the transformed axis: the input is cut or zero-padded to n (default:
    its length). axis: the axis to transform. norm: 'backward' (default: no scaling forward,
    1/n back), 'ortho' (1/sqrt(n) both ways) or 'forward' (1/n forward).

    Returns a complex tensor (complex64 unless a is float64 or complex128).

    Raises:
        ValueError: if n < 1 or norm is unknown.

    Example:
        >>> snp.fft.fft(snp.asarray([1.0, 0.0, 0.0, 0.0]))
        Tensor<c64[4] xla:host:0>
        [1.+0.j, 1.+0.j, 1.+0.j, 1.+0.j]
    """
    return _transform(a, None if n is None else (n,), (axis,), norm, "FFT")


def ifft(a, n=None, axis: int = -1, norm=None) -> Tensor:
    """The inverse of fft along `axis`, as numpy.fft.ifft.

    a: the input (integers and booleans become the default float, real inputs complex).
    n: the length of the transformed axis: the input is cut or zero-padded to n (default:
    its length). axis: the axis to transform. norm: 'backward' (default: no scaling forward,
    1/n back), 'ortho' (1/sqrt(n) both ways) or 'forward' (1/n forward).

    Returns a complex tensor.

    Example:
        >>> snp.fft.ifft(snp.asarray([4.0, 0.0, 0.0, 0.0]))
        Tensor<c64[4] xla:host:0>
        [1.+0.j, 1.+0.j, 1.+0.j, 1.+0.j]
    """
    return _transform(a, None if n is None else (n,), (axis,), norm, "IFFT")


def rfft(a, n=None, axis: int = -1, norm=None) -> Tensor:
    """The discrete Fourier transform of real input along `axis`: the n // 2 + 1
    non-negative frequencies, as numpy.fft.rfft.

    a: the input (integers and booleans become the default float, real inputs complex).
    n: the length of the transformed axis: the input is cut or zero-padded to n (default:
    its length). axis: the axis to transform. norm: 'backward' (default: no scaling forward,
    1/n back), 'ortho' (1/sqrt(n) both ways) or 'forward' (1/n forward).

    Returns a complex tensor.

    Raises:
        TypeError: if a is complex.

    Example:
        >>> snp.fft.rfft(snp.asarray([1.0, 2.0, 3.0, 4.0]))
        Tensor<c64[3] xla:host:0>
        [10.+0.j, -2.+2.j, -2.+0.j]
    """
    return _transform(a, None if n is None else (n,), (axis,), norm, "RFFT")


def irfft(a, n=None, axis: int = -1, norm=None) -> Tensor:
    """The inverse of rfft: real output of length n (default 2 * (m - 1) for m input
    frequencies), as numpy.fft.irfft.

    a: the input (integers and booleans become the default float, real inputs complex).
    n: the length of the transformed axis: the input is cut or zero-padded to n (default:
    its length). axis: the axis to transform. norm: 'backward' (default: no scaling forward,
    1/n back), 'ortho' (1/sqrt(n) both ways) or 'forward' (1/n forward).

    Returns a real tensor.
    """
    return _transform(a, None if n is None else (n,), (axis,), norm, "IRFFT")


# hfft/ihfft are irfft/rfft of the conjugate with the scaling moved to the other
# direction, as in NumPy ("ortho" stays "ortho")
_SWAPPED_NORM = {None: "forward", "backward": "forward", "forward": "backward",
                 "ortho": "ortho"}


def _swapped(norm):
    if norm not in _SWAPPED_NORM:
        raise ValueError(at_user_line(f"fft: norm must be 'backward', 'ortho' or 'forward', "
                                      f"got {norm!r}"))
    return _SWAPPED_NORM[norm]


def hfft(a, n=None, axis: int = -1, norm=None) -> Tensor:
    """The real spectrum of a Hermitian-symmetric signal given by its first half."""
    return irfft(conj(_complex(as_tensor(a))), n, axis, _swapped(norm))


def ihfft(a, n=None, axis: int = -1, norm=None) -> Tensor:
    """The first half of the Hermitian spectrum of a real signal (inverse of hfft)."""
    # (a list of traced values is stacked, as jax's ihfft does)
    return conj(rfft(as_tensor(a, stack=True), n, axis, _swapped(norm)))


def fftn(a, s=None, axes=None, norm=None) -> Tensor:
    """The n-dimensional discrete Fourier transform, as numpy.fft.fftn.

    a: the input. s: the lengths of the transformed axes (the input is cut or
    zero-padded; default: their lengths). axes: the axes to transform (default:
    every axis, or the last len(s)). norm: 'backward' (default), 'ortho' or 'forward', as for fft.

    Returns a complex tensor.
    """
    return _transform(a, s, axes, norm, "FFT")


def ifftn(a, s=None, axes=None, norm=None) -> Tensor:
    """The inverse of fftn, as numpy.fft.ifftn.

    a: the input. s: the lengths of the transformed axes (the input is cut or
    zero-padded; default: their lengths). axes: the axes to transform (default:
    every axis, or the last len(s)). norm: 'backward' (default), 'ortho' or 'forward', as for fft.

    Returns a complex tensor.
    """
    return _transform(a, s, axes, norm, "IFFT")


def rfftn(a, s=None, axes=None, norm=None) -> Tensor:
    """The n-dimensional transform of real input; the last axis keeps its
    non-negative frequencies, as numpy.fft.rfftn.

    a: the input. s: the lengths of the transformed axes (the input is cut or
    zero-padded; default: their lengths). axes: the axes to transform (default:
    every axis, or the last len(s)). norm: 'backward' (default), 'ortho' or 'forward', as for fft.

    Returns a complex tensor.
    """
    return _transform(a, s, axes, norm, "RFFT")


def irfftn(a, s=None, axes=None, norm=None) -> Tensor:
    """The inverse of rfftn, with real output, as numpy.fft.irfftn.

    a: the input. s: the lengths of the transformed axes (the input is cut or
    zero-padded; default: their lengths). axes: the axes to transform (default:
    every axis, or the last len(s)). norm: 'backward' (default), 'ortho' or 'forward', as for fft.

    Returns a real tensor.
    """
    return _transform(a, s, axes, norm, "IRFFT")


def fft2(a, s=None, axes=(-2, -1), norm=None) -> Tensor:
    """The two-dimensional discrete Fourier transform, as numpy.fft.fft2.

    a: the input. s: the lengths of the transformed axes (the input is cut or
    zero-padded; default: their lengths). axes: the axes to transform (default:
    the last two). norm: 'backward' (default), 'ortho' or 'forward', as for fft.

    Returns a complex tensor.
    """
    return fftn(a, s, axes, norm)


def ifft2(a, s=None, axes=(-2, -1), norm=None) -> Tensor:
    """The inverse of fft2, as numpy.fft.ifft2.

    a: the input. s: the lengths of the transformed axes (the input is cut or
    zero-padded; default: their lengths). axes: the axes to transform (default:
    the last two). norm: 'backward' (default), 'ortho' or 'forward', as for fft.

    Returns a complex tensor.
    """
    return ifftn(a, s, axes, norm)


def rfft2(a, s=None, axes=(-2, -1), norm=None) -> Tensor:
    """The two-dimensional transform of real input, as numpy.fft.rfft2.

    a: the input. s: the lengths of the transformed axes (the input is cut or
    zero-padded; default: their lengths). axes: the axes to transform (default:
    the last two). norm: 'backward' (default), 'ortho' or 'forward', as for fft.

    Returns a complex tensor.
    """
    return rfftn(a, s, axes, norm)


def irfft2(a, s=None, axes=(-2, -1), norm=None) -> Tensor:
    """The inverse of rfft2, with real output, as numpy.fft.irfft2.

    a: the input. s: the lengths of the transformed axes (the input is cut or
    zero-padded; default: their lengths). axes: the axes to transform (default:
    the last two). norm: 'backward' (default), 'ortho' or 'forward', as for fft.

    Returns a real tensor.
    """
    return irfftn(a, s, axes, norm)


def fftfreq(n: int, d: float = 1.0, *, dtype=None, device=None) -> Tensor:
    """The sample frequencies of an n-point fft with sample spacing d:
    [0, 1, ..., n/2-1, -n/2, ..., -1] / (d * n), as numpy.fft.fftfreq.

    dtype: the result's float dtype (default: the default float); device: where it lives.

    Returns a 1-d tensor of n frequencies.
    """
    return asarray(np.fft.fftfreq(n, d).astype(dt.dtype(dtype or default_float()).np),
                   device=device)


def rfftfreq(n: int, d: float = 1.0, *, dtype=None, device=None) -> Tensor:
    """The sample frequencies of an n-point rfft with sample spacing d:
    [0, 1, ..., n // 2] / (d * n), as numpy.fft.rfftfreq.

    dtype: the result's float dtype (default: the default float); device: where it lives.

    Returns a 1-d tensor of n // 2 + 1 frequencies.
    """
    return asarray(np.fft.rfftfreq(n, d).astype(dt.dtype(dtype or default_float()).np),
                   device=device)


def _shift(x, axes, inverse: bool) -> Tensor:
    x = as_tensor(x)
    axes = tuple(range(x.ndim)) if axes is None else (
        (axes,) if isinstance(axes, int) else tuple(axes))
    for a in axes:
        a = normalize_axis(a, x.ndim)
        n = x.shape[a]
        k = (n + 1) // 2 if inverse else n // 2  # roll forward by n//2 (fftshift)
        if n == 0 or k % n == 0:
            continue
        lo = [slice(None)] * x.ndim
        hi = [slice(None)] * x.ndim
        lo[a] = slice(n - k, n)
        hi[a] = slice(0, n - k)
        x = concatenate([x[tuple(lo)], x[tuple(hi)]], axis=a)
    return x


def fftshift(x, axes=None) -> Tensor:
    """x with the zero frequency moved to the middle of `axes` (default: every
    axis), as numpy.fft.fftshift.

    Returns a tensor of x's shape and dtype.
    """
    return _shift(x, axes, False)


def ifftshift(x, axes=None) -> Tensor:
    """The inverse of fftshift, as numpy.fft.ifftshift.

    Returns a tensor of x's shape and dtype.
    """
    return _shift(x, axes, True)


def __dir__() -> list[str]:  # dir(), help() and tab completion show the public names only
    return sorted(__all__)
