"""lax's shape functions: broadcasting, iota / full, reshape / squeeze / transpose / pad /
concatenate, static and dynamic slices and updates."""

from __future__ import annotations

import builtins
import numbers
import operator

from .. import numpy as snp
from ..compiler import dtypes as dt
from ..compiler.primitives import shape_ops
from ..dispatch import bind1
from ..errors import at_user_line
from ..numpy._operands import as_tensor
from ..tensor import Tensor
from ._operands import _same_dtype


def _ints(v, what: str) -> tuple[int, ...]:
    try:
        return tuple(operator.index(e) for e in v)
    except TypeError:
        raise TypeError(at_user_line(f"{what} must be a sequence of Python ints, got "
                                     f"{v!r}")) from None


def broadcast_in_dim(operand, shape, broadcast_dimensions) -> Tensor:
    """operand's axis i becomes axis broadcast_dimensions[i] of `shape`."""
    return bind1(shape_ops.broadcast_in_dim, as_tensor(operand), shape=_ints(shape, "shape"),
                 broadcast_dimensions=_ints(broadcast_dimensions, "broadcast_dimensions"))


def broadcast(operand, sizes) -> Tensor:
    """New leading axes of `sizes`."""
    x = as_tensor(operand)
    sizes = _ints(sizes, "sizes")
    return broadcast_in_dim(x, sizes + x.shape, range(len(sizes), len(sizes) + x.ndim))


def broadcasted_iota(dtype, shape, dimension: int) -> Tensor:
    """0, 1, 2... along `dimension` of a tensor of `shape`."""
    shape = _ints(shape, "shape")
    return bind1(shape_ops.iota, shape=shape, dtype=dt.dtype(dtype),
                 dimension=_axis(dimension, len(shape)))


def iota(dtype, size: int) -> Tensor:
    """0, 1, ..., size - 1 in `dtype` (jax.lax.iota)."""
    return broadcasted_iota(dtype, (operator.index(size),), 0)


def full(shape, fill_value, dtype=None) -> Tensor:
    """A tensor of `shape` filled with fill_value (dtype: fill_value's, weak scalars
    taking the default dtypes)."""
    return snp.full(_ints(shape, "shape"), fill_value, dtype=dtype)


def full_like(x, fill_value, dtype=None, shape=None) -> Tensor:
    """A tensor of x's shape and dtype (or `shape` / `dtype`, when given) filled with
    `fill_value` (jax.lax.full_like).
    """
    x = as_tensor(x)
    return full(x.shape if shape is None else shape, fill_value,
                x.dtype if dtype is None else dtype)


def broadcast_to_rank(x, rank: int) -> Tensor:
    """x with leading size-1 axes up to `rank`."""
    x = as_tensor(x)
    return reshape(x, (1,) * (rank - x.ndim) + x.shape) if x.ndim < rank else x


def collapse(operand, start_dimension: int, stop_dimension: int | None = None) -> Tensor:
    """Axes start_dimension..stop_dimension-1 merged into one."""
    x = as_tensor(operand)
    stop = x.ndim if stop_dimension is None else stop_dimension
    start, stop = start_dimension % x.ndim, stop % (x.ndim + 1) if stop < 0 else stop
    size = 1
    for n in x.shape[start:stop]:
        size *= n
    return reshape(x, x.shape[:start] + (size,) + x.shape[stop:])


def _axis(axis: int, ndim: int) -> int:
    a = operator.index(axis)
    if not -ndim <= a < ndim:
        raise ValueError(at_user_line(f"axis {a} is out of range for rank {ndim}"))
    return a % ndim


def reshape(operand, new_sizes, dimensions=None) -> Tensor:
    """Reshape (row-major); `dimensions` transposes first."""
    x = as_tensor(operand)
    if dimensions is not None:
        x = transpose(x, dimensions)
    return bind1(shape_ops.reshape, x, shape=_ints(new_sizes, "new_sizes"))


def squeeze(array, dimensions) -> Tensor:
    """Drop the size-1 axes `dimensions`."""
    x = as_tensor(array)
    dims = {_axis(d, x.ndim) for d in _ints(dimensions, "dimensions")}
    for d in dims:
        if x.shape[d] != 1:
            raise ValueError(at_user_line(f"lax.squeeze: axis {d} of shape {x.shape} has "
                                          f"size {x.shape[d]}, not 1"))
    return bind1(shape_ops.reshape, x,
                 shape=tuple(n for i, n in enumerate(x.shape) if i not in dims))


def expand_dims(array, dimensions) -> Tensor:
    """New size-1 axes at `dimensions` (axes of the result)."""
    x = as_tensor(array)
    return snp.expand_dims(x, _ints(dimensions, "dimensions"))


