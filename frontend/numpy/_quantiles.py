"""Order statistics: quantile, percentile, median and their NaN-ignoring forms.

One sort along the reduced axes (moved last and flattened), then two gathers at the
floor and ceiling of each quantile's position, interpolated by `method` ('linear',
'lower', 'higher', 'midpoint', 'nearest', the methods JAX has). NaNs sort last, so the
NaN-ignoring forms only count the non-NaN entries of each row.
"""

from __future__ import annotations

import math

from ..compiler import dtypes as dt
from ..errors import at_user_line
from ..tensor import Tensor
from ._elementwise import (
    add,
    ceil,
    divide,
    floor,
    isnan,
    logical_not,
    multiply,
    round,
    select,
    subtract,
)
from ._manipulation import moveaxis, reshape
from ._operands import as_tensor, astype, broadcast_to, normalize_axes, to_inexact, values_in
from ._reductions import any, sum
from ._searching import take_along_axis
from ._sorting import sort

_METHODS = ("linear", "lower", "higher", "midpoint", "nearest")


def _rows(a: Tensor, axis) -> tuple[Tensor, tuple[int, ...], tuple[int, ...]]:
    """a with the reduced axes flattened into one last axis; the kept shape and the
    reduced axes."""
    axes = normalize_axes(axis, a.ndim)
    kept = tuple(i for i in range(a.ndim) if i not in axes)
    moved = moveaxis(a, axes, tuple(range(a.ndim - len(axes), a.ndim))) if axes else a
    shape = tuple(a.shape[i] for i in kept)
    return reshape(moved, shape + (math.prod(a.shape[i] for i in axes),)), shape, axes


def _quantile(name: str, a, q, axis, method: str, keepdims: bool, ignore_nan: bool
              ) -> Tensor:
    if method not in _METHODS:
        raise ValueError(at_user_line(f"{name}: method must be one of {', '.join(_METHODS)}, "
                                      f"got {method!r}"))
    a = to_inexact(as_tensor(a))
    if a.dtype.is_complex:
        raise TypeError(at_user_line(f"{name} of complex numbers is not defined"))
    q = values_in(a, q)
    if q.ndim > 1:
        raise ValueError(at_user_line(f"{name}: q must be a scalar or 1-D, got shape {q.shape}"))
    rows, kept_shape, axes = _rows(a, axis)
    n = rows.shape[-1]
    if n == 0:
        raise ValueError(at_user_line(f"{name} of an empty axis is not defined"))
    s = sort(rows, axis=-1)
    if ignore_nan:  # the NaNs sorted last: only the first `count` entries of a row count
        count = sum(logical_not(isnan(rows)), axis=-1, keepdims=True).astype(a.dtype)
        last = subtract(count, 1)
        undefined = count == 0
    else:
        last = broadcast_to(a._backend.scalar(n - 1, a.dtype), kept_shape + (1,))
        undefined = any(isnan(rows), axis=-1, keepdims=True)
    qs = reshape(q, (1,) * len(kept_shape) + (q.size,))
    pos = multiply(qs, last)  # (..., k): the position of each quantile in its sorted row
    lo, hi = floor(pos), ceil(pos)
    if method == "nearest":
        lo = hi = round(pos)  # half to even, as NumPy
    elif method == "lower":
        hi = lo
    elif method == "higher":
        lo = hi

    def at(p):
        i = astype(select(p < 0, 0, p), dt.int64)  # all-NaN rows of the nan* forms
        return take_along_axis(s, broadcast_to(i, kept_shape + (q.size,)), axis=-1)

    low, high = at(lo), at(hi)
    if method == "midpoint":
        out = multiply(add(low, high), 0.5)
    else:
        t = subtract(pos, lo)
        diff = subtract(high, low)
        # NumPy's lerp: from the nearer end, so that t = 1 gives `high` exactly
        out = select(t >= 0.5, subtract(high, multiply(diff, subtract(1, t))),
                     add(low, multiply(diff, t)))
    nan = a._backend.scalar(float("nan"), a.dtype)
    out = select(undefined, nan, out)
    out = moveaxis(out, -1, 0)  # q's axis first, as NumPy
    if keepdims:
        out = reshape(out, (q.size,) + tuple(1 if i in axes else a.shape[i]
                                             for i in range(a.ndim)))
    return reshape(out, out.shape[1:]) if q.ndim == 0 else out


def quantile(a, q, axis=None, method: str = "linear", keepdims: bool = False) -> Tensor:
    """The q-th quantiles (0 <= q <= 1) along `axis` (all axes by default)."""
    return _quantile("quantile", a, q, axis, method, keepdims, False)


def percentile(a, q, axis=None, method: str = "linear", keepdims: bool = False) -> Tensor:
    """The q-th percentiles (0 <= q <= 100) along `axis`."""
    a = to_inexact(as_tensor(a))
    return _quantile("percentile", a, _fractions(q, a), axis, method, keepdims, False)


def median(a, axis=None, keepdims: bool = False) -> Tensor:
    return _quantile("median", a, 0.5, axis, "linear", keepdims, False)


def nanquantile(a, q, axis=None, method: str = "linear", keepdims: bool = False) -> Tensor:
    """quantile over the non-NaN entries (NaN where a slice has none)."""
    return _quantile("nanquantile", a, q, axis, method, keepdims, True)


def nanpercentile(a, q, axis=None, method: str = "linear", keepdims: bool = False
                  ) -> Tensor:
    a = to_inexact(as_tensor(a))
    return _quantile("nanpercentile", a, _fractions(q, a), axis, method, keepdims, True)


def nanmedian(a, axis=None, keepdims: bool = False) -> Tensor:
    return _quantile("nanmedian", a, 0.5, axis, "linear", keepdims, True)


def _fractions(q, a: Tensor) -> Tensor:
    """Percentages as fractions, in a's dtype."""
    return divide(values_in(a, q), 100)
