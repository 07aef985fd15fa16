"""Set functions of the array API: unique_values, unique_counts, unique_inverse,
unique_all, and NumPy's unique(...) (also of slices along an axis) and isin.

All are one stable sort of the flattened input (carrying the original positions), a
"new run starts here" mask, a cumulative sum that numbers the runs, and scatters. The
number of unique values depends on the data: outside jit it is read once from the
device; inside jit pass a static `size=` (as in JAX). With `size`, missing entries are
padded with `fill_value` (default: the smallest unique value, as in JAX), their counts
are 0 and their indices those of the smallest value. NaNs are distinct from each other
(NumPy 2's unique_* functions).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..compiler import dtypes as dt
from ..compiler.primitives import elementwise as ew
from ..compiler.primitives import indexing as ix
from ..compiler.primitives import shape_ops as so
from ..dispatch import bind1
from ..errors import MustCompileError, at_user_line
from ..promotion import DEFAULT_INT
from ..tensor import Tensor
from ._creation import zeros
from ._indexing import index_dtype
from ._manipulation import concatenate, moveaxis, reshape
from ._operands import (
    as_tensor,
    astype,
    broadcast_to,
    normalize_axis,
    promote_operands,
    values_in,
)
from ._reductions import any as any_
from ._searching import searchsorted, take
from ._sorting import cumsum, sort, sort_with


class UniqueAllResult(NamedTuple):
    values: Tensor
    indices: Tensor
    inverse_indices: Tensor
    counts: Tensor


class UniqueCountsResult(NamedTuple):
    values: Tensor
    counts: Tensor


class UniqueInverseResult(NamedTuple):
    values: Tensor
    inverse_indices: Tensor


def _scalar(like: Tensor, value, dtype) -> Tensor:
    return like._backend.scalar(value, dtype)


def _scatter1(init: Tensor, slots: Tensor, values: Tensor, kind: str = "set") -> Tensor:
    n = slots.shape[0]
    if n == 0 or init.shape[0] == 0:  # nothing to write (XLA refuses a window on an
        return init                   # empty axis)
    return bind1(ix.scatter, init, reshape(slots, (n, 1)), values, update_window_dims=(),
                 inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,),
                 index_vector_dim=1, kind=kind, indices_are_sorted=False,
                 unique_indices=False)


def _unique(x, size, fill_value, name: str, equal_nan: bool = False):
    """(sorted, order, run id of each sorted element, slot of each run start or `size`,
    number of unique values as a tensor, size). NaNs are distinct values (the array
    API's rule) unless `equal_nan` (NumPy's and JAX's unique): then they are one."""
    x = as_tensor(x)
    if size is None and not x._backend.concrete:
        raise MustCompileError(at_user_line(
            f"{name} inside jit cannot be compiled without a static size: the number of "
            f"unique values depends on the data, and XLA programs have static shapes. Pass "
            f"size=N (and fill_value=...) to get exactly N values, or call {name} outside "
            f"jit"))
    flat = reshape(x, (x.size,))
    n = flat.shape[0]
    idt = index_dtype(n + 1 + (size or 0))
    iota = bind1(so.iota, shape=(n,), dtype=idt, dimension=0)
    if x.dtype.is_complex:  # NumPy's order: by real part, then imaginary part, and a
        # NaN in either part last (so equal_nan finds the NaNs side by side)
        nan = astype(bind1(ew.ne, flat, flat), dt.int8)
        _, _, _, s, order = sort_with([nan, bind1(ew.real, flat), bind1(ew.imag, flat)],
                                      [flat, iota], 0)
    else:
        s, order = sort_with([flat], [iota], 0)
    if n:
        prev = concatenate([s[:1], s[:-1]], axis=0)
        start = bind1(ew.ne, s, prev)
        if equal_nan and x.dtype.is_inexact:  # a NaN after a NaN starts no new value
            both = bind1(ew.and_, bind1(ew.ne, s, s), bind1(ew.ne, prev, prev))
            start = bind1(ew.and_, start, bind1(ew.not_, both))
        start = bind1(ew.or_, start, bind1(ew.eq, iota, broadcast_to(_scalar(x, 0, idt),
                                                                         (n,))))
        run = bind1(ew.subtract, cumsum(start, dtype=idt),
                    broadcast_to(_scalar(x, 1, idt), (n,)))
    else:
        start, run = astype(iota, dt.bool_), iota  # (empty)
    if size is None:
        size = int(run[-1].item()) + 1 if n else 0
    elif not isinstance(size, (int, np.integer)) or size < 0:
        raise ValueError(at_user_line(f"{name}: size must be a non-negative integer"))
    size = int(size)
    slot = bind1(ew.select, start, run, broadcast_to(_scalar(x, size, idt), (n,)))
    return flat, s, order, run, slot, size, idt


def _values(flat, s, slot, size, fill_value):
    first = s[0] if s.shape[0] else _scalar(flat, 0, flat.dtype)
    fill = first if fill_value is None else astype(fill_value, flat.dtype) if isinstance(
        fill_value, Tensor) else _scalar(flat, fill_value, flat.dtype)  # exact in its dtype
    return _scatter1(broadcast_to(fill, (size,)), slot, s)


def _counts(flat, slot, size, idt):
    n = flat.shape[0]
    starts = _scatter1(broadcast_to(_scalar(flat, n, idt), (size,)), slot,
                       bind1(so.iota, shape=(n,), dtype=idt, dimension=0))
    ends = concatenate([starts[1:], broadcast_to(_scalar(flat, n, idt), (1,))], axis=0) \
        if size else starts
    counts = bind1(ew.subtract, ends, starts)
    return astype(counts, DEFAULT_INT)


def _indices(flat, order, slot, size, idt):
    n = flat.shape[0]
    fill = order[0] if n else _scalar(flat, 0, idt)
    return astype(_scatter1(broadcast_to(fill, (size,)), slot, order), DEFAULT_INT)


def _inverse(x, order, run, idt):
    n = order.shape[0]
    inv = _scatter1(broadcast_to(_scalar(order, 0, idt), (n,)), order, run)
    return reshape(astype(inv, DEFAULT_INT), as_tensor(x).shape)


def unique_values(x, /, *, size=None, fill_value=None) -> Tensor:
    flat, s, order, run, slot, size, idt = _unique(x, size, fill_value, "unique_values")
    return _values(flat, s, slot, size, fill_value)


def unique_counts(x, /, *, size=None, fill_value=None) -> UniqueCountsResult:
    flat, s, order, run, slot, size, idt = _unique(x, size, fill_value, "unique_counts")
    return UniqueCountsResult(_values(flat, s, slot, size, fill_value),
                              _counts(flat, slot, size, idt))


def unique_inverse(x, /, *, size=None, fill_value=None) -> UniqueInverseResult:
    flat, s, order, run, slot, size, idt = _unique(x, size, fill_value, "unique_inverse")
    return UniqueInverseResult(_values(flat, s, slot, size, fill_value),
                               _inverse(x, order, run, idt))


def unique_all(x, /, *, size=None, fill_value=None) -> UniqueAllResult:
    flat, s, order, run, slot, size, idt = _unique(x, size, fill_value, "unique_all")
    return UniqueAllResult(_values(flat, s, slot, size, fill_value),
                           _indices(flat, order, slot, size, idt),
                           _inverse(x, order, run, idt),
                           _counts(flat, slot, size, idt))


def unique(x, return_index: bool = False, return_inverse: bool = False,
           return_counts: bool = False, axis=None, *, equal_nan: bool = True, size=None,
           fill_value=None):
    """NumPy's unique: of the flattened input, or with `axis` of the slices along it
    (unique rows for axis=0), sorted lexicographically; all NaNs are one value unless
    equal_nan=False (the array API's unique_* functions keep them apart)."""
    if axis is not None:
        return _unique_slices(x, axis, return_index, return_inverse, return_counts, size,
                              fill_value)
    flat, s, order, run, slot, size, idt = _unique(x, size, fill_value, "unique", equal_nan)
    out = [_values(flat, s, slot, size, fill_value)]
    if return_index:
        out.append(_indices(flat, order, slot, size, idt))
    if return_inverse:
        out.append(_inverse(x, order, run, idt))
    if return_counts:
        out.append(_counts(flat, slot, size, idt))
    return out[0] if len(out) == 1 else tuple(out)


def _unique_slices(x, axis, return_index, return_inverse, return_counts, size, fill_value):
    x = as_tensor(x)
    ax = normalize_axis(axis, x.ndim)
    if size is None and not x._backend.concrete:
        raise MustCompileError(at_user_line(
            "unique(axis=...) inside jit cannot be compiled without a static size: the "
            "number of unique slices depends on the data. Pass size=N (and fill_value=...) "
            "or call unique outside jit"))
    moved = moveaxis(x, ax, 0)
    n = moved.shape[0]
    rows = reshape(moved, (n, int(np.prod(moved.shape[1:]))))  # (-1 is ambiguous when n is 0)
    m = rows.shape[1]
    idt = index_dtype(n + 1 + (size or 0))
    iota = bind1(so.iota, shape=(n,), dtype=idt, dimension=0)
    # one stable sort with the columns as keys, the first column the primary one
    keys = [rows[:, j] for j in range(m)] or [iota]
    order = sort_with(keys, [iota], 0)[-1]
    s = take(rows, order, axis=0)
    if n:
        differs = any_(bind1(ew.ne, s[1:], s[:-1]), axis=1) if m else \
            broadcast_to(_scalar(x, False, dt.bool_), (n - 1,))
        start = concatenate([broadcast_to(_scalar(x, True, dt.bool_), (1,)), differs], 0)
        run = bind1(ew.subtract, cumsum(start, dtype=idt), broadcast_to(_scalar(x, 1, idt),
                                                                         (n,)))
    else:
        start, run = astype(iota, dt.bool_), iota  # (empty)
    if size is None:
        size = int(run[-1].item()) + 1 if n else 0
    elif not isinstance(size, (int, np.integer)) or size < 0:
        raise ValueError(at_user_line("unique: size must be a non-negative integer"))
    size = int(size)
    slot = bind1(ew.select, start, run, broadcast_to(_scalar(x, size, idt), (n,)))
    fill = (s[:1] if n else zeros((1, m), x.dtype)) if fill_value is None else \
        broadcast_to(values_in(x, fill_value), (1, m))
    values = broadcast_to(fill, (size, m)).at[slot].set(s)
    out = [moveaxis(reshape(values, (size,) + moved.shape[1:]), 0, ax)]
    if return_index:
        first = order[0] if n else _scalar(x, 0, idt)
        out.append(astype(broadcast_to(first, (size,)).at[slot].set(order), DEFAULT_INT))
    if return_inverse:
        out.append(astype(zeros((n,), idt).at[order].set(run), DEFAULT_INT))
    if return_counts:
        out.append(_counts(iota, slot, size, idt))
    return out[0] if len(out) == 1 else tuple(out)


def isin(element, test_elements, assume_unique: bool = False, invert: bool = False
         ) -> Tensor:
    """Whether each element of `element` is in `test_elements` (a sorted copy of them is
    binary-searched); invert=True gives the opposite."""
    e = as_tensor(element)
    t = reshape(as_tensor(test_elements, e), (-1,))
    if t.shape[0] == 0:
        found = broadcast_to(_scalar(e, False, dt.bool_), e.shape)
    else:
        s = sort(t)
        i = searchsorted(s, e)
        found = bind1(ew.eq, *promote_operands(take(s, i, mode="clip"), e)[0])
    return bind1(ew.not_, found) if invert else found


__all__ = ["isin", "unique", "unique_all", "unique_counts", "unique_inverse", "unique_values",
           "UniqueAllResult", "UniqueCountsResult", "UniqueInverseResult"]
