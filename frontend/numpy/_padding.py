"""NumPy's pad: constant, edge, reflect, symmetric, wrap, maximum, minimum and mean
modes, as compositions of the pad primitive, slices, reductions and concatenate."""

from __future__ import annotations

import numpy as np

from ..compiler.primitives import shape_ops as so
from ..dispatch import bind1
from ..errors import MustCompileError, at_user_line
from ..tensor import Tensor
from ._elementwise import round as round_
from ._manipulation import _slice_axis, _static_ints, concatenate, flip
from ._operands import as_tensor, astype, broadcast_to
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


_PAD_MODES = ("constant", "edge", "reflect", "symmetric", "wrap", "maximum", "minimum", "mean")


def pad(x, pad_width, mode: str = "constant", *, constant_values=0) -> Tensor:
    """NumPy's pad for modes constant, edge, reflect, symmetric, wrap, maximum, minimum and
    mean. reflect/symmetric/wrap take widths up to the axis size (one period)."""
    x = as_tensor(x)
    widths = _pad_widths(pad_width, x.ndim)
    if mode not in _PAD_MODES:
        raise ValueError(at_user_line(f"pad: mode {mode!r} is not supported; use one of "
                                      f"{', '.join(_PAD_MODES)}"))
    if mode == "constant":
        if isinstance(constant_values, Tensor):
            if not constant_values._backend.concrete:
                raise MustCompileError(at_user_line(
                    "pad: constant_values must be known when tracing; pass a Python number"))
            constant_values = constant_values.numpy()
        cv = np.asarray(constant_values)
        if cv.ndim == 0:
            v = x._backend.scalar(cv.item(), x.dtype)
            return bind1(so.pad, x, v, low=tuple(a for a, _ in widths),
                         high=tuple(b for _, b in widths), interior=(0,) * x.ndim)
        cv = np.broadcast_to(cv, (x.ndim, 2))
        for ax, (lo, hi) in enumerate(widths):
            v_lo, v_hi = (x._backend.scalar(c.item(), x.dtype) for c in cv[ax])
            low, high = [0] * x.ndim, [0] * x.ndim
            low[ax] = lo
            x = bind1(so.pad, x, v_lo, low=tuple(low), high=tuple(high),
                      interior=(0,) * x.ndim)
            low[ax], high[ax] = 0, hi
            x = bind1(so.pad, x, v_hi, low=tuple(low), high=tuple(high),
                      interior=(0,) * x.ndim)
        return x
    for ax, (lo, hi) in enumerate(widths):
        if lo or hi:
            x = _pad_axis(x, ax, lo, hi, mode)
    return x


def _pad_axis(x: Tensor, ax: int, lo: int, hi: int, mode: str) -> Tensor:
    n = x.shape[ax]
    if n == 0:
        raise ValueError(at_user_line(f"pad: mode {mode!r} cannot pad an empty axis {ax}"))
    limit = {"reflect": n - 1, "symmetric": n, "wrap": n}.get(mode)
    if limit is not None and max(lo, hi) > limit:
        raise ValueError(at_user_line(
            f"pad: mode {mode!r} supports widths up to {limit} on axis {ax} (size {n}), got "
            f"({lo}, {hi}); pad in several calls for wider borders"))

    def edge_block(k, at_start):
        if mode == "edge":
            e = _slice_axis(x, ax, 0, 1) if at_start else _slice_axis(x, ax, n - 1, n)
        elif mode in ("maximum", "minimum", "mean"):
            f = {"maximum": max_, "minimum": min_, "mean": mean}[mode]
            e = f(x, axis=ax, keepdims=True)
            if mode == "mean" and not x.dtype.is_inexact:
                e = astype(round_(e), x.dtype)
        else:
            if mode == "reflect":
                s = _slice_axis(x, ax, 1, k + 1) if at_start else _slice_axis(x, ax, n - 1 - k,
                                                                                n - 1)
                return flip(s, ax)
            if mode == "symmetric":
                s = _slice_axis(x, ax, 0, k) if at_start else _slice_axis(x, ax, n - k, n)
                return flip(s, ax)
            return _slice_axis(x, ax, n - k, n) if at_start else _slice_axis(x, ax, 0, k)
        shape = list(x.shape)
        shape[ax] = k
        return broadcast_to(e, tuple(shape))

    parts = ([edge_block(lo, True)] if lo else []) + [x] + ([edge_block(hi, False)] if hi else [])
    return concatenate(parts, ax)
