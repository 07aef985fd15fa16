"""Integer index values: checked against their axis, negatives wrapped, put in a mode.

x[i], x.at[i] and take/take_along_axis share these. A static index (a Python int, a
NumPy array or a list) is checked or clamped on the host; a tensor index is converted to
a signed index dtype and wrapped on the device (never range-checked there: the values
are not known). The modes are JAX's (see _indexing's docstring).
"""

from __future__ import annotations

import numpy as np

from ..compiler import dtypes as dt
from ..compiler.primitives import elementwise as ew
from ..dispatch import bind1
from ..errors import at_user_line
from ..tensor import Tensor
from ._operands import as_tensor, astype, broadcast_to


def _is_int(i) -> bool:
    return isinstance(i, (int, np.integer)) and not isinstance(i, (bool, np.bool_))


def _is_mask(i) -> bool:
    if isinstance(i, Tensor):
        return i.dtype is dt.bool_
    if isinstance(i, np.ndarray):
        return i.dtype == np.bool_
    return isinstance(i, (bool, np.bool_)) or isinstance(i, list) and bool(i) and all(
        isinstance(e, (bool, np.bool_)) for e in np.ravel(np.asarray(i, dtype=object)))


def index_dtype(*sizes: int) -> dt.DType:
    """int32 indices where every size fits (what XLA handles fastest), else int64."""
    return dt.int32 if all(n < 2 ** 31 for n in sizes) else dt.int64


def _host_index(i, n: int, axis: int, idt: dt.DType) -> np.ndarray:
    """A static integer index: checked against the axis size, negatives wrapped."""
    a = np.asarray(i)
    if a.size == 0:
        a = a.astype(np.int64)
    if a.dtype.kind not in "iu":
        raise IndexError(at_user_line(
            f"arrays used as indices must be of integer (or boolean) type, got {a.dtype}"))
    bad = (a < -n) | (a >= n)
    if bad.any():
        raise IndexError(at_user_line(
            f"index {int(a[bad].flat[0])} is out of bounds for axis {axis} with size {n}"))
    return np.where(a < 0, a + n, a).astype(idt.np)


def static_index_in_mode(i, n: int, mode: str, like: Tensor, axis: int = 0):
    """A static integer index (int, NumPy array or list) under an explicit mode, as JAX
    applies it: negative entries count from the end once, then out-of-range ones are
    clamped into [0, n) (mode "clip") or, for "fill" (a read fills them, an update drops
    them), the whole index becomes a tensor whose out-of-range entries are n (tensor
    indices are range-checked on the device). mode "raise" raises IndexError for them.
    In-range indices come back static: an int, or an int64 array. Indices that are not
    integers, and any index into an empty axis, come back unchanged (their IndexError is
    raised where they are used: there is nothing to clamp to, as JAX says)."""
    if _is_int(i) and n:  # the common case, in Python
        j = int(i) + n if i < 0 else int(i)
        if 0 <= j < n:
            return j
    a = np.asarray(i)
    if n == 0 or a.dtype.kind not in "iu" or a.size == 0:
        return i
    if a.dtype.kind == "u":
        a = np.minimum(a, n)  # every entry >= n is out of range alike (and fits int64)
    a = a.astype(np.int64)
    a = np.where(a < 0, a + n, a)
    bad = (a < 0) | (a >= n)
    if bad.any():
        if mode == "raise":
            first = np.asarray(i).flat[int(np.argmax(bad))]
            raise IndexError(at_user_line(
                f"index {int(first)} is out of bounds for axis {axis} with size {n} (pass "
                f"mode='drop' to skip out-of-range updates or mode='clip' to clamp them, "
                f"as jax.numpy would)"))
        if mode == "clip":
            a = np.clip(a, 0, n - 1)
        else:
            return as_tensor(np.where(bad, n, a).astype(index_dtype(n).np), like=like)
    return int(a) if _is_int(i) else a


def static_indices_in_mode(x: Tensor, idx: list, mode: str) -> list:
    """The expanded index `idx` of x with each static integer index put in `mode`
    (static_index_in_mode); slices, None, masks and tensors pass unchanged."""
    out, axis = [], 0
    for i in idx:
        if i is None:
            out.append(i)
            continue
        if _is_mask(i):
            out.append(i)
            axis += np.ndim(i) if not isinstance(i, Tensor) else i.ndim
            continue
        if not isinstance(i, (slice, Tensor)):
            i = static_index_in_mode(i, x.shape[axis], mode, x, axis)
        out.append(i)
        axis += 1
    return out


def index_as(i: Tensor, n: int, idt: dt.DType) -> Tensor:
    """An integer index tensor in the signed index dtype idt, for an axis of size n.
    Unsigned indices too large for idt are first lowered to n (out of range alike): a
    plain conversion would wrap them around to small or negative, in-range ones."""
    if i.dtype.kind == "u" and i.dtype.bits >= idt.bits and n < 2 ** i.dtype.bits:
        top = broadcast_to(i._backend.scalar(n, i.dtype), i.shape)
        i = bind1(ew.minimum, i, top)
    return astype(i, idt)


def _tensor_index(i: Tensor, n: int, idt: dt.DType) -> Tensor:
    """A dynamic integer index: negatives count from the end (not range-checked)."""
    if not i.dtype.is_integer:
        raise IndexError(at_user_line(
            f"tensors used as indices must be of integer (or boolean) type, got "
            f"{i.dtype.name}"))
    unsigned = i.dtype.kind == "u"
    i = index_as(i, n, idt)
    if unsigned:
        return i
    zero = i._backend.scalar(0, idt)
    size = i._backend.scalar(n, idt)
    neg = bind1(ew.lt, i, broadcast_to(zero, i.shape))
    return bind1(ew.select, neg, bind1(ew.add, i, broadcast_to(size, i.shape)), i)


def _in_range(i: Tensor, n: int) -> Tensor:
    """i in [0, n) for an index already wrapped once."""
    zero = broadcast_to(i._backend.scalar(0, i.dtype), i.shape)
    top = broadcast_to(i._backend.scalar(n, i.dtype), i.shape)
    return bind1(ew.and_, bind1(ew.ge, i, zero), bind1(ew.lt, i, top))