def transpose(operand, permutation) -> Tensor:
    """`operand` with its axes permuted: axis i of the result is axis permutation[i]
    (jax.lax.transpose).

    Raises:
        ShapeError (a TypeError): if permutation is not a permutation of the operand's
            axes.
    """
    return bind1(shape_ops.transpose, as_tensor(operand),
                 permutation=_ints(permutation, "permutation"))


def pad(operand, padding_value, padding_config) -> Tensor:
    """Pad with (low, high, interior) per axis; negative low/high crop."""
    x, v = _same_dtype("pad", operand, padding_value)
    cfg = [_ints(c, "padding_config entries") for c in padding_config]
    if len(cfg) != x.ndim or builtins.any(len(c) != 3 for c in cfg):
        raise ValueError(at_user_line(f"lax.pad: padding_config needs one (low, high, "
                                      f"interior) triple per axis of {x.shape}, got "
                                      f"{padding_config!r}"))
    return bind1(shape_ops.pad, x, v, low=tuple(c[0] for c in cfg),
                 high=tuple(c[1] for c in cfg), interior=tuple(c[2] for c in cfg))


def concatenate(operands, dimension: int) -> Tensor:
    """`operands` joined along `dimension` (jax.lax.concatenate): they need one dtype
    (no promotion) and equal sizes off that axis.
    """
    ts = _same_dtype("concatenate", *operands)
    return bind1(shape_ops.concatenate, *ts, dimension=_axis(dimension, ts[0].ndim))


def rev(operand, dimensions) -> Tensor:
    """Reverse the order of elements along `dimensions`."""
    x = as_tensor(operand)
    return bind1(shape_ops.reverse, x,
                 axes=tuple(_axis(d, x.ndim) for d in _ints(dimensions, "dimensions")))


def slice(operand, start_indices, limit_indices, strides=None) -> Tensor:
    """operand[start:limit:stride] per axis, with static indices."""
    x = as_tensor(operand)
    start, limit = _ints(start_indices, "start_indices"), _ints(limit_indices, "limit_indices")
    strides = (1,) * x.ndim if strides is None else _ints(strides, "strides")
    return bind1(shape_ops.slice_, x, start=start, limit=limit, strides=strides)


def slice_in_dim(operand, start_index, limit_index, stride: int = 1, axis: int = 0) -> Tensor:
    """slice along one axis; None means the axis's end, negative indices count from it."""
    x = as_tensor(operand)
    axis = _axis(axis, x.ndim)
    n = x.shape[axis]
    start = 0 if start_index is None else operator.index(start_index)
    limit = n if limit_index is None else operator.index(limit_index)
    start, limit = start + n if start < 0 else start, limit + n if limit < 0 else limit
    starts, limits, strides = [0] * x.ndim, list(x.shape), [1] * x.ndim
    starts[axis], limits[axis], strides[axis] = start, limit, operator.index(stride)
    return slice(x, starts, limits, strides)


def index_in_dim(operand, index: int, axis: int = 0, keepdims: bool = True) -> Tensor:
    """The slice at a static `index` of `axis` (jax.lax.index_in_dim); `keepdims`
    keeps the axis with length 1. A negative index counts from the end.
    """
    x = as_tensor(operand)
    axis = _axis(axis, x.ndim)
    i = operator.index(index)
    i = i + x.shape[axis] if i < 0 else i
    out = slice_in_dim(x, i, i + 1, 1, axis)
    return out if keepdims else squeeze(out, (axis,))


def _start_indices(name: str, x: Tensor, start_indices) -> list[Tensor]:
    """One integer scalar tensor per axis, of one dtype; negative starts count from the
    end (as JAX); XLA then clamps the window into the operand."""
    if isinstance(start_indices, Tensor) or hasattr(start_indices, "__array__"):
        st = as_tensor(start_indices)
        if st.ndim != 1:
            raise ValueError(at_user_line(f"lax.{name}: start_indices must be a sequence or "
                                          f"a 1-d array, got shape {st.shape}"))
        starts = [st[i] for i in range(st.shape[0])]
    else:
        starts = [as_tensor(s) if not isinstance(s, numbers.Integral) or isinstance(s, Tensor)
                  else s for s in start_indices]
    if len(starts) != x.ndim:
        raise ValueError(at_user_line(f"lax.{name}: needs {x.ndim} start indices for an "
                                      f"operand of shape {x.shape}, got {len(starts)}"))
    tensors = [s for s in starts if isinstance(s, Tensor)]
    for s in tensors:
        if s.ndim or not s.dtype.is_integer:
            raise TypeError(at_user_line(f"lax.{name}: start indices must be integer "
                                         f"scalars, got {s.type}"))
    idt = tensors[0].dtype if tensors and not tensors[0].weak else dt.int32
    out = []
    for s, n in zip(starts, x.shape, strict=True):
        if isinstance(s, Tensor):
            s = snp.astype(s, idt)
            s = snp.where(s < 0, s + n, s) if idt.kind == "i" else s
        else:
            s = snp.asarray(int(s) + n if s < 0 else int(s), dtype=idt)
        out.append(s)
    return out


