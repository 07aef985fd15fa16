"""Shape manipulation: reshape, transpose, concatenate, stack, squeeze, expand_dims,
flip, roll, repeat, tile, unstack, split, diff, ediff1d, NumPy's stacking helpers
(block among them), rollaxis, resize, trim_zeros, and shape, ndim and size as functions.

All are static-shape compositions of slice, concatenate, broadcast_in_dim, reshape,
transpose and reverse, so they work inside jit. (pad is in _padding.)
"""

from __future__ import annotations

import functools
import math
import numbers
import operator

import numpy as np

from ..compiler import symbolic as sym
from ..compiler.ir import Attrs
from ..compiler.primitives import shape_ops as so
from ..dispatch import bind, bind1, kept_attrs
from ..errors import MustCompileError, at_user_line
from ..promotion import DEFAULT_INT
from ..tensor import Tensor
from ._dtypes import astype
from ._elementwise import not_equal, remainder, subtract
from ._operands import (
    as_shape,
    as_tensor,
    broadcast_to,
    normalize_axes,
    normalize_axis,
    promote_operands,
    values_in,
)


def _resolve_shape(shape, size: int, old) -> tuple[int, ...]:
    if hasattr(shape, "__index__"):
        shape = (shape,)
    try:
        shape = [sym.index(d) for d in shape]  # 3.0 is not a size, as in NumPy
    except TypeError:
        raise TypeError(at_user_line(f"reshape: a shape must be an integer or a sequence of "
                                     f"integers, got {shape!r}")) from None
    unknown = [i for i, d in enumerate(shape) if d == -1]
    if len(unknown) > 1:
        raise ValueError(at_user_line(f"reshape: only one dimension can be -1, got {tuple(shape)}"))
    if any(d < -1 for d in shape):
        raise ValueError(at_user_line(f"reshape: negative dimension in {tuple(shape)}"))
    if unknown:
        known = math.prod(d for d in shape if d != -1)
        rem = size % known if known else 1
        try:
            bool(rem)
        except sym.InconclusiveDimensionOperation:  # (a symbolic size: say which constraint)
            raise sym.InconclusiveDimensionOperation(at_user_line(
                f"reshape: cannot tell while tracing whether a tensor of shape {old} ({size} "
                f"elements) divides into shape {tuple(shape)}; if every size you will call it "
                f"with does, add the constraint '{rem} == 0' to symbolic_shape(..., "
                f"constraints=...)")) from None
        if rem:
            raise ValueError(at_user_line(f"cannot reshape a tensor of shape {old} "
                                          f"({size} elements) into shape {tuple(shape)}"))
        shape[unknown[0]] = size // known
    if math.prod(shape) != size:
        raise ValueError(at_user_line(f"cannot reshape a tensor of shape {old} ({size} "
                                      f"elements) into shape {tuple(shape)}"))
    return tuple(shape)


_RESHAPES: dict = {}  # shape -> reshape's Attrs (kept_attrs)


def reshape(x, shape, *, copy=None) -> Tensor:
    x = as_tensor(x)
    try:
        attrs = _RESHAPES.get(shape) if type(shape) is tuple and not x.type.symbolic else None
    except TypeError:  # (an unhashable size, e.g. a 0-d integer tensor: resolved below)
        attrs = None
    if attrs is not None:  # a kept shape, if the same ints (10.0 == 10) and size
        if not all(type(d) is int for d in shape) or math.prod(shape) != x.size:
            attrs = None
    if attrs is None:
        shape = _resolve_shape(shape, x.size, x.shape)
        attrs = kept_attrs(_RESHAPES, "shape", shape)
    if shape == x.shape:
        return x
    return bind(so.reshape, (x,), attrs)[0]


def ravel(x) -> Tensor:
    return reshape(x, (-1,))


flatten = ravel


# ndim -> the reversed permutation's Attrs (x.T on every step of a training loop)
_REVERSED: dict = {}


