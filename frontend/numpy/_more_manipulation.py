"""More shape manipulation: roll, repeat, tile, unstack, split, array_split, pad, diff,
and NumPy's stacking helpers. All are static-shape compositions of slice, concatenate,
broadcast_in_dim, reshape, reverse and pad, so they work inside jit."""

from __future__ import annotations

import numbers
import operator

import numpy as np

from ..compiler.primitives import ALL as P
from ..dispatch import bind1
from ..errors import MustCompileError, at_user_line
from ..tensor import Tensor
from ._core import as_tensor, broadcast_to, normalize_axes, normalize_axis, promote_operands
from ._elementwise import subtract
from ._manipulation import atleast_1d, atleast_2d, concatenate, flip, reshape


def _slice_axis(x: Tensor, axis: int, start: int, stop: int, step: int = 1) -> Tensor:
    if start == 0 and stop == x.shape[axis] and step == 1:
        return x
    starts, limits, strides = [0] * x.ndim, list(x.shape), [1] * x.ndim
    starts[axis], limits[axis], strides[axis] = start, stop, step
    return bind1(P["slice"], x, start=tuple(starts), limit=tuple(limits),
                 strides=tuple(strides))


def _static_ints(v, what: str, exact: bool = False):
    """A Python int or tuple of ints from an int, sequence or concrete tensor; `exact`
    refuses floats (a count of 2.5 is a TypeError in NumPy) where NumPy truncates."""
    if isinstance(v, Tensor):
        if not v._backend.concrete:
            raise MustCompileError(at_user_line(
                f"{what} must be known when tracing (it decides the result's shape); pass it "
                f"as a Python int/tuple or mark it static with jit(..., static_argnums=...)"))
        v = v.numpy().tolist()
    if isinstance(v, np.ndarray):
        v = v.tolist()
    conv = operator.index if exact else int
    try:
        return tuple(map(conv, v)) if isinstance(v, (list, tuple)) else conv(v)
    except TypeError:
        raise TypeError(at_user_line(f"{what} must be integers, got {v!r}")) from None


def roll(x, /, shift, *, axis=None) -> Tensor:
    """Elements shifted along axes, wrapping around; axis=None rolls the flattened tensor."""
    x = as_tensor(x)
    shift = _static_ints(shift, "roll: shift")
    if axis is None:
        if isinstance(shift, tuple):
            shift = sum(shift)
        return reshape(roll(reshape(x, (-1,)), shift, axis=0), x.shape)
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    shifts = shift if isinstance(shift, tuple) else (shift,) * len(axes)
    if len(shifts) != len(axes):
        raise ValueError(at_user_line(f"roll: {len(shifts)} shifts for {len(axes)} axes; give "
                                      f"one shift per axis"))
    for a, s in zip(axes, shifts, strict=True):
        a = normalize_axis(a, x.ndim)
        n = x.shape[a]
        s = s % n if n else 0
        if s:
            x = concatenate([_slice_axis(x, a, n - s, n), _slice_axis(x, a, 0, n - s)], a)
    return x


def repeat(x, repeats, /, *, axis=None) -> Tensor:
    """Each element repeated `repeats` times (an int, or one count per element along
    `axis`; counts must be known when tracing). axis=None repeats the flattened tensor."""
    x = as_tensor(x)
    if axis is None:
        x, axis = reshape(x, (-1,)), 0
    axis = normalize_axis(axis, x.ndim)
    reps = _static_ints(repeats, "repeat: repeats")
    n = x.shape[axis]
    if isinstance(reps, tuple) and len(reps) == 1:
        reps = reps[0]
    if isinstance(reps, int):
        if reps < 0:
            raise ValueError(at_user_line(f"repeat: repeats must be non-negative, got {reps}"))
        # (..., n, ...) -> (..., n, r, ...) -> (..., n*r, ...)
        shape = x.shape[:axis + 1] + (reps,) + x.shape[axis + 1:]
        dims = tuple(range(axis + 1)) + tuple(range(axis + 2, x.ndim + 1))
        b = bind1(P["broadcast_in_dim"], x, shape=shape, broadcast_dimensions=dims)
        return reshape(b, x.shape[:axis] + (n * reps,) + x.shape[axis + 1:])
    if len(reps) != n:
        raise ValueError(at_user_line(f"repeat: {len(reps)} repeat counts for an axis of size "
                                      f"{n}; give one count per element or a single int"))
    if any(r < 0 for r in reps):
        raise ValueError(at_user_line("repeat: repeat counts must be non-negative"))
    pieces = [repeat(_slice_axis(x, axis, i, i + 1), r, axis=axis)
              for i, r in enumerate(reps) if r]
    if not pieces:
        return _slice_axis(x, axis, 0, 0)
    return concatenate(pieces, axis) if len(pieces) > 1 else pieces[0]


