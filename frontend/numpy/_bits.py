"""Bits of integers: bitwise_count (population count), packbits and unpackbits.

All are shifts, masks and sums of the elementwise functions, so they work inside jit.
"""

from __future__ import annotations

import operator

from ..compiler import dtypes as dt
from ..errors import at_user_line
from ..tensor import Tensor
from ._creation import arange, zeros
from ._elementwise import (
    abs,
    add,
    bitwise_and,
    greater,
    left_shift,
    multiply,
    not_equal,
    right_shift,
    subtract,
)
from ._manipulation import concatenate, flip, reshape, swapaxes
from ._operands import as_tensor, astype, normalize_axis
from ._reductions import sum

_UNSIGNED = {8: dt.uint8, 16: dt.uint16, 32: dt.uint32, 64: dt.uint64}


def bitwise_count(x, /) -> Tensor:
    """The number of 1 bits in the absolute value of each integer, as uint8 (NumPy's
    and JAX's rule)."""
    x = as_tensor(x)
    if x.dtype is dt.bool_:
        return astype(x, dt.uint8)
    if x.dtype.kind not in "iu":
        raise TypeError(at_user_line(f"bitwise_count needs integers or booleans, got "
                                     f"{x.dtype}"))
    w = x.dtype.bits
    u = _UNSIGNED[w]
    # |x| in the unsigned type of the same width (|-128| as an int8 wraps to 0x80: 1 bit)
    v = astype(abs(x) if x.dtype.kind == "i" else x, u)

    def c(pattern: int) -> Tensor:
        return v._backend.scalar(int.from_bytes(bytes([pattern]) * (w // 8), "little"), u)
    # the classic SWAR count: bits per 2, per 4, per 8, then the bytes summed
    v = subtract(v, bitwise_and(right_shift(v, 1), c(0x55)))
    v = add(bitwise_and(v, c(0x33)), bitwise_and(right_shift(v, 2), c(0x33)))
    v = bitwise_and(add(v, right_shift(v, 4)), c(0x0F))
    if w > 8:
        v = right_shift(multiply(v, c(0x01)), w - 8)
    return astype(v, dt.uint8)


def _check_order(bitorder: str, name: str) -> None:
    if bitorder not in ("big", "little"):
        raise ValueError(at_user_line(f"{name}: bitorder must be 'big' or 'little', got "
                                      f"{bitorder!r}"))


def packbits(a, axis=None, bitorder: str = "big") -> Tensor:
    """The truth of each element (nonzero) packed 8 to a uint8 along `axis` (the
    flattened input by default), the last byte padded with zeros; bitorder='big' puts
    the first element in the highest bit."""
    x = as_tensor(a)
    if x.dtype.kind not in "iub":
        raise TypeError(at_user_line(f"packbits needs integers or booleans, got {x.dtype}"))
    _check_order(bitorder, "packbits")
    bits = astype(not_equal(x, 0), dt.uint8)
    if axis is None:
        bits, ax = reshape(bits, (bits.size,)), 0
    else:
        ax = normalize_axis(axis, x.ndim)
    bits = swapaxes(bits, ax, -1)
    extra = -bits.shape[-1] % 8
    if extra:
        bits = concatenate([bits, zeros(bits.shape[:-1] + (extra,), dt.uint8)], -1)
    bits = reshape(bits, bits.shape[:-1] + (bits.shape[-1] // 8, 8))
    shifts = arange(8, dtype=dt.uint8)
    if bitorder == "big":
        shifts = flip(shifts)
    packed = astype(sum(left_shift(bits, shifts), axis=-1), dt.uint8)
    return swapaxes(packed, ax, -1)


def unpackbits(a, axis=None, count=None, bitorder: str = "big") -> Tensor:
    """The bits of a uint8 tensor as uint8 zeros and ones, 8 per byte along `axis` (the
    flattened input by default); count keeps the first `count` bits (or pads with
    zeros to that many)."""
    x = as_tensor(a)
    if x.dtype is not dt.uint8:
        raise TypeError(at_user_line(f"unpackbits needs a uint8 tensor, got {x.dtype}; "
                                     f"convert it with astype(x, uint8)"))
    _check_order(bitorder, "unpackbits")
    if axis is None:
        x, ax = reshape(x, (x.size,)), 0
    else:
        ax = normalize_axis(axis, x.ndim)
    x = swapaxes(x, ax, -1)
    shifts = arange(8, dtype=dt.uint8)
    if bitorder == "big":
        shifts = flip(shifts)
    one = x._backend.scalar(1, dt.uint8)
    bits = astype(greater(bitwise_and(x[..., None], left_shift(one, shifts)), 0), dt.uint8)
    bits = reshape(bits, bits.shape[:-2] + (bits.shape[-2] * 8,))
    if count is not None:
        count = operator.index(count)
        n = bits.shape[-1]
        if count < 0:
            count = max(n + count, 0)
        if count > n:
            bits = concatenate([bits, zeros(bits.shape[:-1] + (count - n,), dt.uint8)], -1)
        else:
            bits = bits[..., :count]
    return swapaxes(bits, ax, -1)


__all__ = ["bitwise_count", "packbits", "unpackbits"]
