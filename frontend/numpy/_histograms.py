"""Counting into bins: bincount, digitize, histogram, histogram_bin_edges, and the
multidimensional histogram2d and histogramdd.

Bins are found with searchsorted and counted with a scatter-add, so shapes stay static.
bincount's length depends on the data: outside jit it is read from the data, inside
jit pass a static `length=` (as in JAX). Semantics follow JAX where it differs from
NumPy: histogram counts have the dtype of the weights (float when there are none), and
bincount clips negative values to 0, histogramdd's unweighted counts are integers
(the default int).
"""

from __future__ import annotations

import builtins
import operator

import numpy as np

from ..compiler import dtypes as dt
from ..errors import MustCompileError, at_user_line
from ..promotion import DEFAULT_INT
from ..tensor import Tensor
from ._creation import linspace, zeros
from ._elementwise import add, clip, divide, equal, maximum, multiply, select, subtract
from ._manipulation import diff, flip, reshape, stack
from ._operands import as_tensor, astype, promote_operands, to_inexact, values_in
from ._reductions import max, min, sum
from ._searching import searchsorted


def bincount(x, weights=None, minlength: int = 0, *, length=None) -> Tensor:
    """Counts (or summed weights) of each non-negative integer in the 1-D x. The result
    has max(x) + 1 entries (at least minlength), or exactly `length`."""
    x = as_tensor(x)
    if x.dtype is dt.bool_:
        x = astype(x, dt.int32)
    if x.dtype.kind not in "iu":
        raise TypeError(at_user_line(f"bincount needs integers, got {x.dtype}"))
    if x.ndim != 1:
        raise ValueError(at_user_line(f"bincount needs a 1-D tensor, got shape {x.shape}"))
    minlength = operator.index(minlength)
    if length is None:
        if not x._backend.concrete:
            raise MustCompileError(at_user_line(
                "bincount inside jit cannot be compiled without a static length: the number "
                "of bins depends on the largest value, and XLA programs have static shapes. "
                "Pass length=N (values >= N are dropped), or call bincount outside jit"))
        length = builtins.max(minlength, int(x.numpy().max()) + 1 if x.size else 0)
    length = operator.index(length)
    if weights is None:
        w = x._backend.scalar(1, DEFAULT_INT)
        out_dtype = DEFAULT_INT
    else:
        w = as_tensor(weights, x)
        if w.shape != x.shape:
            raise ValueError(at_user_line(f"bincount: weights of shape {w.shape} must have "
                                          f"x's shape {x.shape}"))
        out_dtype = w.dtype
    return zeros(length, out_dtype).at[maximum(x, 0)].add(w)


def digitize(x, bins, right: bool = False) -> Tensor:
    """The index of the bin of each x: bins[i-1] <= x < bins[i] for increasing bins
    (bins[i-1] < x <= bins[i] with right=True); decreasing bins work too."""
    x, b = as_tensor(x), as_tensor(bins)
    if b.ndim != 1:
        raise ValueError(at_user_line(f"digitize: bins must be 1-D, got shape {b.shape}"))
    if b.shape[0] == 0:
        return zeros(x.shape, DEFAULT_INT)
    side = "left" if right else "right"
    increasing = searchsorted(b, x, side=side)
    decreasing = subtract(b.shape[0], searchsorted(flip(b), x, side=side))
    return select(b[-1] >= b[0], increasing, decreasing)


def histogram_bin_edges(a, bins=10, range=None, weights=None) -> Tensor:  # noqa: A002
    """The edges of `bins` equal bins over `range` (default: the data's min and max,
    widened by 0.5 on each side when they are equal), or `bins` itself when it is 1-D."""
    a = to_inexact(as_tensor(a))
    if isinstance(bins, str):
        raise NotImplementedError(at_user_line(
            f"histogram: bins={bins!r} (a NumPy estimator name) is not supported, as in JAX; "
            f"pass a number of bins or the edges"))
    if isinstance(bins, Tensor) or np.ndim(bins) == 1:
        return values_in(a, bins)
    n = operator.index(bins)
    if n < 1:
        raise ValueError(at_user_line(f"histogram: bins must be positive, got {n}"))
    lo, hi = (min(a), max(a)) if range is None else (values_in(a, range[0]),
                                                      values_in(a, range[1]))
    same = equal(lo, hi)
    lo, hi = select(same, lo - 0.5, lo), select(same, hi + 0.5, hi)
    return linspace(lo, hi, n + 1, dtype=a.dtype)


