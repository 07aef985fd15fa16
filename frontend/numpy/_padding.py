"""NumPy's pad: every mode (constant, edge, linear_ramp, maximum, mean, median, minimum,
reflect, symmetric, wrap, empty) with its keywords (constant_values, end_values,
stat_length, reflect_type), as compositions of the pad primitive, slices, reductions
and concatenate.

reflect, symmetric and wrap take any width: NumPy pads with one period after another,
which is the periodic extension of the axis (period 2(n - 1), 2n and n). With
reflect_type="odd" each reflection is 2 * edge - value, so every period also adds
2 * (last - first)."""

from __future__ import annotations

import numpy as np

from ..compiler.primitives import shape_ops as so
from ..dispatch import bind1
from ..errors import MustCompileError, at_user_line
from ..tensor import Tensor
from ._elementwise import add, floor, multiply, subtract
from ._elementwise import round as round_
from ._manipulation import _slice_axis, _static_ints, concatenate, flip
from ._operands import as_tensor, astype, broadcast_to
from ._quantiles import median
from ._reductions import max as max_
from ._reductions import mean
from ._reductions import min as min_


def _pad_widths(pad_width, ndim: int) -> list[tuple[int, int]]:
    if isinstance(pad_width, Tensor):
        pad_width = _static_ints(pad_width, "pad: pad_width")
    w = np.asarray(pad_width, dtype=np.int64)
    try:
        w = np.broadcast_to(w, (ndim, 2))
    except ValueError:
        raise ValueError(at_user_line(
            f"pad: pad_width {pad_width!r} does not fit a tensor of dimension {ndim}; give an "
            f"int, a (before, after) pair, or one pair per axis")) from None
    if (w < 0).any():
        raise ValueError(at_user_line("pad: pad widths must be non-negative"))
    return [(int(a), int(b)) for a, b in w.tolist()]


def _pairs(values, ndim: int, name: str) -> np.ndarray:
    """A keyword of (before, after) values (constant_values, end_values, stat_length) as
    an (ndim, 2) array: a number, a pair, or one pair per axis, as NumPy broadcasts it."""
    if isinstance(values, Tensor):
        if not values._backend.concrete:
            raise MustCompileError(at_user_line(
                f"pad: {name} must be known when tracing; pass Python numbers"))
        values = values.numpy()
    v = np.asarray(values)
    try:
        return np.broadcast_to(v, (ndim, 2))
    except ValueError:
        raise ValueError(at_user_line(
            f"pad: {name}={values!r} does not fit a tensor of dimension {ndim}; give a "
            f"number, a (before, after) pair, or one pair per axis")) from None


_PAD_MODES = ("constant", "edge", "linear_ramp", "maximum", "mean", "median", "minimum",
              "reflect", "symmetric", "wrap", "empty")
_STATS = {"maximum": max_, "minimum": min_, "mean": mean, "median": median}


def pad(x, pad_width, mode: str = "constant", *, constant_values=0, end_values=0,
        stat_length=None, reflect_type: str = "even") -> Tensor:
    """NumPy's pad, every mode and keyword (mode="empty" pads with zeros)."""
    x = as_tensor(x)
    widths = _pad_widths(pad_width, x.ndim)
    if mode not in _PAD_MODES:
        raise ValueError(at_user_line(f"pad: mode {mode!r} is not supported; use one of "
                                      f"{', '.join(_PAD_MODES)}"))
    if reflect_type not in ("even", "odd"):
        raise ValueError(at_user_line(f"pad: reflect_type={reflect_type!r}; use 'even' or "
                                      f"'odd'"))
    if mode in ("constant", "empty"):
        return _constant(x, widths, _pairs(constant_values if mode == "constant" else 0,
                                           x.ndim, "constant_values"))
    ends = _pairs(end_values, x.ndim, "end_values") if mode == "linear_ramp" else None
    lengths = None
    if mode in _STATS and stat_length is not None:
        lengths = _pairs(stat_length, x.ndim, "stat_length")
        if lengths.dtype.kind not in "iu" or (lengths < 0).any():
            raise ValueError(at_user_line(f"pad: stat_length={stat_length!r} must be "
                                          f"non-negative integers"))
    for ax, (lo, hi) in enumerate(widths):
        if not (lo or hi):
            continue
        if x.shape[ax] == 0:
            raise ValueError(at_user_line(
                f"pad: mode {mode!r} cannot pad the empty axis {ax}; use mode='constant'"))
        if mode in ("reflect", "symmetric", "wrap"):
            x = _periodic(x, ax, lo, hi, mode, reflect_type == "odd")
        elif mode == "linear_ramp":
            x = _ramps(x, ax, lo, hi, ends[ax])
        else:
            x = _stat_or_edge(x, ax, lo, hi, mode, None if lengths is None else lengths[ax])
    return x


