"""Set functions of the array API: unique_values, unique_counts, unique_inverse,
unique_all, and NumPy's unique(...) (also of slices along an axis), isin, and the set
operations of 1-D sets intersect1d, setdiff1d, union1d and setxor1d.

All are one stable sort of the flattened input (carrying the original positions), a
"new run starts here" mask, a cumulative sum that numbers the runs, and scatters. The
number of unique values depends on the data: outside jit it is read once from the
device; inside jit pass a static `size=` (as in JAX). With `size`, missing entries are
padded with `fill_value` (default: the smallest unique value, as in JAX), their counts
are 0 and their indices those of the smallest value. NaNs are distinct from each other
(NumPy 2's unique_* functions).

The set operations flatten their inputs, sort them once and keep a mask of the values
in the result; like unique they need a static `size=` inside jit, where the result is
padded with `fill_value` (default: the smallest value of the result, 0 when it is
empty; setdiff1d: 0, as in JAX).
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
from ._creation import arange, zeros
from ._index_values import index_dtype
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
from ._reductions import sum as sum_
from ._searching import searchsorted, take
from ._sorting import argsort, cummax, cumsum, sort, sort_with


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
    if type(element) is int and isinstance(test_elements, Tensor) and \
            test_elements.dtype.kind in "iu":
        # a Python int element takes the test elements' dtype; outside its range it is
        # in none of them
        info = np.iinfo(test_elements.dtype.np)
        if not info.min <= element <= info.max:
            return _scalar(test_elements, bool(invert), dt.bool_)
        element = np.asarray(element, test_elements.dtype.np)
    e = as_tensor(element, test_elements if isinstance(test_elements, Tensor) else None)
    if type(test_elements) is int and e.dtype.kind in "iu":
        # a Python int takes e's dtype (the array API's rule for scalar operands), so
        # 2**63 is a uint64; one outside e's range equals none of its elements
        info = np.iinfo(e.dtype.np)
        if not info.min <= test_elements <= info.max:
            found = broadcast_to(_scalar(e, False, dt.bool_), e.shape)
            return bind1(ew.not_, found) if invert else found
        test_elements = np.asarray(test_elements, e.dtype.np)
    t = reshape(as_tensor(test_elements, e), (-1,))
    if t.shape[0] == 0:
        found = broadcast_to(_scalar(e, False, dt.bool_), e.shape)
    else:
        s = sort(t)
        i = searchsorted(s, e)
        found = bind1(ew.eq, *promote_operands(take(s, i, mode="clip"), e)[0])
    return bind1(ew.not_, found) if invert else found


# ---- set operations of two 1-D sets ---------------------------------------------------

def _need_size(x: Tensor, size, name: str):
    if size is None:
        if not x._backend.concrete:
            raise MustCompileError(at_user_line(
                f"{name} inside jit cannot be compiled without a static size: the number of "
                f"values in the result depends on the data. Pass size=N (and "
                f"fill_value=...) to get exactly N values, or call {name} outside jit"))
        return None
    if not isinstance(size, (int, np.integer)) or isinstance(size, bool) or size < 0:
        raise ValueError(at_user_line(f"{name}: size must be a non-negative integer, got "
                                      f"{size!r}"))
    return int(size)


def _flat(x: Tensor) -> Tensor:
    return reshape(x, (x.size,))


def _sort_order(flat: Tensor) -> Tensor:
    """The stable order that sorts the 1-D flat (complex numbers by real part, then
    imaginary part, NaNs last, as NumPy)."""
    n = flat.shape[0]
    iota = bind1(so.iota, shape=(n,), dtype=index_dtype(n + 1), dimension=0)
    if flat.dtype.is_complex:
        nan = astype(bind1(ew.ne, flat, flat), dt.int8)
        return sort_with([nan, bind1(ew.real, flat), bind1(ew.imag, flat)], [iota], 0)[-1]
    return sort_with([flat], [iota], 0)[-1]


def _member(v: Tensor, b, first_index: bool = False):
    """isin(v, b) for the 1-D v, also of complex numbers (isin's binary search needs an
    order): one sort of both, b's entries before v's equal ones, and each v entry
    compared with the last b entry at or before it. With first_index, also the index in
    b of each value's first occurrence (0 where it has none)."""
    (v, b), _ = promote_operands(v, b)
    if not v.dtype.is_complex and not first_index:
        return isin(v, b)
    b = _flat(b)
    n, m = v.shape[0], b.shape[0]
    if n == 0 or m == 0:
        no = broadcast_to(_scalar(v, False, dt.bool_), (n,))
        return (no, zeros((n,), DEFAULT_INT)) if first_index else no
    aux = concatenate([b, v], 0)
    idt = index_dtype(n + m + 1)
    iota = bind1(so.iota, shape=(n + m,), dtype=idt, dimension=0)
    from_v = astype(bind1(ew.ge, iota, broadcast_to(_scalar(v, m, idt), (n + m,))), dt.int8)
    if aux.dtype.is_complex:
        nan = astype(bind1(ew.ne, aux, aux), dt.int8)
        keys = [nan, bind1(ew.real, aux), bind1(ew.imag, aux), from_v]
    else:
        keys = [aux, from_v]
    *_, srt, order = sort_with(keys, [aux, iota], 0)
    is_b = bind1(ew.lt, order, broadcast_to(_scalar(v, m, idt), (n + m,)))
    minus1 = broadcast_to(_scalar(v, -1, DEFAULT_INT), (n + m,))
    last_b = cummax(bind1(ew.select, is_b, astype(iota, DEFAULT_INT), minus1))
    found = bind1(ew.and_, bind1(ew.ge, last_b, broadcast_to(_scalar(v, 0, DEFAULT_INT),
                                                              (n + m,))),
                  bind1(ew.eq, srt, take(srt, last_b, mode="clip")))
    # back to v's order: sorted position k holds the entry order[k]
    back = _scatter1(broadcast_to(_scalar(v, False, dt.bool_), (n + m,)), order, found)
    if not first_index:
        return back[m:]
    # b's entries of a value come first, in their order: the run's start is the first
    prev = concatenate([srt[:1], srt[:-1]], 0)
    start = bind1(ew.or_, bind1(ew.ne, srt, prev), bind1(ew.eq, iota, broadcast_to(
        _scalar(v, 0, idt), (n + m,))))
    run_start = cummax(bind1(ew.select, start, astype(iota, DEFAULT_INT), minus1))
    where_b = astype(take(order, run_start, mode="clip"), DEFAULT_INT)
    first = _scatter1(zeros((n + m,), DEFAULT_INT), order, where_b)
    return back[m:], first[m:]


