"""Type promotion: the one place that decides result dtypes of mixed operands.

- Tensors of the same kind follow the Python array API standard's table.
- Mixed kinds (int with float, signed with unsigned 64-bit) — which the standard leaves
  open — follow NumPy 2 (`numpy.promote_types`): int32 + float32 -> float64,
  uint64 + int64 -> float64.
- bfloat16 behaves like float16 in that table, and bfloat16 + float16 -> float32.
- Two Python scalars of different kinds give the higher kind's default (1.0 + 1 is a
  weak float32, as in jax).
- Python scalars are weak: they take the tensor's dtype when their kind fits
  (x_f16 + 1.5 -> float16, x_i8 + 3 -> int8). A float scalar with an integer tensor
  gives the default float (float32); a complex scalar gives the complex type of the
  tensor's precision.
- Defaults: float32 for Python floats, int64 for Python ints.
"""

from __future__ import annotations

import numpy as np

from .compiler import dtypes as dt
from .compiler.dtypes import DType
from .tensor import Tensor

DEFAULT_FLOAT = dt.float32
DEFAULT_INT = dt.int64
DEFAULT_COMPLEX = dt.complex64

_KIND_ORDER = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}


def python_scalar_dtype(x) -> DType:
    if isinstance(x, bool):
        return dt.bool_
    if isinstance(x, int):
        return DEFAULT_INT
    if isinstance(x, float):
        return DEFAULT_FLOAT
    if isinstance(x, complex):
        return DEFAULT_COMPLEX
    raise TypeError(f"{type(x).__name__} is not a Python scalar")


def promote_strong(a: DType, b: DType) -> DType:
    if a is b:
        return a
    if a is dt.bfloat16 or b is dt.bfloat16:
        other = b if a is dt.bfloat16 else a
        if other in (dt.bfloat16, dt.bool_) or other.kind in "iu" and other.bits <= 8:
            return dt.bfloat16
        if other is dt.float16:
            return dt.float32
        r = dt.dtype(np.promote_types(np.float16, other.np))
        return dt.bfloat16 if r is dt.float16 else r
    return dt.dtype(np.promote_types(a.np, b.np))


def promote(a: DType, a_weak: bool, b: DType, b_weak: bool) -> tuple[DType, bool]:
    """Result dtype (and whether it is still weak) of combining two operands."""
    if a_weak and b_weak and _KIND_ORDER[a.kind] != _KIND_ORDER[b.kind]:
        # two Python scalars of different kinds: the higher kind's own type, as in jax
        # (arctan2(0.0, -1) is float32, not the float64 that float32 with int64 gives)
        return (a if _KIND_ORDER[a.kind] > _KIND_ORDER[b.kind] else b), True
    if a_weak == b_weak:
        return promote_strong(a, b), a_weak
    strong, weak = (b, a) if a_weak else (a, b)
    if _KIND_ORDER[weak.kind] <= _KIND_ORDER[strong.kind]:
        return strong, False
    if weak.kind == "c":
        return (dt.complex128 if strong is dt.float64 else dt.complex64), False
    if weak.kind == "f":
        return DEFAULT_FLOAT, False
    return DEFAULT_INT, False  # int scalar with a bool tensor


def result_type(*operands) -> DType:
    """Like numpy.result_type over Tensors, dtypes and Python scalars (weak)."""
    dtype, weak = None, True
    for x in operands:
        if isinstance(x, Tensor):
            d, w = x.dtype, x.weak
        elif isinstance(x, (bool, int, float, complex)):
            d, w = python_scalar_dtype(x), True
        else:
            d, w = dt.dtype(getattr(x, "dtype", x)), False
        dtype, weak = (d, w) if dtype is None else promote(dtype, weak, d, w)
    if dtype is None:
        raise ValueError("result_type needs at least one operand")
    return dtype
