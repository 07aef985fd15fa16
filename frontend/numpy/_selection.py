"""Choosing and placing elements by index arrays and masks: choose, compress, extract,
place and put.

compress and extract return as many elements as the condition holds, so inside jit they
need a static `size=` (the rest padded with `fill_value`), as in JAX. place and put
write into their tensor by default, as NumPy's do (inplace=False is JAX's form, which
returns a new tensor).
"""

from __future__ import annotations

import operator

import numpy as np

from ..compiler import dtypes as dt
from ..errors import MustCompileError, at_user_line
from ..tensor import Tensor
from ._elementwise import clip, greater_equal, less, logical_or, remainder, select
from ._indexing import _update
from ._inplace import numpy_form
from ._manipulation import expand_dims, moveaxis, reshape, resize, stack
from ._operands import (
    as_tensor,
    astype,
    broadcast_arrays,
    has_value,
    promote_operands,
    values_in,
)
from ._reductions import any as any_
from ._searching import nonzero, take_along_axis
from ._sorting import argsort


def choose(a, choices, out=None, mode: str = "raise") -> Tensor:
    """Elementwise choice among `choices` by the index tensor a: choices[a[i]][i], all
    broadcast together. mode='raise' checks the indices (which needs concrete values:
    inside jit use 'wrap' or 'clip')."""
    if out is not None:
        raise TypeError(at_user_line("choose(out=...) is not supported: tensors are "
                                     "immutable; use the returned tensor"))
    idx = as_tensor(a)
    if idx.dtype.kind not in "iub":
        raise TypeError(at_user_line(f"choose: a must hold integer indices, got {idx.dtype}"))
    cs, _ = promote_operands(*choices)
    n = len(cs)
    if n == 0:
        raise ValueError(at_user_line("choose: choices must not be empty"))
    if mode == "raise":
        if not idx._backend.concrete:
            raise MustCompileError(at_user_line(
                "choose(mode='raise') inside jit cannot check the indices (they are traced "
                "values); pass mode='wrap' or mode='clip'"))
        bad = logical_or(less(idx, 0), greater_equal(idx, n))
        if bool(any_(bad).item()):
            raise ValueError(at_user_line(
                f"choose: an index in a is out of range for {n} choices; pass mode='wrap' or "
                f"mode='clip' to map it into range"))
    elif mode == "wrap":
        idx = remainder(idx, n)
    elif mode == "clip":
        idx = clip(idx, 0, n - 1)
    else:
        raise ValueError(at_user_line(f"choose: mode={mode!r} is not one of 'raise', 'wrap' or "
                                      f"'clip'"))
    idx, *cs = broadcast_arrays(idx, *cs)
    if idx.dtype is dt.bool_:
        idx = astype(idx, dt.int32)
    return take_along_axis(stack(cs, 0), idx[None], axis=0)[0]


def compress(condition, a, axis=None, *, size=None, fill_value=0, out=None) -> Tensor:
    """The slices of a along `axis` (of the flattened a by default) where the 1-D
    condition is true. Entries of condition beyond a's length must be false. With
    size=N: exactly N slices, the missing ones filled with fill_value (works in jit)."""
    if out is not None:
        raise TypeError(at_user_line("compress(out=...) is not supported: tensors are "
                                     "immutable; use the returned tensor"))
    # a condition given as host data is static: its selection is known while tracing
    host = None if isinstance(condition, Tensor) else np.asarray(condition).astype(bool)
    c = astype(as_tensor(condition), dt.bool_)
    if c.ndim != 1:
        raise ValueError(at_user_line(f"compress: condition must be 1-D, got shape {c.shape}"))
    x = as_tensor(a)
    if axis is None:
        axis, arr = 0, reshape(x, (x.size,))
    else:
        arr = moveaxis(x, axis, 0)
    n = arr.shape[0]
    c, extra = c[:n], c[n:]
    arr = arr[:c.shape[0]]
    if size is None:
        if host is None and not has_value(c):
            raise MustCompileError(at_user_line(
                "compress inside jit cannot be compiled without a static size: the number "
                "of selected slices depends on the data. Pass size=N (and fill_value=...) "
                "or call it outside jit"))
        cond = host if host is not None else np.asarray(c.numpy()) if not extra.shape[0] else \
            np.asarray(astype(as_tensor(condition), dt.bool_).numpy())
        if cond[n:].any():
            raise ValueError(at_user_line(
                f"compress: condition has true entries beyond the {n} slices of a along "
                f"the axis; shorten it to {n} entries"))
        kept = np.flatnonzero(cond[:n])
        result = arr[as_tensor(kept.astype(np.int64), arr)] if kept.size else arr[:0]
    else:
        size = operator.index(size)
        if not 0 <= size <= arr.shape[0]:
            raise ValueError(at_user_line(
                f"compress: size must be between 0 and the length of a along the axis "
                f"({arr.shape[0]}), got size={size}"))
        mask = expand_dims(c, tuple(range(1, arr.ndim))) if arr.ndim > 1 else c
        arr = select(mask, arr, values_in(arr, fill_value))
        # selected slices first, in order: a stable sort on "not selected"
        result = arr[argsort(c, stable=True, descending=True)][:size]
    return moveaxis(result, 0, axis)


