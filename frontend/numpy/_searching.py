"""Searching and picking: where, take, take_along_axis, put_along_axis, searchsorted,
nonzero, argwhere, flatnonzero.

nonzero/argwhere/flatnonzero have a data-dependent result size. Outside jit they read
the mask once; inside jit they need a static `size=` (as in JAX): the first `size`
indices in row-major order, padded with `fill_value` (default 0).

Out-of-range indices in take/take_along_axis: without a mode, static ones raise
IndexError (NumPy) and tensor ones follow JAX's default for these functions, mode="fill":
the result is NaN for inexact dtypes, the most negative value for signed integers, the
largest for unsigned ones and True for booleans (or `fill_value`). mode="clip" clamps,
mode="wrap" wraps; an explicit mode applies to static indices too, as in JAX.
"""

from __future__ import annotations

import numpy as np

from ..compiler import dtypes as dt
from ..compiler.primitives import elementwise as ew
from ..compiler.primitives import indexing as ix
from ..compiler.primitives import shape_ops as so
from ..composite import one_program
from ..dispatch import bind1
from ..errors import MustCompileError, at_user_line
from ..promotion import DEFAULT_INT
from ..tensor import Tensor
from ._elementwise import select
from ._index_values import (
    _host_index,
    _tensor_index,
    index_as,
    index_dtype,
    static_index_in_mode,
)
from ._indexing import UPDATE_MODES, _fill, getitem
from ._inplace import numpy_form
from ._manipulation import concatenate, reshape, stack
from ._operands import (
    as_tensor,
    astype,
    broadcast_shapes,
    broadcast_to,
    has_value,
    normalize_axis,
    promote_operands,
    values_in,
)
from ._sorting import cumsum


@one_program
def where(condition, x=None, y=None) -> Tensor:
    """Elementwise choice; `where(condition)` alone is `nonzero(condition)`."""
    if x is None and y is None:
        return nonzero(condition)
    return select(condition, x, y)


def _is_static(i) -> bool:
    return not isinstance(i, Tensor)


def _prepare_index(i, n: int, axis: int, mode, like: Tensor, *, wrap_first: bool = False):
    """(index tensor normalised for `mode`, fill?). mode: None (static indices are
    checked, tensor ones fill), "fill", "clip" (clamped into range; negative indices
    count from the end first when wrap_first, as take_along_axis has it in JAX, but not
    for take, as in NumPy and JAX), "wrap" or "raise" (checked, on the host)."""
    idt = index_dtype(n)
    if mode in ("wrap", "clip") and _is_static(i) and n:
        a = np.asarray(i)
        if a.dtype.kind in "iu" and a.size:  # on the host, exactly (no int32 wrap-around)
            if mode == "wrap":
                a = np.mod(a, n)
            elif wrap_first:
                a = static_index_in_mode(a, n, "clip", like, axis)
            else:
                a = np.clip(np.minimum(a, n) if a.dtype.kind == "u" else a, 0, n - 1)
            return as_tensor(np.asarray(a).astype(idt.np), like=like), False
    if mode == "wrap":
        i = as_tensor(i, like=like) if not isinstance(i, Tensor) else i
        if i.dtype.kind == "u" and 0 < n < 2 ** i.dtype.bits:  # first in its own dtype
            i = bind1(ew.remainder, i, broadcast_to(i._backend.scalar(n, i.dtype), i.shape))
        i = astype(i, dt.int64 if i.dtype is dt.int64 else idt)
        nn = broadcast_to(i._backend.scalar(n, i.dtype), i.shape)
        r = bind1(ew.remainder, i, nn)
        neg = bind1(ew.lt, r, broadcast_to(i._backend.scalar(0, i.dtype), i.shape))
        return bind1(ew.select, neg, bind1(ew.add, r, nn), r), False
    if mode == "clip":
        i = as_tensor(i, like=like) if not isinstance(i, Tensor) else i
        i = index_as(i, n, dt.int64 if i.dtype is dt.int64 else idt)
        if wrap_first:
            i = _tensor_index(i, n, i.dtype)
        lo = broadcast_to(i._backend.scalar(0, i.dtype), i.shape)
        hi = broadcast_to(i._backend.scalar(max(n - 1, 0), i.dtype), i.shape)
        return bind1(ew.clamp, lo, i, hi), False
    if mode == "raise":
        if isinstance(i, Tensor):
            if not i._backend.concrete:
                raise MustCompileError(at_user_line(
                    "mode='raise' inside jit cannot check the indices (they are traced "
                    "values); pass mode='fill', 'clip' or 'wrap'"))
            i = i.numpy()
        return as_tensor(_host_index(i, n, axis, idt), like=like), False
    if _is_static(i):
        if mode == "fill":
            i = static_index_in_mode(i, n, "fill", like, axis)
            if isinstance(i, Tensor):  # out-of-range entries: filled on the device
                return i, True
        return as_tensor(_host_index(i, n, axis, idt), like=like), False
    return i, True