def transpose(x, axes=None) -> Tensor:
    x = as_tensor(x)
    if axes is None:
        attrs = _REVERSED.get(x.ndim)
        if attrs is None:
            attrs = _REVERSED[x.ndim] = Attrs({"permutation": tuple(reversed(range(x.ndim)))})
        if x.ndim < 2:
            return x
        return bind(so.transpose, (x,), attrs)[0]
    else:
        perm = tuple(normalize_axis(a, x.ndim) for a in axes)
        if sorted(perm) != list(range(x.ndim)):
            raise ValueError(at_user_line(f"axes {tuple(axes)} are not a permutation of the "
                                          f"{x.ndim} axes of a tensor of shape {x.shape}"))
    if perm == tuple(range(x.ndim)):
        return x
    return bind1(so.transpose, x, permutation=perm)


def permute_dims(x, axes) -> Tensor:
    return transpose(x, axes)


def matrix_transpose(x) -> Tensor:
    """The last two axes of x swapped, as a new tensor (linalg.matrix_transpose; the
    namespace's matrix_transpose and x.mT give a view instead).

    Raises:
        ValueError: if x has fewer than two axes."""
    x = as_tensor(x)
    if x.ndim < 2:
        raise ValueError(at_user_line(f"matrix_transpose needs at least 2 dimensions, got "
                                      f"shape {x.shape}"))
    perm = list(range(x.ndim))
    perm[-1], perm[-2] = perm[-2], perm[-1]
    return transpose(x, perm)


def swapaxes(x, axis1: int, axis2: int) -> Tensor:
    x = as_tensor(x)
    perm = list(range(x.ndim))
    a, b = normalize_axis(axis1, x.ndim), normalize_axis(axis2, x.ndim)
    perm[a], perm[b] = perm[b], perm[a]
    return transpose(x, perm)


def moveaxis(x, source, destination) -> Tensor:
    x = as_tensor(x)
    src = normalize_axes(source, x.ndim, "source")
    dst = normalize_axes(destination, x.ndim, "destination")
    if len(src) != len(dst):
        raise ValueError(at_user_line("moveaxis: source and destination need as many axes"))
    order = [i for i in range(x.ndim) if i not in src]
    for d, s in sorted(zip(dst, src, strict=True)):
        order.insert(d, s)
    return transpose(x, order)


def expand_dims(x, axis) -> Tensor:
    x = as_tensor(x)
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    ndim = x.ndim + len(axes)
    axes = sorted(normalize_axis(a, ndim) for a in axes)
    if len(set(axes)) != len(axes):
        raise ValueError(at_user_line(f"expand_dims: repeated axis in {tuple(axis)} (after "
                                      f"counting negative axes from the end of the result's "
                                      f"{ndim} dimensions)"))
    shape = list(x.shape)
    for a in axes:
        shape.insert(a, 1)
    return reshape(x, tuple(shape))


def squeeze(x, axis=None) -> Tensor:
    x = as_tensor(x)
    if axis is None:
        axes = [i for i, d in enumerate(x.shape) if d == 1]
    else:
        axes = normalize_axes(axis, x.ndim)
        for a in axes:
            if x.shape[a] != 1:
                raise ValueError(at_user_line(f"cannot squeeze axis {a} of shape {x.shape}: "
                                              f"its size is {x.shape[a]}, not 1"))
    return reshape(x, tuple(d for i, d in enumerate(x.shape) if i not in axes))


def concatenate(arrays, axis: int | None = 0) -> Tensor:
    ts, _ = promote_operands(*arrays)
    if not ts:
        raise ValueError(at_user_line("need at least one tensor to concatenate"))
    if axis is None:
        ts, axis = [reshape(t, (-1,)) for t in ts], 0
    nd = ts[0].ndim
    if nd == 0:
        raise ValueError(at_user_line("zero-dimensional tensors cannot be concatenated"))
    for i, t in enumerate(ts):
        if t.ndim != nd:
            raise ValueError(at_user_line(
                f"concatenate: tensor {i} has {t.ndim} dimensions (shape {t.shape}) but tensor "
                f"0 has {nd} (shape {ts[0].shape})"))
    axis = normalize_axis(axis, nd)
    if len(ts) == 1:
        return ts[0]
    return bind1(so.concatenate, *ts, dimension=axis)


concat = concatenate


