"""Statistics beyond the core reductions: NaN-ignoring reductions (and nanargmax,
nanargmin), average, ptp, cov and corrcoef.

(sum, prod, mean, var and std with the array API's `correction` live in _reductions.)
NaN-ignoring reductions replace NaNs by the reduction's identity, which keeps shapes
static inside jit.
"""

from __future__ import annotations

import builtins

from ..compiler import dtypes as dt
from ..errors import at_user_line
from ..tensor import Tensor
from ._elementwise import (
    add,
    clip,
    conj,
    divide,
    imag,
    isnan,
    logical_and,
    logical_not,
    maximum,
    multiply,
    real,
    select,
    sqrt,
    subtract,
)
from ._manipulation import concatenate, matrix_transpose, reshape, squeeze
from ._operands import (
    as_tensor,
    astype,
    broadcast_to,
    full_like_tensor,
    normalize_axes,
    to_inexact,
)
from ._products import matmul
from ._reductions import (
    all,
    argmax,
    argmin,
    in_dtype,
    max,
    mean,
    min,
    prod,
    sum,
    variance_operand,
    where_mask,
)


def _nan_fill(x: Tensor, value) -> Tensor:
    if not x.dtype.is_inexact:
        return x
    return select(isnan(x), full_like_tensor(value, x), x)


def nansum(x, axis=None, dtype=None, keepdims: bool = False, *, initial=None,
           where=None) -> Tensor:
    """sum treating NaNs as zero (initial= and where= as sum's)."""
    return sum(_nan_fill(as_tensor(x), 0), axis, dtype, keepdims, initial=initial,
               where=where)


def nanprod(x, axis=None, dtype=None, keepdims: bool = False, *, initial=None,
            where=None) -> Tensor:
    """prod treating NaNs as one (initial= and where= as prod's)."""
    return prod(_nan_fill(as_tensor(x), 1), axis, dtype, keepdims, initial=initial,
                where=where)


def _valid(x: Tensor, where) -> Tensor:
    """The elements a NaN-ignoring statistic takes: not NaN, and selected by where=."""
    ok = logical_not(isnan(x))
    return ok if where is None else logical_and(ok, where_mask(x, where))


def nanmean(x, axis=None, dtype=None, keepdims: bool = False, *, where=None) -> Tensor:
    """mean over the non-NaN elements that where= selects (NaN where there are none)."""
    x = to_inexact(as_tensor(x))
    if dtype is not None and dt.dtype(dtype).is_inexact:
        x = astype(x, dtype)
    ok = _valid(x, where)
    total = sum(_nan_fill(x, 0), axis, keepdims=keepdims, where=ok)
    n = sum(ok, axis, keepdims=keepdims)
    out = divide(total, n.astype(dt.real_dtype(total.dtype)))
    return in_dtype(out, dtype)  # an integer dtype: NumPy and jax truncate, as mean


def nanvar(x, axis=None, dtype=None, out=None, ddof=None, keepdims: bool = False, *,
           where=None, mean=None, correction=None) -> Tensor:  # noqa: A002
    """var over the non-NaN elements that where= selects, with var's parameters."""
    x, correction = variance_operand(x, dtype, out, ddof, correction, "nanvar")
    ok = _valid(x, where)
    m = nanmean(x, axis, keepdims=True, where=ok) if mean is None else as_tensor(mean, x)
    # 0 where x is NaN or not selected (not NaN: a finite gradient there, as jax); the NaN
    # deviation of a selected number (inf - inf) stays NaN, as in NumPy and jax
    d = subtract(x, m)
    d = select(broadcast_to(ok, d.shape), d, full_like_tensor(0, d))
    sq = real(multiply(d, conj(d)))
    n = sum(ok, axis, keepdims=keepdims).astype(sq.dtype) - correction
    out = divide(sum(sq, axis, keepdims=keepdims, where=ok), n)
    return in_dtype(select(n > 0, out, full_like_tensor(float("nan"), out)), dtype)


def nanstd(x, axis=None, dtype=None, out=None, ddof=None, keepdims: bool = False, *,
           where=None, mean=None, correction=None) -> Tensor:  # noqa: A002
    v = nanvar(x, axis, dtype, out, ddof, keepdims, where=where, mean=mean,
               correction=correction)
    return in_dtype(sqrt(real(v) if v.dtype.is_complex else v), dtype)


def _nan_extreme(kind: str, x, axis, keepdims: bool, initial, where) -> Tensor:
    x = as_tensor(x)
    reduce = max if kind == "max" else min
    if not x.dtype.is_inexact:
        return reduce(x, axis, keepdims, initial=initial, where=where)
    fill = float("-inf") if kind == "max" else float("inf")
    out = reduce(_nan_fill(x, fill), axis, keepdims, initial=initial, where=where)
    if initial is not None:  # NumPy's fmax/fmin with an initial value: all NaN gives it
        return out
    all_nan = all(isnan(x), axis, keepdims)
    return select(all_nan, full_like_tensor(float("nan"), out), out)