_TAKE_MODES = (None, "fill", "clip", "wrap", "raise")


def take(a, indices, axis=None, out=None, mode=None, *, fill_value=None) -> Tensor:
    """Elements of a at `indices` along `axis` (of the flattened a when None). Out of
    range: static indices raise IndexError and tensor ones read fill_value unless `mode`
    says otherwise: "fill" (JAX's default), "clip" (negatives clip to 0, as in NumPy),
    "wrap", or "raise" (concrete indices are checked)."""
    a = as_tensor(a)
    if out is not None:
        raise TypeError(at_user_line("take(out=...) is not supported: tensors are immutable"))
    if mode not in _TAKE_MODES:
        raise ValueError(at_user_line(
            f"take: unknown mode {mode!r}; use 'fill', 'clip', 'wrap' or 'raise'"))
    if axis is None:
        a, ax = reshape(a, (a.size,)), 0
    else:
        ax = normalize_axis(axis, a.ndim)
    i, fill = _prepare_index(indices, a.shape[ax], ax, mode, a)
    if not isinstance(i, Tensor):
        i = as_tensor(i, like=a)
    index = (slice(None),) * ax + (i,)
    return getitem(a, index, mode="fill" if fill else None, fill_value=fill_value)


def _along_axis_coords(idx: Tensor, shape, axis: int) -> Tensor:
    parts = []
    for d in range(len(shape)):
        comp = idx if d == axis else bind1(so.iota, shape=idx.shape, dtype=idx.dtype,
                                           dimension=d)
        parts.append(reshape(comp, idx.shape + (1,)))
    return parts[0] if len(parts) == 1 else concatenate(parts, axis=idx.ndim)


# take_along_axis's modes: "drop" reads as "fill" and "promise_in_bounds" as "clip" (JAX
# leaves its negative indices unwrapped, "a legacy behavior ... likely to be removed";
# here they count from the end, as everywhere else)
_ALONG_MODES = {None: None, "fill": "fill", "drop": "fill", "clip": "clip",
                "promise_in_bounds": "clip", "wrap": "wrap", "raise": "raise"}


def _along_axis_index(arr: Tensor, indices, axis, mode):
    if axis is None:
        arr = reshape(arr, (arr.size,))
        axis = 0
        if not isinstance(indices, Tensor):
            indices = np.ravel(np.asarray(indices))
        elif indices.ndim != 1:
            indices = reshape(indices, (indices.size,))
    ax = normalize_axis(axis, arr.ndim)
    ndim = np.ndim(indices) if not isinstance(indices, Tensor) else indices.ndim
    if ndim != arr.ndim:
        raise ValueError(at_user_line(
            f"indices must have as many dimensions as the tensor ({arr.ndim}), got {ndim}"))
    if mode not in _ALONG_MODES:
        raise ValueError(at_user_line(
            f"unknown mode {mode!r}; use 'fill', 'drop', 'clip', 'promise_in_bounds', "
            f"'wrap' or 'raise'"))
    i, fill = _prepare_index(indices, arr.shape[ax], ax, _ALONG_MODES[mode], arr,
                             wrap_first=True)
    idt = dt.int64 if i.dtype is dt.int64 else index_dtype(*arr.shape)
    i = index_as(i, arr.shape[ax], idt)
    if fill:
        i = _tensor_index(i, arr.shape[ax], idt)
    shape = list(broadcast_shapes(arr.shape[:ax] + (1,) + arr.shape[ax + 1:],
                                  i.shape[:ax] + (1,) + i.shape[ax + 1:]))
    shape[ax] = i.shape[ax]
    i = broadcast_to(i, tuple(shape))
    return arr, ax, i, fill