def _constant(x: Tensor, widths, cv: np.ndarray) -> Tensor:
    if (cv == cv.flat[0]).all():  # one value: one pad op
        v = x._backend.scalar(cv.flat[0].item(), x.dtype)
        return bind1(so.pad, x, v, low=tuple(a for a, _ in widths),
                     high=tuple(b for _, b in widths), interior=(0,) * x.ndim)
    for ax, (lo, hi) in enumerate(widths):
        v_lo, v_hi = (x._backend.scalar(c.item(), x.dtype) for c in cv[ax])
        low, high = [0] * x.ndim, [0] * x.ndim
        low[ax] = lo
        x = bind1(so.pad, x, v_lo, low=tuple(low), high=tuple(high), interior=(0,) * x.ndim)
        low[ax], high[ax] = 0, hi
        x = bind1(so.pad, x, v_hi, low=tuple(low), high=tuple(high), interior=(0,) * x.ndim)
    return x


def _along(values: np.ndarray, ax: int, ndim: int) -> np.ndarray:
    """A 1-d NumPy array shaped to broadcast along axis `ax` of an ndim tensor."""
    shape = [1] * ndim
    shape[ax] = values.size
    return values.reshape(shape)


def _periodic(x: Tensor, ax: int, lo: int, hi: int, mode: str, odd: bool) -> Tensor:
    """wrap, symmetric or reflect along ax, any width: one period of the extension,
    repeated, sliced; odd reflections add 2 * (last - first) per period."""
    n = x.shape[ax]
    first, last = _slice_axis(x, ax, 0, 1), _slice_axis(x, ax, n - 1, n)
    if mode == "wrap":
        back, odd = [], False
    elif mode == "symmetric":
        back = [flip(x, ax)]
    else:  # reflect: a one-element axis has nothing to reflect, NumPy repeats it
        back = [flip(_slice_axis(x, ax, 1, n - 1), ax)] if n > 2 else []
    if odd and back:
        back = [subtract(multiply(last, 2), back[0])]
    period = concatenate([x, *back], ax) if back else x
    p = period.shape[ax]
    if mode == "reflect" and n == 1:
        p = 1
    q_lo, q_hi = -(-lo // p), -(-(n + hi) // p)  # periods before, and from, the start
    ext = concatenate([period] * (q_lo + q_hi), ax) if q_lo + q_hi > 1 else period
    start = q_lo * p - lo
    out = _slice_axis(ext, ax, start, start + lo + n + hi)
    if odd and mode != "wrap" and (n > 1 or mode == "symmetric"):
        # the drift: period k (k < 0 before the start) adds k * 2 * (last - first)
        k = (np.arange(-lo, n + hi) // p).astype(np.int64)
        if k.any():
            step = multiply(subtract(last, first), 2)
            out = add(out, multiply(step, astype(as_tensor(_along(k, ax, x.ndim), x),
                                                 x.dtype)))
    return out


def _ramps(x: Tensor, ax: int, lo: int, hi: int, ends) -> Tensor:
    """NumPy's linear_ramp: linspace(end value, edge, width, endpoint=False), floored
    for integers as NumPy's linspace floors."""
    n = x.shape[ax]
    calc = x if x.dtype.is_inexact else astype(x, "float64")
    parts = []
    for width, edge, end, at_start in ((lo, _slice_axis(calc, ax, 0, 1), ends[0], True),
                                       (hi, _slice_axis(calc, ax, n - 1, n), ends[1], False)):
        if not width:
            continue
        i = np.arange(width, dtype=np.float64)
        i = _along(i if at_start else i[::-1].copy(), ax, x.ndim)
        step = multiply(subtract(edge, end.item()), 1.0 / width)
        ramp = add(multiply(step, astype(as_tensor(i, calc), calc.dtype)), end.item())
        ramp = ramp if x.dtype.is_inexact else astype(floor(ramp), x.dtype)
        parts.append((at_start, astype(ramp, x.dtype)))
    return concatenate([p for s, p in parts if s] + [x] + [p for s, p in parts if not s], ax)


def _stat_or_edge(x: Tensor, ax: int, lo: int, hi: int, mode: str, lengths) -> Tensor:
    """edge, or a statistic (maximum, minimum, mean, median) of the first / last
    stat_length elements (all of them by default), rounded for integers as NumPy."""
    n = x.shape[ax]
    parts = []
    for width, at_start, length in ((lo, True, None if lengths is None else lengths[0]),
                                    (hi, False, None if lengths is None else lengths[1])):
        if not width:
            parts.append(None)
            continue
        k = 1 if mode == "edge" else n if length is None else min(int(length), n)
        if k == 0 and mode in ("maximum", "minimum"):
            raise ValueError(at_user_line(f"pad: stat_length of 0 yields no value for mode "
                                          f"{mode!r}; give at least 1"))
        chunk = _slice_axis(x, ax, 0, k) if at_start else _slice_axis(x, ax, n - k, n)
        e = chunk if mode == "edge" else _STATS[mode](chunk, axis=ax, keepdims=True)
        if mode in ("mean", "median") and not x.dtype.is_inexact:
            e = astype(round_(e), x.dtype)
        shape = list(x.shape)
        shape[ax] = width
        parts.append(broadcast_to(e, tuple(shape)))
    return concatenate([p for p in (parts[0], x, parts[1]) if p is not None], ax)