def tile(x, repetitions, /) -> Tensor:
    """x repeated `repetitions` times along each axis (NumPy's and the array API's tile)."""
    x = as_tensor(x)
    reps = _static_ints(repetitions, "tile: repetitions", exact=True)
    reps = (reps,) if isinstance(reps, int) else reps
    if any(r < 0 for r in reps):
        raise ValueError(at_user_line(f"tile: negative repetitions are not allowed, got "
                                      f"{repetitions}"))
    nd = max(len(reps), x.ndim)
    reps = (1,) * (nd - len(reps)) + tuple(reps)
    x = reshape(x, (1,) * (nd - x.ndim) + x.shape)
    # broadcast to (r0, n0, r1, n1, ...) then merge each pair
    shape = tuple(v for r, n in zip(reps, x.shape, strict=True) for v in (r, n))
    b = bind1(P["broadcast_in_dim"], x, shape=shape,
              broadcast_dimensions=tuple(range(1, 2 * nd, 2)))
    return reshape(b, tuple(r * n for r, n in zip(reps, x.shape, strict=True)))


def unstack(x, /, *, axis: int = 0) -> tuple[Tensor, ...]:
    """The slices of x along `axis`, as a tuple."""
    x = as_tensor(x)
    if x.ndim == 0:
        raise ValueError(at_user_line("unstack needs at least one dimension"))
    axis = normalize_axis(axis, x.ndim)
    shape = x.shape[:axis] + x.shape[axis + 1:]
    return tuple(reshape(_slice_axis(x, axis, i, i + 1), shape) for i in range(x.shape[axis]))


def array_split(x, indices_or_sections, axis: int = 0) -> list[Tensor]:
    """Split into sections (sizes may differ by one) or at the given indices."""
    x = as_tensor(x)
    axis = normalize_axis(axis, x.ndim)
    n = x.shape[axis]
    spec = _static_ints(indices_or_sections, "split: indices_or_sections")
    if isinstance(spec, int):
        if spec <= 0:
            raise ValueError(at_user_line(f"split: number of sections must be positive, got "
                                          f"{spec}"))
        q, r = divmod(n, spec)
        sizes = [q + 1] * r + [q] * (spec - r)
        bounds = np.cumsum([0] + sizes).tolist()
    else:
        bounds = [0] + [min(max(i + n if i < 0 else i, 0), n) for i in spec] + [n]
    out = []
    for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
        hi = max(lo, hi)
        out.append(_slice_axis(x, axis, lo, hi))
    return out


def split(x, indices_or_sections, axis: int = 0) -> list[Tensor]:
    """Like array_split, but a number of sections must divide the axis evenly."""
    x = as_tensor(x)
    if isinstance(indices_or_sections, numbers.Integral):
        a = normalize_axis(axis, x.ndim)
        if indices_or_sections <= 0 or x.shape[a] % int(indices_or_sections):
            raise ValueError(at_user_line(
                f"split: an axis of size {x.shape[a]} cannot be split into "
                f"{indices_or_sections} equal sections; use array_split for unequal ones"))
    return array_split(x, indices_or_sections, axis)


def hsplit(x, indices_or_sections) -> list[Tensor]:
    x = as_tensor(x)
    return split(x, indices_or_sections, axis=1 if x.ndim > 1 else 0)