@one_program
def take_along_axis(arr, indices, axis=-1, mode=None, fill_value=None) -> Tensor:
    arr = as_tensor(arr)
    arr, ax, i, fill = _along_axis_index(arr, indices, axis, mode)
    bshape = list(i.shape)
    bshape[ax] = arr.shape[ax]
    if tuple(bshape) != arr.shape:
        arr = broadcast_to(arr, tuple(bshape))
    r = arr.ndim
    if 0 in i.shape:  # nothing to take (an empty batch axis: XLA's gather refuses it)
        return broadcast_to(arr._backend.scalar(0, arr.dtype), i.shape)
    out = bind1(ix.gather, arr, _along_axis_coords(i, arr.shape, ax),
                offset_dims=(), collapsed_slice_dims=tuple(range(r)),
                start_index_map=tuple(range(r)), index_vector_dim=r, slice_sizes=(1,) * r)
    if fill:
        n = arr.shape[ax]
        ok = bind1(ew.and_, bind1(ew.ge, i, broadcast_to(i._backend.scalar(0, i.dtype),
                                                              i.shape)),
                   bind1(ew.lt, i, broadcast_to(i._backend.scalar(n, i.dtype), i.shape)))
        f = broadcast_to(out._backend.scalar(_fill(out.dtype, fill_value), out.dtype),
                         out.shape)
        out = bind1(ew.select, ok, out, f)
    return out


def put_along_axis(arr, indices, values, axis, inplace: bool = True, mode=None):
    """Write `values` at `indices` along `axis`.

    NumPy's form, the default (inplace=True): the tensor `arr` itself changes (and every
    view of it, as with `arr[...] = v`; under jit the write reaches the caller) and the
    result is None. JAX's form (inplace=False): `arr` stays as it is and the result is a
    new tensor. (jax raises for inplace=True; a NumPy caller that ignored the result
    would otherwise see no change.) Out-of-range indices are dropped (mode "drop",
    "fill", "promise_in_bounds") or clamped ("clip"); without a mode, static ones raise
    IndexError and tensor ones are dropped."""
    if axis is None:
        raise ValueError(at_user_line("put_along_axis needs an axis"))
    if mode not in UPDATE_MODES:
        raise ValueError(at_user_line(
            f"put_along_axis: unknown mode {mode!r}; use 'drop', 'clip', 'fill' or "
            f"'promise_in_bounds'"))
    # out of range: "drop" keeps index n (or another out-of-range one), which the
    # scatter skips; without a mode static indices raise, tensor ones are dropped
    mode = UPDATE_MODES[mode]

    def scatter(arr: Tensor) -> Tensor:
        _, ax, i, _ = _along_axis_index(arr, indices, axis,
                                        "fill" if mode == "drop" else mode)
        v = broadcast_to(values_in(arr, values), i.shape)
        r = arr.ndim
        return bind1(ix.scatter, arr, _along_axis_coords(i, arr.shape, ax), v,
                     update_window_dims=(), inserted_window_dims=tuple(range(r)),
                     scatter_dims_to_operand_dims=tuple(range(r)), index_vector_dim=r,
                     kind="set", indices_are_sorted=False, unique_indices=False)

    return numpy_form("put_along_axis", "arr", arr, inplace, scatter)


# ---- searchsorted ----------------------------------------------------------------------

def _less(a: Tensor, b: Tensor) -> Tensor:
    """a < b in NumPy's sort order (NaN after everything)."""
    lt = bind1(ew.lt, a, b)
    if not a.dtype.is_float:
        return lt
    b_nan = bind1(ew.ne, b, b)
    a_num = bind1(ew.eq, a, a)
    return bind1(ew.or_, lt, bind1(ew.and_, b_nan, a_num))


def searchsorted(a, v, side: str = "left", sorter=None) -> Tensor:
    """Indices where v would be inserted into the sorted 1-d `a` to keep it sorted:
    a branch-free binary search of ceil(log2(n + 1)) gather/compare steps."""
    a = as_tensor(a)
    if a.ndim != 1:
        raise ValueError(at_user_line(f"searchsorted needs a 1-d sorted tensor, got shape "
                                      f"{a.shape}"))
    if side not in ("left", "right"):
        raise ValueError(at_user_line(f"side must be 'left' or 'right', not {side!r}"))
    if sorter is not None:
        a = take(a, sorter, mode="clip")
    (a, v), _ = promote_operands(a, v)
    n = a.shape[0]
    idt = index_dtype(n + 1)
    lo = broadcast_to(v._backend.scalar(0, idt), v.shape)
    hi = broadcast_to(v._backend.scalar(n, idt), v.shape)
    one = broadcast_to(v._backend.scalar(1, idt), v.shape)
    steps = int(n).bit_length()
    for _ in range(steps):
        mid = bind1(ew.shift_right, bind1(ew.add, lo, hi), one)
        am = take(a, mid, mode="clip")
        go_right = _less(am, v) if side == "left" else bind1(ew.not_, _less(v, am))
        go_right = bind1(ew.and_, go_right, bind1(ew.lt, lo, hi))
        lo = bind1(ew.select, go_right, bind1(ew.add, mid, one), lo)
        hi = bind1(ew.select, go_right, hi, mid)
    return astype(lo, DEFAULT_INT)


