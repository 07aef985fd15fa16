"""Window functions of signal processing: bartlett, blackman, hamming, hanning and kaiser,
and i0 (the modified Bessel function of order 0 that kaiser needs).

M is a static window length, as in JAX; the windows have the default float dtype
(kaiser: beta's floating dtype when it is a floating tensor). The cosines are computed
in float64 and rounded once, so the float32 windows are correctly rounded.
"""

from __future__ import annotations

import operator

from ..compiler import dtypes as dt
from ..errors import at_user_line
from ..promotion import DEFAULT_FLOAT
from ..tensor import Tensor
from ._creation import arange, ones
from ._elementwise import abs, cos, divide, select, sqrt, subtract
from ._operands import as_tensor, astype, to_inexact


def i0(x) -> Tensor:
    """The modified Bessel function of the first kind of order 0, elementwise
    (stablejit.scipy.special.i0: integers become the default float)."""
    from ..scipy._bessel import i0 as _i0  # stablejit.scipy imports this namespace
    return _i0(x)


def _length(M, name: str) -> int:
    try:
        return operator.index(M)
    except TypeError:
        raise TypeError(at_user_line(
            f"{name}: M must be a static integer window length, got {type(M).__name__}; "
            f"inside jit mark it static (static_argnums)")) from None


def _cosine_sum(M, name: str, coefficients) -> Tensor:
    """sum_k (-1)**k a_k cos(2 pi k n / (M - 1)) for n = 0 .. M-1: the cosine windows."""
    m = _length(M, name)
    if m < 1:
        return ones((0,), DEFAULT_FLOAT)
    if m == 1:
        return ones((1,), DEFAULT_FLOAT)
    n = arange(m, dtype=dt.float64)
    out = 0.0
    for k, a in enumerate(coefficients):
        out = out + (-1) ** k * a * cos(n * (2.0 * 3.141592653589793 * k / (m - 1)))
    return astype(out, DEFAULT_FLOAT)


def hamming(M) -> Tensor:
    """The Hamming window: 0.54 - 0.46 cos(2 pi n / (M - 1))."""
    return _cosine_sum(M, "hamming", (0.54, 0.46))


def hanning(M) -> Tensor:
    """The Hann window: 0.5 - 0.5 cos(2 pi n / (M - 1))."""
    return _cosine_sum(M, "hanning", (0.5, 0.5))


def blackman(M) -> Tensor:
    """The Blackman window: 0.42 - 0.5 cos(2 pi n / (M - 1)) + 0.08 cos(4 pi n / (M - 1))."""
    return _cosine_sum(M, "blackman", (0.42, 0.5, 0.08))


def bartlett(M) -> Tensor:
    """The Bartlett (triangular) window: 1 - |2n - (M - 1)| / (M - 1)."""
    m = _length(M, "bartlett")
    if m <= 1:
        return ones((max(m, 0),), DEFAULT_FLOAT)
    n = arange(m, dtype=dt.float64)
    return astype(subtract(1.0, abs(subtract(n * 2.0, m - 1)) / (m - 1)), DEFAULT_FLOAT)


def kaiser(M, beta) -> Tensor:
    """The Kaiser window: i0(beta sqrt(1 - ((n - a) / a)**2)) / i0(beta), a = (M - 1) / 2.
    beta may be a traced value."""
    m = _length(M, "kaiser")
    b = to_inexact(as_tensor(beta))
    out_dtype = DEFAULT_FLOAT if b.weak else b.dtype
    if b.dtype.is_complex:
        raise TypeError(at_user_line("kaiser: beta must be real, got a complex value"))
    if m <= 1:
        return ones((max(m, 0),), out_dtype)
    alpha = (m - 1) / 2.0
    r = divide(subtract(arange(m, dtype=dt.float64), alpha), alpha)
    arg = sqrt(select(abs(r) > 1.0, 0.0, subtract(1.0, r * r)))  # rounding: keep it real
    work = dt.float64 if out_dtype is dt.float64 else dt.float32
    bw = astype(b, work)
    return astype(divide(i0(bw * astype(arg, work)), i0(bw)), out_dtype)


__all__ = ["bartlett", "blackman", "hamming", "hanning", "i0", "kaiser"]