def stack(arrays, axis: int = 0) -> Tensor:
    ts = [as_tensor(a) for a in arrays]
    if not ts:
        raise ValueError(at_user_line("need at least one tensor to stack"))
    shape = ts[0].shape
    for i, t in enumerate(ts):
        if t.shape != shape:
            raise ValueError(at_user_line(f"stack: all tensors need the same shape; tensor "
                                          f"{i} has {t.shape}, tensor 0 has {shape}"))
    axis = normalize_axis(axis, len(shape) + 1)
    return concatenate([expand_dims(t, axis) for t in ts], axis)


def flip(x, axis=None) -> Tensor:
    x = as_tensor(x)
    axes = normalize_axes(axis, x.ndim)
    return bind1(so.reverse, x, axes=axes) if axes else x


def atleast_1d(x) -> Tensor:
    x = as_tensor(x)
    return reshape(x, (1,)) if x.ndim == 0 else x


def atleast_2d(x) -> Tensor:
    x = as_tensor(x)
    return reshape(x, (1,) * (2 - x.ndim) + x.shape) if x.ndim < 2 else x


# ---- slicing, repeating and splitting ---------------------------------------------

def _slice_axis(x: Tensor, axis: int, start: int, stop: int, step: int = 1) -> Tensor:
    if start == 0 and stop == x.shape[axis] and step == 1:
        return x
    starts, limits, strides = [0] * x.ndim, list(x.shape), [1] * x.ndim
    starts[axis], limits[axis], strides[axis] = start, stop, step
    return bind1(so.slice_, x, start=tuple(starts), limit=tuple(limits),
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
    if isinstance(shift, Tensor) and not shift._backend.concrete:
        return _roll_traced(x, shift, axis)
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


def _roll_traced(x: Tensor, shift: Tensor, axis) -> Tensor:
    """roll by a shift known only when the program runs (jit, vmap): along each axis, the
    window of n elements of x twice over that starts at n - shift % n (the shape does
    not depend on the shift)."""
    if not shift.dtype.is_integer or shift.ndim > 1:
        raise TypeError(at_user_line(f"roll: shift must be an integer or a 1-d tensor of "
                                     f"integers, got {shift.dtype}{list(shift.shape)}"))
    if axis is None:  # (several shifts: their sum, as NumPy)
        total = shift if shift.ndim == 0 else functools.reduce(
            operator.add, (shift[k] for k in range(shift.shape[0])), 0)
        return reshape(_roll_traced(reshape(x, (-1,)), as_tensor(total), 0), x.shape)
    axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    count = shift.shape[0] if shift.ndim else len(axes)
    if count != len(axes):
        raise ValueError(at_user_line(f"roll: {count} shifts for {len(axes)} axes; give one "
                                      f"shift per axis"))
    zero = x._backend.scalar(0, DEFAULT_INT)
    for k, a in enumerate(axes):
        a = normalize_axis(a, x.ndim)
        n = x.shape[a]
        if n == 0:
            continue
        s = astype(shift[k] if shift.ndim else shift, DEFAULT_INT)
        start = subtract(n, remainder(s, n))  # (in 1..n: n is no shift)
        twice = concatenate([x, x], a)
        starts = [start if i == a else zero for i in range(x.ndim)]
        attrs = kept_attrs(_ROLL_SIZES, "sizes", x.shape)
        x = bind(so.dynamic_slice, (twice, *starts), attrs)[0]
    return x


_ROLL_SIZES: dict = {}  # dynamic_slice's sizes -> its Attrs


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
        b = bind1(so.broadcast_in_dim, x, shape=shape, broadcast_dimensions=dims)
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
    b = bind1(so.broadcast_in_dim, x, shape=shape,
              broadcast_dimensions=tuple(range(1, 2 * nd, 2)))
    return reshape(b, tuple(r * n for r, n in zip(reps, x.shape, strict=True)))






def split_bounds(x: Tensor, indices_or_sections, axis: int, even: bool = True) -> list:
    """The (start, stop) of each piece of x split along `axis` (normalized) into
    sections (which must be `even`, as split's) or at the given indices."""
    n = x.shape[axis]
    spec = _static_ints(indices_or_sections, "split: indices_or_sections")
    if isinstance(spec, int):
        if spec <= 0:
            raise ValueError(at_user_line(f"split: number of sections must be positive, "
                                          f"got {spec}"))
        if even and n % spec:
            raise ValueError(at_user_line(
                f"split: an axis of size {n} cannot be split into {spec} equal sections; "
                f"use array_split for unequal ones"))
        q, r = divmod(n, spec)
        sizes = [q + 1] * r + [q] * (spec - r)
        bounds = np.cumsum([0] + sizes).tolist()
    else:
        bounds = [0] + [min(max(i + n if i < 0 else i, 0), n) for i in spec] + [n]
    return [(lo, max(lo, hi)) for lo, hi in zip(bounds[:-1], bounds[1:], strict=True)]










def split_axis(x, name: str) -> tuple[Tensor, int]:
    """x as a tensor and the axis hsplit, vsplit or dsplit (`name`) splits."""
    x = as_tensor(x)
    if name == "hsplit":
        return _at_least(x, 1, name), 1 if x.ndim > 1 else 0
    return _at_least(x, 2 if name == "vsplit" else 3, name), 0 if name == "vsplit" else 2


def _at_least(x: Tensor, ndim: int, name: str) -> Tensor:
    if x.ndim < ndim:  # (NumPy's ValueError; splitting another axis would be silent)
        raise ValueError(at_user_line(
            f"{name} only works on tensors of {ndim} or more dimensions, got shape "
            f"{x.shape}: use snp.split(x, ..., axis=...) or snp.atleast_{ndim}d(x)"
            if ndim > 1 else f"{name} needs a tensor of 1 or more dimensions, got shape "
            f"{x.shape}: use snp.atleast_1d(x)"))
    return x


def diff(x, /, n: int = 1, axis: int = -1, prepend=None, append=None) -> Tensor:
    """The n-th discrete difference along `axis` (booleans: not-equal, as NumPy); an
    axis of n or fewer elements gives an empty one. n=0 returns x as it is (NumPy's rule:
    prepend and append are not added)."""
    x = as_tensor(x)
    if n == 0:
        return x
    if n < 0:
        raise ValueError(at_user_line(f"diff: order n must be non-negative, got {n}"))
    if x.ndim == 0:
        raise ValueError(at_user_line("diff: x is 0-d; give it at least one dimension "
                                      "(snp.atleast_1d(x))"))
    axis = normalize_axis(axis, x.ndim)
    parts = [p for p in (prepend, x, append) if p is not None]
    if len(parts) > 1:
        # promoted before anything is a tensor: a Python number becomes x's dtype from
        # its own value (as_tensor first would round a float through float32)
        parts, _ = promote_operands(*parts)
        edge = x.shape[:axis] + (1,) + x.shape[axis + 1:]
        x = concatenate([broadcast_to(p, edge) if p.ndim == 0 else p for p in parts], axis)
    for _ in range(n):
        m = x.shape[axis]
        a, b = _slice_axis(x, axis, min(1, m), m), _slice_axis(x, axis, 0, max(m - 1, 0))
        if x.dtype.kind == "b":
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






def rot90(x, k: int = 1, axes=(0, 1)) -> Tensor:
    """Rotate by 90 degrees k times in the plane of `axes` (from the first toward the
    second)."""
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


def shape(a) -> tuple[int, ...]:
    """The shape of a tensor (or of anything NumPy can make an array of)."""
    return a.shape if isinstance(a, Tensor) else np.shape(a)


def ndim(a) -> int:
    """The number of axes."""
    return a.ndim if isinstance(a, Tensor) else np.ndim(a)


def size(a, axis=None) -> int:
    """The number of elements, in all or along one axis."""
    s = shape(a)
    return math.prod(s) if axis is None else s[normalize_axis(axis, len(s))]


def rollaxis(a, axis: int, start: int = 0) -> Tensor:
    """`axis` moved to stand before position `start` (NumPy's older moveaxis)."""
    a = as_tensor(a)
    return moveaxis(a, *rollaxis_axes(a.ndim, axis, start))


def rollaxis_axes(n: int, axis: int, start: int) -> tuple[int, int]:
    """rollaxis's (source, destination) as moveaxis's, for a tensor of n dimensions."""
    axis = normalize_axis(axis, n)
    if not isinstance(start, numbers.Integral) or not -n <= start <= n:
        raise np.exceptions.AxisError(at_user_line(
            f"rollaxis: start={start} must satisfy {-n} <= start <= {n} for a tensor of "
            f"dimension {n}"))
    start = int(start) + n if start < 0 else int(start)
    if start > axis:
        start -= 1
    return axis, start


def resize(a, new_shape) -> Tensor:
    """A tensor of `new_shape` filled with a's elements (flattened) repeated as often as
    needed; zeros when a is empty (as in JAX; NumPy's ndarray.resize pads with zeros)."""
    a = as_tensor(a)
    shape = as_shape(new_shape)
    flat = reshape(a, (a.size,))
    n = math.prod(shape)
    if a.size == 0 or n == 0:
        return broadcast_to(a._backend.scalar(0, a.dtype), shape)
    return reshape(tile(flat, -(-n // a.size))[:n], shape)


def ediff1d(ary, to_end=None, to_begin=None) -> Tensor:
    """The differences of consecutive elements of the flattened input, with to_begin and
    to_end (converted to its dtype) put before and after."""
    x = as_tensor(ary)
    x = reshape(x, (x.size,))
    parts = [subtract(x[1:], x[:-1])]
    if to_begin is not None:
        b = values_in(x, to_begin)
        parts.insert(0, reshape(b, (b.size,)))
    if to_end is not None:
        e = values_in(x, to_end)
        parts.append(reshape(e, (e.size,)))
    return concatenate(parts, 0) if len(parts) > 1 else parts[0]


def _block_depth(a, where: str) -> int:
    if isinstance(a, tuple):
        raise TypeError(at_user_line(f"block: {where} is a tuple; nest lists (tuples are "
                                     f"refused, as in NumPy)"))
    if not isinstance(a, list):
        return 0
    if not a:
        raise ValueError(at_user_line(f"block: {where} is an empty list; lists must hold "
                                      f"arrays or lists"))
    depths = {_block_depth(e, f"{where}[{i}]") for i, e in enumerate(a)}
    if len(depths) != 1:
        raise ValueError(at_user_line(f"block: the lists in {where} are nested to different "
                                      f"depths {sorted(depths)}; each must be as deep"))
    return 1 + depths.pop()


def block(arrays) -> Tensor:
    """A tensor assembled from nested lists of blocks: the innermost lists are
    concatenated along the last axis, the next ones along the one before, and so on."""
    depth = _block_depth(arrays, "arrays")
    if depth == 0:
        return as_tensor(arrays)

    def leaves(a):
        return [x for e in a for x in leaves(e)] if isinstance(a, list) else [as_tensor(a)]
    ndim = max(depth, max(t.ndim for t in leaves(arrays)))

    def assemble(a, level: int) -> Tensor:
        if not isinstance(a, list):
            t = as_tensor(a)
            return reshape(t, (1,) * (ndim - t.ndim) + t.shape)
        return concatenate([assemble(e, level + 1) for e in a], level - depth)
    return assemble(arrays, 0)


def trim_zeros(filt, trim: str = "fb", axis=None) -> Tensor:
    """filt without its leading ('f') and/or trailing ('b') zeros along each axis of
    `axis` (all by default): zero slices are cut from the edges. The result's shape
    depends on the data, so the values must be concrete (not inside jit)."""
    x = as_tensor(filt)
    if not x._backend.concrete:
        raise MustCompileError(at_user_line(
            "trim_zeros inside jit: the result's shape depends on where the zeros are, and "
            "XLA programs have static shapes; call it outside jit, or use a mask with "
            "where() instead"))
    axes = normalize_axes(axis, x.ndim)
    t = trim.lower()
    if not axes or ("f" not in t and "b" not in t):
        return x
    nz = np.asarray(not_equal(x, 0).numpy())
    index = []
    for ax in range(x.ndim):
        if ax not in axes:
            index.append(slice(None))
            continue
        mask = nz.any(axis=tuple(i for i in range(x.ndim) if i != ax))
        if not mask.any():
            index.append(slice(0, 0))
            continue
        start = int(mask.argmax()) if "f" in t else None
        stop = x.shape[ax] - int(mask[::-1].argmax()) if "b" in t else None
        index.append(slice(start, stop))
    return x[tuple(index)]