def _run_starts(s: Tensor) -> Tensor:
    """Where a new value starts in the sorted s (all NaNs count as one value)."""
    n = s.shape[0]
    if n == 0:
        return astype(s, dt.bool_)
    prev = concatenate([s[:1], s[:-1]], 0)
    start = bind1(ew.ne, s, prev)
    if s.dtype.is_inexact:
        both = bind1(ew.and_, bind1(ew.ne, s, s), bind1(ew.ne, prev, prev))
        start = bind1(ew.and_, start, bind1(ew.not_, both))
    first = bind1(ew.eq, arange(n), broadcast_to(_scalar(s, 0, DEFAULT_INT), (n,)))
    return bind1(ew.or_, start, first)


def _compact(values: Tensor, keep: Tensor, size, fill_value, default_fill,
             riders=()) -> list[Tensor]:
    """values[keep] (and each rider[keep]), in order; with size: exactly `size` entries,
    the missing values filled with fill_value (or default_fill(first kept value, count)),
    and the missing riders with their own fill (rider, fill) pairs."""
    if size is None:
        kept = np.flatnonzero(np.asarray(keep.numpy()))
        i = as_tensor(kept.astype(np.int64), values)
        return [take(values, i)] + [take(r, i) for r, _ in riders]
    n = values.shape[0]
    order = argsort(keep, stable=True, descending=True) if n else arange(0)
    pos = arange(size)
    count = sum_(keep, dtype=DEFAULT_INT)
    valid = bind1(ew.lt, pos, broadcast_to(count, (size,)))

    def first(t: Tensor, fill) -> Tensor:
        got = take(t, order[:size], mode="clip") if n else zeros((0,), t.dtype)
        if got.shape[0] < size:
            got = concatenate([got, zeros((size - got.shape[0],), t.dtype)], 0)
        return bind1(ew.select, valid, got, broadcast_to(fill, (size,)))

    out = first(values, values_in(values, 0))
    if fill_value is not None:
        fill = values_in(values, fill_value)
    else:
        fill = default_fill(out, count)
    return [first(values, fill)] + [first(r, values_in(r, f)) for r, f in riders]


