"""Editing along an axis: delete, insert and append.

The positions to delete or insert set the output shape, so they are static (Python ints,
slices, sequences or concrete tensors): NumPy works out which source element lands
where, and one gather builds the result. As in JAX, delete also takes traced indices
when they are known to be unique (assume_unique_indices=True): then the output size is
static again.
"""

from __future__ import annotations

import numpy as np

from ..compiler import dtypes as dt
from ..errors import MustCompileError, at_user_line
from ..promotion import DEFAULT_INT
from ..tensor import Tensor
from ._manipulation import concatenate, moveaxis, reshape
from ._operands import as_tensor, asarray, broadcast_to, normalize_axis, values_in
from ._searching import nonzero, take


def _flat_or_axis(arr, axis) -> tuple[Tensor, int]:
    x = as_tensor(arr)
    if axis is None:
        return reshape(x, (x.size,)), 0
    return x, normalize_axis(axis, x.ndim)


def _static_positions(obj, name: str):
    """obj as a slice, or a NumPy array of ints or booleans; raises inside jit for
    traced tensors."""
    if isinstance(obj, slice):
        return obj
    if isinstance(obj, Tensor):
        if not obj._backend.concrete:
            raise MustCompileError(at_user_line(
                f"{name}: the positions are a traced tensor, so the output shape would "
                f"depend on the data; pass them as a Python int, slice or sequence"
                + (", or pass assume_unique_indices=True" if name == "delete" else "")))
        return obj.numpy()
    return np.asarray(obj)


def delete(arr, obj, axis=None, *, assume_unique_indices: bool = False) -> Tensor:
    """arr without the entries at `obj` (int, slice, sequence of ints or a boolean mask)
    along `axis` (of the flattened tensor when axis is None)."""
    x, ax = _flat_or_axis(arr, axis)
    n = x.shape[ax]
    if assume_unique_indices and isinstance(obj, Tensor) and not obj._backend.concrete:
        i = reshape(obj, (-1,)).astype(DEFAULT_INT)
        i = i + n * (i < 0)
        keep = broadcast_to(x._backend.scalar(True, dt.bool_), (n,)).at[i].set(False)
        return take(x, nonzero(keep, size=n - i.shape[0])[0], axis=ax)
    pos = _static_positions(obj, "delete")
    if isinstance(pos, slice):
        drop = np.zeros(n, bool)
        drop[pos] = True
    elif pos.dtype == bool:
        if pos.shape != (n,):
            raise ValueError(at_user_line(f"delete: a boolean mask needs shape ({n},), got "
                                          f"{pos.shape}"))
        drop = pos
    else:
        if pos.dtype.kind not in "iu":
            raise TypeError(at_user_line(f"delete: positions must be integers, got "
                                         f"{pos.dtype}"))
        flat = pos.reshape(-1)
        if ((flat < -n) | (flat >= n)).any():
            raise IndexError(at_user_line(f"delete: a position in {flat.tolist()} is out of "
                                          f"bounds for axis {ax} of size {n}"))
        drop = np.zeros(n, bool)
        drop[flat] = True
    return take(x, asarray(np.flatnonzero(~drop).astype(DEFAULT_INT.np)), axis=ax)


def insert(arr, obj, values, axis=None) -> Tensor:
    """arr with `values` inserted before the positions `obj` (int, slice or sequence of
    ints) along `axis` (of the flattened tensor when axis is None)."""
    x, ax = _flat_or_axis(arr, axis)
    n = x.shape[ax]
    pos = _static_positions(obj, "insert")
    if isinstance(pos, slice):
        pos = np.arange(n)[pos]
    if pos.dtype.kind not in "iu":
        raise TypeError(at_user_line(f"insert: positions must be integers, got {pos.dtype}"))
    if ((pos < -n) | (pos > n)).any():
        raise IndexError(at_user_line(f"insert: a position in {pos.reshape(-1).tolist()} is "
                                      f"out of bounds for axis {ax} of size {n}"))
    v = values_in(x, values)  # NumPy casts values to arr's dtype
    if axis is None:
        v = reshape(v, (v.size,))
    if pos.ndim == 0:  # one position: all of `values` goes in as a block
        while v.ndim < x.ndim:
            v = reshape(v, (1,) + v.shape)
        v = moveaxis(v, 0, ax) if axis is not None else v
        count = v.shape[ax]
    else:
        count = pos.size
    shape = x.shape[:ax] + (count,) + x.shape[ax + 1:]
    v = broadcast_to(v, shape)
    # source of each output slot: i < n is x's entry i, n + j is the j-th inserted one
    order = np.insert(np.arange(n), pos, n + np.arange(count))
    return take(concatenate([x, v], ax), asarray(order.astype(DEFAULT_INT.np)), axis=ax)


def append(arr, values, axis=None) -> Tensor:
    """values added at the end of arr along `axis` (both flattened when axis is None)."""
    x, v = as_tensor(arr), as_tensor(values)
    if axis is None:
        return concatenate([reshape(x, (x.size,)), reshape(v, (v.size,))], 0)
    return concatenate([x, v], axis)