def histogram(a, bins=10, range=None, weights=None,  # noqa: A002
              density=None) -> tuple[Tensor, Tensor]:
    """(counts, edges): how many of a (or how much weight) falls in each bin; the last
    bin includes its right edge. Values outside the edges are not counted."""
    a = to_inexact(as_tensor(a))
    if weights is None:
        w = a._backend.scalar(1, a.dtype)
    else:
        (a, w), _ = promote_operands(a, to_inexact(as_tensor(weights, a)))
        if w.shape != a.shape:
            raise ValueError(at_user_line(f"histogram: weights of shape {w.shape} must have "
                                          f"a's shape {a.shape}"))
    edges = histogram_bin_edges(a, bins, range)
    m = edges.shape[0]
    idx = searchsorted(edges, a, side="right")
    idx = select(equal(a, edges[-1]), m - 1, idx)  # the last bin is closed
    counts = zeros(m, w.dtype).at[idx].add(w)[1:]
    if density:
        counts = divide(divide(counts, diff(edges)), sum(counts))
    return counts, edges


def histogramdd(sample, bins=10, range=None, weights=None,  # noqa: A002
                density=None) -> tuple[Tensor, list[Tensor]]:
    """(counts, edges per dimension) of the N points of the (N, D) sample in a
    D-dimensional grid of bins: bins is one count or edges for all dimensions, or one
    per dimension; range one (lo, hi) (or None) per dimension. Each last bin includes
    its right edge. Without weights the counts are integers."""
    x = to_inexact(as_tensor(sample))
    if x.ndim != 2:
        raise ValueError(at_user_line(f"histogramdd: sample must be 2-D (points, "
                                      f"dimensions), got shape {x.shape}"))
    n, d = x.shape
    if range is not None and len(range) != d:
        raise ValueError(at_user_line(f"histogramdd: range needs one (lo, hi) or None per "
                                      f"dimension ({d}), got {len(range)}"))
    per_dim = bins
    if not isinstance(bins, (list, tuple)) and np.ndim(bins) == 0:
        per_dim = [bins] * d
    elif len(bins) != d:
        raise ValueError(at_user_line(f"histogramdd: bins needs one entry per dimension "
                                      f"({d}) or a single count, got {len(bins)}"))
    if weights is None:
        w, out_dtype = x._backend.scalar(1, DEFAULT_INT), DEFAULT_INT
    else:
        w = as_tensor(weights, x)
        if w.shape != (n,):
            raise ValueError(at_user_line(f"histogramdd: weights must have shape ({n},), got "
                                          f"{w.shape}"))
        out_dtype = w.dtype
    edges, flat, sizes = [], None, []
    for i in builtins.range(d):
        col = x[:, i]
        e = histogram_bin_edges(col, per_dim[i], None if range is None else range[i])
        m = e.shape[0]
        # bin 0 is below the first edge, bin m above the last (both cut off below)
        idx = searchsorted(e, col, side="right")
        idx = clip(select(equal(col, e[-1]), m - 1, idx), 0, m)
        flat = idx if flat is None else add(multiply(flat, m + 1), idx)
        edges.append(e)
        sizes.append(m + 1)
    total = int(np.prod(sizes))
    if flat is None:
        raise ValueError(at_user_line("histogramdd: sample has no dimensions"))
    hist = reshape(zeros(total, out_dtype).at[flat].add(w), tuple(sizes))
    hist = hist[tuple(slice(1, -1) for _ in builtins.range(d))]
    if density:
        hist = divide(hist, sum(hist))
        for i, e in enumerate(edges):
            hist = divide(hist, reshape(diff(e), tuple(-1 if j == i else 1
                                                        for j in builtins.range(d))))
        hist = astype(hist, x.dtype) if weights is None else hist
    return hist, edges


def histogram2d(x, y, bins=10, range=None, weights=None,  # noqa: A002
                density=None) -> tuple[Tensor, Tensor, Tensor]:
    """(counts, x edges, y edges) of the points (x[i], y[i]): histogramdd of two
    dimensions."""
    (xs, ys), _ = promote_operands(to_inexact(as_tensor(x)), to_inexact(as_tensor(y)))
    if isinstance(bins, (list, tuple)) and len(bins) != 2:
        bins = [bins, bins]  # one edge list for both dimensions
    hist, (ex, ey) = histogramdd(stack([xs, ys], 1), bins, range, weights, density)
    return hist, ex, ey