def vsplit(x, indices_or_sections) -> list[Tensor]:
    return split(x, indices_or_sections, axis=0)


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
            return bind1(P["pad"], x, v, low=tuple(a for a, _ in widths),
                         high=tuple(b for _, b in widths), interior=(0,) * x.ndim)
        cv = np.broadcast_to(cv, (x.ndim, 2))
        for ax, (lo, hi) in enumerate(widths):
            v_lo, v_hi = (x._backend.scalar(c.item(), x.dtype) for c in cv[ax])
            low, high = [0] * x.ndim, [0] * x.ndim
            low[ax] = lo
            x = bind1(P["pad"], x, v_lo, low=tuple(low), high=tuple(high),
                      interior=(0,) * x.ndim)
            low[ax], high[ax] = 0, hi
            x = bind1(P["pad"], x, v_hi, low=tuple(low), high=tuple(high),
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
            from ._reductions import max as max_
            from ._reductions import mean
            from ._reductions import min as min_

            f = {"maximum": max_, "minimum": min_, "mean": mean}[mode]
            e = f(x, axis=ax, keepdims=True)
            if mode == "mean" and not x.dtype.is_inexact:
                from ._core import astype
                from ._elementwise import round as round_

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


def diff(x, /, n: int = 1, axis: int = -1, prepend=None, append=None) -> Tensor:
    """The n-th discrete difference along `axis` (booleans: not-equal, as NumPy)."""
    x = as_tensor(x)
    if x.ndim == 0:
        raise ValueError(at_user_line("diff needs at least one dimension"))
    axis = normalize_axis(axis, x.ndim)
    if n < 0:
        raise ValueError(at_user_line(f"diff: order n must be non-negative, got {n}"))
    parts = []
    for extra in (prepend, x, append):
        if extra is None:
            continue
        e = as_tensor(extra, x)
        if e.ndim == 0:
            shape = list(x.shape)
            shape[axis] = 1
            e = broadcast_to(e, tuple(shape))
        parts.append(e)
    if len(parts) > 1:
        parts, _ = promote_operands(*parts)
        x = concatenate(parts, axis)
    for _ in range(n):
        m = x.shape[axis]
        a, b = _slice_axis(x, axis, 1, m), _slice_axis(x, axis, 0, max(m - 1, 0))
        if x.dtype.kind == "b":
            from ._elementwise import not_equal

            x = not_equal(a, b)
        else:
            x = subtract(a, b)
    return x


def hstack(arrays) -> Tensor:
    ts = [atleast_1d(a) for a in arrays]
    return concatenate(ts, 0 if ts and ts[0].ndim == 1 else 1)


def vstack(arrays) -> Tensor:
    return concatenate([atleast_2d(a) for a in arrays], 0)


row_stack = vstack


def atleast_3d(x) -> Tensor:
    x = as_tensor(x)
    if x.ndim == 0:
        return reshape(x, (1, 1, 1))
    if x.ndim == 1:
        return reshape(x, (1, x.shape[0], 1))
    if x.ndim == 2:
        return reshape(x, x.shape + (1,))
    return x


def dstack(arrays) -> Tensor:
    return concatenate([atleast_3d(a) for a in arrays], 2)


def column_stack(arrays) -> Tensor:
    ts = [as_tensor(a) for a in arrays]
    return concatenate([reshape(t, (-1, 1)) if t.ndim < 2 else t for t in ts], 1)


def fliplr(x) -> Tensor:
    return flip(x, 1)


def flipud(x) -> Tensor:
    return flip(x, 0)


def rot90(x, k: int = 1, axes=(0, 1)) -> Tensor:
    """Rotate by 90 degrees k times in the plane of `axes` (from the first toward the
    second)."""
    from ._manipulation import swapaxes

    x = as_tensor(x)
    a, b = normalize_axes(tuple(axes), x.ndim)
    k %= 4
    if k == 0:
        return x
    if k == 2:
        return flip(flip(x, a), b)
    if k == 1:
        return swapaxes(flip(x, b), a, b)
    return flip(swapaxes(x, a, b), b)