def dynamic_slice(operand, start_indices, slice_sizes) -> Tensor:
    """The window of `slice_sizes` at traced `start_indices` (clamped into the operand).

    Example:
        >>> stablejit.lax.dynamic_slice(snp.arange(10), (3,), (4,))
        Tensor<i64[4] xla:host:0>
        [3, 4, 5, 6]
    """
    x = as_tensor(operand)
    starts = _start_indices("dynamic_slice", x, start_indices)
    return bind1(shape_ops.dynamic_slice, x, *starts, sizes=_ints(slice_sizes, "slice_sizes"))


def dynamic_slice_in_dim(operand, start_index, slice_size: int, axis: int = 0) -> Tensor:
    """`slice_size` elements of `axis` from `start_index`, which may be a traced value
    (jax.lax.dynamic_slice_in_dim). As in XLA, the start is clamped so that the slice
    fits.
    """
    x = as_tensor(operand)
    axis = _axis(axis, x.ndim)
    starts = [0] * x.ndim
    starts[axis] = start_index
    sizes = list(x.shape)
    sizes[axis] = operator.index(slice_size)
    return dynamic_slice(x, starts, sizes)


def dynamic_index_in_dim(operand, index, axis: int = 0, keepdims: bool = True) -> Tensor:
    """The slice at a possibly traced `index` of `axis`
    (jax.lax.dynamic_index_in_dim); `keepdims` keeps the axis with length 1. The index is
    clamped into range, as in XLA.
    """
    x = as_tensor(operand)
    axis = _axis(axis, x.ndim)
    out = dynamic_slice_in_dim(x, index, 1, axis)
    return out if keepdims else squeeze(out, (axis,))


def dynamic_update_slice(operand, update, start_indices) -> Tensor:
    """operand with `update` written at traced `start_indices` (clamped).

    Example:
        >>> stablejit.lax.dynamic_update_slice(snp.zeros(5), snp.ones(2), (1,))
        Tensor<f32[5] xla:host:0>
        [0., 1., 1., 0., 0.]
    """
    x, u = _same_dtype("dynamic_update_slice", operand, update)
    starts = _start_indices("dynamic_update_slice", x, start_indices)
    return bind1(shape_ops.dynamic_update_slice, x, u, *starts)


def dynamic_update_slice_in_dim(operand, update, start_index, axis: int) -> Tensor:
    """`operand` with `update` written along `axis` from `start_index`, which may be
    traced (jax.lax.dynamic_update_slice_in_dim); the start is clamped so the update fits.
    """
    x = as_tensor(operand)
    axis = _axis(axis, x.ndim)
    starts = [0] * x.ndim
    starts[axis] = start_index
    return dynamic_update_slice(x, update, starts)


def dynamic_update_index_in_dim(operand, update, index, axis: int) -> Tensor:
    """operand with `update` (with or without the size-1 axis) written at index."""
    x, u = as_tensor(operand), as_tensor(update)
    axis = _axis(axis, x.ndim)
    if u.ndim == x.ndim - 1:
        u = snp.expand_dims(u, axis)
    return dynamic_update_slice_in_dim(x, u, index, axis)


def split(operand, sizes, axis: int = 0) -> list[Tensor]:
    """Consecutive pieces of operand along axis with the given sizes (they must add up to
    its length), as jax.lax.split."""
    x = as_tensor(operand)
    sizes = _ints(sizes, "sizes")
    axis = _axis(axis, x.ndim)
    if builtins.any(s < 0 for s in sizes) or builtins.sum(sizes) != x.shape[axis]:
        raise ValueError(at_user_line(
            f"lax.split: sizes {list(sizes)} must be non-negative and add up to the length "
            f"{x.shape[axis]} of axis {axis}"))
    out, start = [], 0
    for s in sizes:
        out.append(slice_in_dim(x, start, start + s, 1, axis))
        start += s
    return out


def broadcast_shapes(*shapes) -> tuple[int, ...]:
    """The shape that arrays of the given shapes broadcast to (NumPy's rule)."""
    return snp.broadcast_shapes(*shapes)


def dtype(x, *, canonicalize: bool = False):
    """The dtype x would have as a tensor (a Python scalar's default dtype)."""
    del canonicalize
    return as_tensor(x).dtype
