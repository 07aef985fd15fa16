"""Window functions of signal processing: bartlett, blackman, hamming and hanning (kaiser,
which needs scipy.special's i0, is in numpy_composed.py, above the scipy layer).

M is a static window length, as in JAX; the windows have the default float dtype. The
cosines are computed in float64 and rounded once, so the float32 windows are correctly
rounded.
"""

from __future__ import annotations

import operator

from ..compiler import dtypes as dt
from ..errors import at_user_line
from ..promotion import default_float
from ..tensor import Tensor
from ._creation import arange, ones
from ._elementwise import abs, cos, subtract
from ._operands import astype


def window_length(M, name: str) -> int:
    try:
        return operator.index(M)
    except TypeError:
        raise TypeError(at_user_line(
            f"{name}: M must be a static integer window length, got {type(M).__name__}; "
            f"inside jit mark it static (static_argnums)")) from None


def _cosine_sum(M, name: str, coefficients) -> Tensor:
    """sum_k (-1)**k a_k cos(2 pi k n / (M - 1)) for n = 0 .. M-1: the cosine windows."""
    m = window_length(M, name)
    if m < 1:
        return ones((0,), default_float())
    if m == 1:
        return ones((1,), default_float())
    n = arange(m, dtype=dt.float64)
    out = 0.0
    for k, a in enumerate(coefficients):
        out = out + (-1) ** k * a * cos(n * (2.0 * 3.141592653589793 * k / (m - 1)))
    return astype(out, default_float())


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
    m = window_length(M, "bartlett")
    if m <= 1:
        return ones((max(m, 0),), default_float())
    n = arange(m, dtype=dt.float64)
    return astype(subtract(1.0, abs(subtract(n * 2.0, m - 1)) / (m - 1)), default_float())


__all__ = ["bartlett", "blackman", "hamming", "hanning"]