def _smallest(vals: Tensor, count: Tensor) -> Tensor:
    """The default fill: the first (smallest) value of the result, 0 when it is empty."""
    if vals.shape[0] == 0:
        return _scalar(vals, 0, vals.dtype)
    zero = _scalar(vals, 0, vals.dtype)
    return bind1(ew.select, bind1(ew.gt, count, _scalar(count, 0, count.dtype)), vals[0], zero)


def intersect1d(ar1, ar2, assume_unique: bool = False, return_indices: bool = False, *,
                size=None, fill_value=None):
    """The sorted values in both ar1 and ar2 (flattened). return_indices=True also
    gives the index of each value's first occurrence in ar1 and in ar2 (with size:
    padded with len(ar1) and len(ar2))."""
    (a, b), _ = promote_operands(ar1, ar2)
    size = _need_size(a, size, "intersect1d")
    a, b = _flat(a), _flat(b)
    order1 = _sort_order(a)
    s1 = take(a, order1)
    keep = bind1(ew.and_, _run_starts(s1), _member(s1, b))
    if not return_indices:
        return _compact(s1, keep, size, fill_value, _smallest)[0]
    _, j = _member(s1, b, first_index=True)
    vals, i1, i2 = _compact(s1, keep, size, fill_value, _smallest,
                            riders=((astype(order1, DEFAULT_INT), a.shape[0]),
                                    (astype(j, DEFAULT_INT), b.shape[0])))
    return vals, i1, i2


def setdiff1d(ar1, ar2, assume_unique: bool = False, *, size=None, fill_value=None
              ) -> Tensor:
    """The sorted unique values of ar1 (flattened) that are not in ar2, in ar1's
    dtype; with size, padded with fill_value (default 0, as in JAX)."""
    a = as_tensor(ar1)
    size = _need_size(a, size, "setdiff1d")
    a = _flat(a)
    s = take(a, _sort_order(a))
    keep = bind1(ew.and_, _run_starts(s), bind1(ew.not_, _member(s, ar2)))
    return _compact(s, keep, size, 0 if fill_value is None else fill_value, _smallest)[0]


def union1d(ar1, ar2, *, size=None, fill_value=None) -> Tensor:
    """The sorted unique values of ar1 and ar2 (flattened) together."""
    (a, b), _ = promote_operands(ar1, ar2)
    size = _need_size(a, size, "union1d")
    return unique(concatenate([_flat(a), _flat(b)], 0), size=size, fill_value=fill_value)


def setxor1d(ar1, ar2, assume_unique: bool = False, *, size=None, fill_value=None
             ) -> Tensor:
    """The sorted values in exactly one of ar1 and ar2 (flattened)."""
    (a, b), _ = promote_operands(ar1, ar2)
    size = _need_size(a, size, "setxor1d")
    a, b = _flat(a), _flat(b)
    s1, s2 = take(a, _sort_order(a)), take(b, _sort_order(b))
    aux = concatenate([s1, s2], 0)
    distinct = concatenate([_run_starts(s1), _run_starts(s2)], 0)  # each set's values once
    # sorted by (not distinct, value): the values of both sets in order, then the rest
    order = _sort_order(aux)
    aux, distinct = take(aux, order), take(distinct, order)
    order = argsort(distinct, stable=True, descending=True) if aux.shape[0] else arange(0)
    aux = take(aux, order)
    n = aux.shape[0]
    if n == 0:
        return _compact(aux, astype(aux, dt.bool_), size, fill_value, _smallest)[0]
    count = sum_(distinct, dtype=DEFAULT_INT)
    pos = arange(n)
    # a value of one set only differs from both neighbours among the first `count`
    last = bind1(ew.eq, pos, broadcast_to(bind1(ew.subtract, count, _scalar(count, 1,
                                                                             DEFAULT_INT)),
                                          (n,)))
    zero = bind1(ew.eq, pos, broadcast_to(_scalar(pos, 0, DEFAULT_INT), (n,)))
    before = concatenate([aux[:1], aux[:-1]], 0)
    after = concatenate([aux[1:], aux[-1:]], 0)
    keep = bind1(ew.and_, bind1(ew.lt, pos, broadcast_to(count, (n,))), bind1(
        ew.and_, bind1(ew.or_, zero, bind1(ew.ne, aux, before)),
        bind1(ew.or_, last, bind1(ew.ne, aux, after))))
    return _compact(aux, keep, size, fill_value, _smallest)[0]


__all__ = ["intersect1d", "isin", "setdiff1d", "setxor1d", "union1d", "unique", "unique_all",
           "unique_counts", "unique_inverse", "unique_values", "UniqueAllResult",
           "UniqueCountsResult", "UniqueInverseResult"]