def extract(condition, arr, *, size=None, fill_value=0) -> Tensor:
    """The elements of arr (flattened) where condition (flattened) is true; inside jit
    pass a static size=N (missing ones filled with fill_value)."""
    x = as_tensor(arr)
    if not isinstance(condition, Tensor):  # host data stays static
        return compress(np.ravel(np.asarray(condition)), reshape(x, (x.size,)), size=size,
                        fill_value=fill_value)
    c = as_tensor(condition)
    return compress(reshape(c, (c.size,)), reshape(x, (x.size,)), size=size,
                    fill_value=fill_value)


def place(arr, mask, vals, *, inplace: bool = True) -> Tensor | None:
    """Set the elements of arr where mask is true to the values of vals in order
    (repeated when there are fewer, the rest unused).

    NumPy's form, the default (inplace=True): arr itself changes (through its views;
    under jit in the caller) and the result is None. JAX's form (inplace=False): arr
    stays as it is and the result is a new tensor. Works inside jit: the positions are
    padded to a static length and the padding dropped."""
    def placed(x: Tensor) -> Tensor:
        m, v = as_tensor(mask), as_tensor(vals)
        if x.size != m.size:
            raise ValueError(at_user_line(
                f"place: arr (size {x.size}) and mask (size {m.size}) must have the same "
                f"number of elements"))
        if v.size == 0:
            if inplace and m._backend.concrete and not bool(any_(m).item()):
                return x  # NumPy places nothing from nothing
            raise ValueError(at_user_line("place: vals is empty; pass at least one value"))
        if x.size == 0:
            return x
        pos = nonzero(reshape(m, (m.size,)), size=m.size, fill_value=m.size)[0]
        v = resize(values_in(x, v), (pos.shape[0],))
        flat = reshape(x, (x.size,)).at[pos].set(v, mode="drop")
        return reshape(flat, x.shape)

    return numpy_form("place", "arr", arr, inplace, placed)


def _known(t: Tensor, host) -> np.ndarray | None:
    """The values of an index operand when they are known while tracing: host data, or a
    tensor on a concrete backend (eagerly); None for traced values."""
    if not isinstance(host, Tensor):
        return np.asarray(host)
    return np.asarray(t.numpy()) if t._backend.concrete else None


def put(a, ind, v, mode=None, *, inplace: bool = True) -> Tensor | None:
    """Write v at the flat indices ind of a (v repeated or cut to ind's length).

    NumPy's form, the default (inplace=True): a itself changes (through its views;
    under jit in the caller) and the result is None. JAX's form (inplace=False): a
    stays as it is and the result is a new tensor.

    Out-of-range indices: mode='clip' clips every index into [0, a.size) (so negative
    ones become 0), 'wrap' wraps them modulo a.size. mode='raise' (NumPy's default, and
    what mode=None means in NumPy's form) counts negative indices from the end and raises
    IndexError for the rest; it needs the indices' values, so under jit traced indices
    need 'clip' or 'wrap'. mode=None in JAX's form (and for traced indices in NumPy's
    form) counts negative indices from the end and clips the rest, as jax does."""
    if mode not in (None, "raise", "clip", "wrap"):
        raise ValueError(at_user_line(f"put: mode must be None, 'raise', 'clip' or 'wrap', "
                                      f"got {mode!r}"))

    def scattered(x: Tensor) -> Tensor:
        i = as_tensor(ind, x)
        i = reshape(i, (i.size,))
        vv = as_tensor(v, x)
        vv = reshape(vv, (vv.size,))
        if i.dtype.kind not in "iu":
            raise TypeError(at_user_line(f"put: ind must hold integers, got {i.dtype}"))
        if i.size == 0 or vv.size == 0:
            return x
        checked = mode == "raise" or mode is None and inplace
        known = _known(i, ind) if checked else None
        if mode == "raise" and known is None:
            raise MustCompileError(at_user_line(
                "put(mode='raise') inside jit cannot check the indices (they are traced "
                "values); pass mode='clip' or mode='wrap'"))
        if known is not None:
            bad = known[(known < -x.size) | (known >= x.size)]
            if bad.size:
                raise IndexError(at_user_line(
                    f"put: index {bad[0]} in ind is out of bounds for a of size {x.size} "
                    f"(mode='raise', NumPy's default); pass mode='clip' or mode='wrap' to "
                    f"map it into range"))
        if x.size == 0:
            return x
        vv = resize(values_in(x, vv), (i.shape[0],))
        if mode == "clip":
            i = clip(i, 0, x.size - 1)
        elif mode == "wrap":
            i = remainder(i, x.size)
        else:  # as JAX's unravel_index of the flat indices (in range for 'raise')
            i = clip(select(less(i, 0), i + x.size, i), 0, x.size - 1)
        # NumPy's order: of two writes to one position the last stays (on GPUs too)
        flat = _update(reshape(x, (x.size,)), i, vv, "set", last_wins=True)
        return reshape(flat, x.shape)

    return numpy_form("put", "a", a, inplace, scattered)


__all__ = ["choose", "compress", "extract", "place", "put"]