# ---- nonzero --------------------------------------------------------------------------

def _flat_positions(x: Tensor, size: int, fill_value) -> Tensor:
    """The first `size` flat positions where x != 0, padded with -1 (int)."""
    flat = reshape(x, (x.size,))
    mask = flat if flat.dtype is dt.bool_ else bind1(
        ew.ne, flat, broadcast_to(flat._backend.scalar(0, flat.dtype), flat.shape))
    idt = index_dtype(x.size + size + 1)
    slot = bind1(ew.subtract, cumsum(mask, dtype=idt),
                 broadcast_to(flat._backend.scalar(1, idt), flat.shape))
    drop = broadcast_to(flat._backend.scalar(size, idt), flat.shape)  # out of range
    slot = bind1(ew.select, mask, slot, drop)
    ids = bind1(so.iota, shape=(x.size,), dtype=idt, dimension=0)
    init = broadcast_to(flat._backend.scalar(-1, idt), (size,))
    return bind1(ix.scatter, init, reshape(slot, (x.size, 1)), ids,
                 update_window_dims=(), inserted_window_dims=(0,),
                 scatter_dims_to_operand_dims=(0,), index_vector_dim=1, kind="set",
                 indices_are_sorted=True, unique_indices=True)


def _need_size(x: Tensor, name: str, size):
    if size is not None:
        if not isinstance(size, (int, np.integer)) or size < 0:
            raise ValueError(at_user_line(f"{name}: size must be a non-negative integer"))
        return int(size)
    if not has_value(x):
        raise MustCompileError(at_user_line(
            f"{name} inside jit cannot be compiled without a static size: the number of "
            f"nonzero elements depends on the data, and XLA programs have static shapes. "
            f"Pass size=N (and fill_value=...) to get exactly N indices, use where(cond, x, "
            f"y) to keep the shape, or call {name} outside jit"))
    return None


def _unravel(pos: Tensor, shape, fill_value) -> tuple[Tensor, ...]:
    valid = bind1(ew.ge, pos, broadcast_to(pos._backend.scalar(0, pos.dtype), pos.shape))
    outs, rest = [], pos
    for d in range(len(shape) - 1, -1, -1):
        n = shape[d]
        nn = broadcast_to(pos._backend.scalar(n, pos.dtype), pos.shape)
        outs.append(bind1(ew.remainder, rest, nn) if d else rest)
        rest = bind1(ew.divide, rest, nn)
    outs = outs[::-1]
    fills = fill_value if isinstance(fill_value, (tuple, list)) else (
        [0 if fill_value is None else fill_value] * len(shape))
    if len(fills) != len(shape):
        raise ValueError(at_user_line(f"fill_value needs one entry per dimension "
                                      f"({len(shape)}), got {len(fills)}"))
    return tuple(astype(bind1(ew.select, valid, o, broadcast_to(
        o._backend.scalar(f, o.dtype), o.shape)), DEFAULT_INT)
        for o, f in zip(outs, fills, strict=True))


def nonzero(x, *, size=None, fill_value=None) -> tuple[Tensor, ...]:
    x = as_tensor(x)
    if x.ndim == 0:
        raise ValueError(at_user_line("nonzero of a 0-d tensor is not defined; use "
                                      "atleast_1d(x) first"))
    size = _need_size(x, "nonzero", size)
    if size is None:  # concrete and unsized: the count comes from the data
        size = int(np.count_nonzero(x.numpy()))
    if x.size == 0 or size == 0:  # nothing to scatter into: XLA rejects a 0-size scatter
        return tuple(broadcast_to(x._backend.scalar(0, DEFAULT_INT), (size,))
                     for _ in x.shape)
    return _unravel(_flat_positions(x, size, fill_value), x.shape, fill_value)


def flatnonzero(x, *, size=None, fill_value=None) -> Tensor:
    x = as_tensor(x)
    return nonzero(reshape(x, (x.size,)), size=size, fill_value=fill_value)[0]


def argwhere(x, *, size=None, fill_value=None) -> Tensor:
    x = as_tensor(x)
    if x.ndim == 0:
        x = reshape(x, (1,))
        idx = nonzero(x, size=size, fill_value=fill_value)
        return reshape(idx[0], (idx[0].shape[0], 0))
    return stack(nonzero(x, size=size, fill_value=fill_value), axis=1)