def nanmax(x, axis=None, keepdims: bool = False, *, initial=None, where=None) -> Tensor:
    """max ignoring NaNs (NaN where all are NaN and no initial= is given)."""
    return _nan_extreme("max", x, axis, keepdims, initial, where)


def nanmin(x, axis=None, keepdims: bool = False, *, initial=None, where=None) -> Tensor:
    """min ignoring NaNs (NaN where all are NaN and no initial= is given)."""
    return _nan_extreme("min", x, axis, keepdims, initial, where)


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


def _nan_arg(kind: str, a, axis, keepdims: bool) -> Tensor:
    x = as_tensor(a)
    find = argmax if kind == "max" else argmin
    if not x.dtype.is_inexact:
        return find(x, axis, keepdims)
    nan = isnan(x)
    out = find(_nan_fill(x, float("-inf") if kind == "max" else float("inf")), axis, keepdims)
    return select(all(nan, axis, keepdims), -1, out)


def nanargmax(a, axis=None, keepdims: bool = False) -> Tensor:
    """argmax ignoring NaNs; -1 where a slice is all NaN (as JAX; NumPy raises)."""
    return _nan_arg("max", a, axis, keepdims)


def nanargmin(a, axis=None, keepdims: bool = False) -> Tensor:
    """argmin ignoring NaNs; -1 where a slice is all NaN (as JAX; NumPy raises)."""
    return _nan_arg("min", a, axis, keepdims)


def _as_rows(x, rowvar: bool, name: str) -> Tensor:
    x = as_tensor(x)
    if x.ndim > 2:
        raise ValueError(at_user_line(f"cov: {name} has shape {x.shape}; it must be 1-D or "
                                      f"2-D (one variable per row)"))
    x = reshape(x, (1, -1)) if x.ndim < 2 else x
    return matrix_transpose(x) if not rowvar and x.shape[0] != 1 else x


def cov(m, y=None, rowvar: bool = True, bias: bool = False, ddof=None, fweights=None,
        aweights=None) -> Tensor:
    """The covariance matrix of the variables in the rows of m (and y); NumPy's
    estimator, with frequency and observation weights."""
    x = _as_rows(m, rowvar, "m")
    if y is not None:
        x = concatenate([x, _as_rows(y, rowvar, "y")], 0)
    x = to_inexact(x)
    if ddof is None:
        ddof = 0 if bias else 1
    w = None
    if fweights is not None:
        w = to_inexact(as_tensor(fweights, x)).astype(dt.real_dtype(x.dtype))
    if aweights is not None:
        aw = to_inexact(as_tensor(aweights, x)).astype(dt.real_dtype(x.dtype))
        w = aw if w is None else multiply(w, aw)
    for name, weights in (("fweights", fweights), ("aweights", aweights)):
        if weights is not None and as_tensor(weights).shape != (x.shape[1],):
            raise ValueError(at_user_line(f"cov: {name} has shape {as_tensor(weights).shape}; "
                                          f"it needs one weight per observation "
                                          f"({x.shape[1]},)"))
    avg, w_sum = average(x, axis=1, weights=w, returned=True)
    w_sum = w_sum[0]
    if w is None:
        fact = x.shape[1] - ddof
    elif ddof == 0:
        fact = w_sum
    elif aweights is None:
        fact = w_sum - ddof
    else:
        fact = w_sum - ddof * sum(multiply(w, aw)) / w_sum
    fact = maximum(fact, 0) if isinstance(fact, Tensor) else builtins.max(fact, 0)
    d = subtract(x, avg[:, None])
    c = matmul(d, conj(matrix_transpose(d if w is None else multiply(d, w))))
    c = divide(c, fact)
    return squeeze(c) if c.shape in ((1, 1),) else c


def corrcoef(x, y=None, rowvar: bool = True) -> Tensor:
    """Pearson correlation coefficients: cov normalised by the standard deviations,
    clipped to [-1, 1]."""
    c = cov(x, y, rowvar)
    if c.ndim == 0:
        return divide(c, c)
    n = c.shape[0]
    d = real(c.reshape(-1)[:: n + 1])
    std = sqrt(d)
    c = divide(divide(c, std[:, None].astype(c.dtype)), std[None, :].astype(c.dtype))
    if c.dtype.is_complex:
        return add(clip(real(c), -1, 1).astype(c.dtype),
                   multiply(clip(imag(c), -1, 1).astype(c.dtype), 1j))
    return clip(c, -1, 1)
