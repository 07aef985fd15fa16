"""Statistics beyond the core reductions: NaN-ignoring reductions, average, ptp.

(sum, prod, mean, var and std with the array API's `correction` live in _reductions.)
NaN-ignoring reductions replace NaNs by the reduction's identity, which keeps shapes
static inside jit.
"""

from __future__ import annotations

from ..errors import at_user_line
from ..tensor import Tensor
from ._elementwise import (
    conj,
    divide,
    isnan,
    logical_not,
    multiply,
    real,
    select,
    sqrt,
    subtract,
)
from ._operands import (
    as_tensor,
    astype,
    broadcast_to,
    full_like_tensor,
    normalize_axes,
    to_inexact,
)
from ._reductions import all, max, mean, min, prod, sum


def _nan_fill(x: Tensor, value) -> Tensor:
    if not x.dtype.is_inexact:
        return x
    return select(isnan(x), full_like_tensor(value, x), x)


def nansum(x, axis=None, dtype=None, keepdims: bool = False) -> Tensor:
    """sum treating NaNs as zero."""
    return sum(_nan_fill(as_tensor(x), 0), axis, dtype, keepdims)


def nanprod(x, axis=None, dtype=None, keepdims: bool = False) -> Tensor:
    """prod treating NaNs as one."""
    return prod(_nan_fill(as_tensor(x), 1), axis, dtype, keepdims)


def _count_valid(x: Tensor, axis, keepdims: bool) -> Tensor:
    return sum(logical_not(isnan(x)), axis, keepdims=keepdims)


def nanmean(x, axis=None, dtype=None, keepdims: bool = False) -> Tensor:
    """mean over the non-NaN elements (NaN where all are NaN)."""
    x = to_inexact(as_tensor(x))
    if dtype is not None:
        x = astype(x, dtype)
    total = nansum(x, axis, keepdims=keepdims)
    n = _count_valid(x, axis, keepdims)
    return divide(total, n.astype(total.dtype if not total.dtype.is_complex else "float64"))


def nanvar(x, axis=None, dtype=None, keepdims: bool = False, *, correction: float = 0,
           ddof=None) -> Tensor:
    """var over the non-NaN elements."""
    x = to_inexact(as_tensor(x))
    correction = ddof if ddof is not None else correction
    m = nanmean(x, axis, keepdims=True)
    d = _nan_fill(subtract(x, m), 0)
    sq = real(multiply(d, conj(d)))
    n = _count_valid(x, axis, keepdims).astype(sq.dtype) - correction
    out = divide(sum(sq, axis, keepdims=keepdims), n)
    return select(n > 0, out, full_like_tensor(float("nan"), out))


def nanstd(x, axis=None, dtype=None, keepdims: bool = False, *, correction: float = 0,
           ddof=None) -> Tensor:
    return sqrt(nanvar(x, axis, dtype, keepdims, correction=correction, ddof=ddof))


def _nan_extreme(kind: str, x, axis, keepdims: bool) -> Tensor:
    x = as_tensor(x)
    if not x.dtype.is_inexact:
        return (max if kind == "max" else min)(x, axis, keepdims)
    fill = float("-inf") if kind == "max" else float("inf")
    out = (max if kind == "max" else min)(_nan_fill(x, fill), axis, keepdims)
    all_nan = all(isnan(x), axis, keepdims)
    return select(all_nan, full_like_tensor(float("nan"), out), out)


def nanmax(x, axis=None, keepdims: bool = False) -> Tensor:
    """max ignoring NaNs (NaN where all are NaN)."""
    return _nan_extreme("max", x, axis, keepdims)


def nanmin(x, axis=None, keepdims: bool = False) -> Tensor:
    """min ignoring NaNs (NaN where all are NaN)."""
    return _nan_extreme("min", x, axis, keepdims)


def ptp(x, axis=None, keepdims: bool = False) -> Tensor:
    """max - min ("peak to peak")."""
    return subtract(max(x, axis, keepdims), min(x, axis, keepdims))


def average(a, axis=None, weights=None, returned: bool = False, *, keepdims: bool = False):
    """The weighted mean; weights broadcast along `axis` when they are 1-D."""
    a = to_inexact(as_tensor(a))
    if weights is None:
        avg = mean(a, axis, keepdims=keepdims)
        if not returned:
            return avg
        axes = normalize_axes(axis, a.ndim)
        n = 1
        for ax in axes:
            n *= a.shape[ax]
        return avg, full_like_tensor(float(n), avg)
    w = as_tensor(weights, a)
    if w.shape != a.shape:
        if axis is None or w.ndim != 1 or isinstance(axis, (tuple, list)):
            raise ValueError(at_user_line(
                f"average: weights of shape {w.shape} differ from a's {a.shape}; 1-D weights "
                f"need a single axis"))
        (ax,) = normalize_axes(axis, a.ndim)
        if w.shape[0] != a.shape[ax]:
            raise ValueError(at_user_line(f"average: {w.shape[0]} weights for axis {ax} of "
                                          f"size {a.shape[ax]}"))
        shape = [1] * a.ndim
        shape[ax] = w.shape[0]
        w = broadcast_to(w.reshape(tuple(shape)), a.shape)
    wsum = sum(w, axis, keepdims=keepdims)
    avg = divide(sum(multiply(a, w), axis, keepdims=keepdims), wsum)
    if returned:
        return avg, broadcast_to(wsum.astype(avg.dtype), avg.shape)
    return avg
