"""Type promotion: the one place that decides result dtypes and weak types (README,
"Type promotion", is the same table in words).

The rule is JAX's promotion lattice (jax/_src/dtypes.py, its 64-bit form, since stablejit
keeps 64-bit types): the result of combining two operands is their least upper bound in
the graph below. `i*`, `f*`, `c*` are the weak kinds: Python scalars, and values computed
only from weak values. A weak operand is placed at its kind's node, so it takes the other
operand's dtype when the kind fits (x_f16 * 2.0 is float16, x_i8 + 3 is int8). A result at
a weak node is weak and has that kind's default dtype (float32, int64, complex64).
Python bools are never weak (a bool promotes as bool either way, as in JAX).
"""

from __future__ import annotations

import numpy as np

from .compiler import dtypes as dt
from .compiler.dtypes import DType
from .errors import int_out_of_range
from .tensor import Tensor

DEFAULT_FLOAT = dt.float32
DEFAULT_INT = dt.int64
DEFAULT_COMPLEX = dt.complex64

# the weak kinds
WEAK_INT, WEAK_FLOAT, WEAK_COMPLEX = "i*", "f*", "c*"
_WEAK_NODE = {"i": WEAK_INT, "u": WEAK_INT, "f": WEAK_FLOAT, "c": WEAK_COMPLEX}
_WEAK_DEFAULT = {WEAK_INT: DEFAULT_INT, WEAK_FLOAT: DEFAULT_FLOAT,
                 WEAK_COMPLEX: DEFAULT_COMPLEX}

# Each type -> the types directly above it.
LATTICE: dict = {
    dt.bool_: [WEAK_INT],
    WEAK_INT: [dt.uint8, dt.int8],
    dt.uint8: [dt.int16, dt.uint16],
    dt.uint16: [dt.int32, dt.uint32],
    dt.uint32: [dt.int64, dt.uint64],
    dt.uint64: [WEAK_FLOAT],
    dt.int8: [dt.int16],
    dt.int16: [dt.int32],
    dt.int32: [dt.int64],
    dt.int64: [WEAK_FLOAT],
    WEAK_FLOAT: [dt.bfloat16, dt.float16, WEAK_COMPLEX],
    dt.bfloat16: [dt.float32],
    dt.float16: [dt.float32],
    dt.float32: [dt.float64, dt.complex64],
    dt.float64: [dt.complex128],
    WEAK_COMPLEX: [dt.complex64],
    dt.complex64: [dt.complex128],
    dt.complex128: [],
}


def _upper_bounds() -> dict:
    ub = {n: {n} for n in LATTICE}
    changed = True
    while changed:
        changed = False
        for n in LATTICE:
            more = set().union(*(LATTICE[m] for m in ub[n])) - ub[n]
            if more:
                ub[n] |= more
                changed = True
    return ub


def _joins() -> dict:
    """The least upper bound of every pair of nodes: the common upper bound that lies
    below all the others."""
    ub = _upper_bounds()
    out = {}
    for a in LATTICE:
        for b in LATTICE:
            common = ub[a] & ub[b]
            (least,) = [c for c in common if ub[c] >= common]
            out[a, b] = least
    return out


_JOIN = _joins()


def _node(d: DType, weak: bool):
    return _WEAK_NODE[d.kind] if weak and d.kind != "b" else d


def promote(a: DType, a_weak: bool, b: DType, b_weak: bool) -> tuple[DType, bool]:
    """Result dtype (and whether it is weak) of combining two operands."""
    j = _JOIN[_node(a, a_weak), _node(b, b_weak)]
    if isinstance(j, str):
        return _WEAK_DEFAULT[j], True
    return j, False


_INT_LIMIT = 2**63  # DEFAULT_INT holds -2**63 .. 2**63 - 1


def check_python_int(x, dtype: DType) -> None:
    """Raise OverflowError naming the value and the range when the Python int x does not
    fit the integer dtype (NumPy's words were "int too large to convert to C long")."""
    if type(x) is int and dtype.kind in "iu":
        info = np.iinfo(dtype.np)
        if not info.min <= x <= info.max:
            raise int_out_of_range(x, dtype.name, int(info.min), int(info.max))


def is_weak_scalar(x) -> bool:
    """Python int, float and complex are weak; bool is not, and NumPy scalars (np.float64
    subclasses float) keep their dtype."""
    return isinstance(x, (int, float, complex)) and not isinstance(x, (bool, np.generic))


def python_scalar_dtype(x) -> DType:
    if isinstance(x, bool):
        return dt.bool_
    if isinstance(x, int):
        if not -_INT_LIMIT <= x < _INT_LIMIT:
            check_python_int(x, DEFAULT_INT)
        return DEFAULT_INT
    if isinstance(x, float):
        return DEFAULT_FLOAT
    if isinstance(x, complex):
        return DEFAULT_COMPLEX
    raise TypeError(f"{type(x).__name__} is not a Python scalar")


def operand_type(x) -> tuple[DType, bool]:
    """(dtype, weak) of a Tensor, Python scalar, NumPy value or dtype."""
    if isinstance(x, Tensor):
        return x.dtype, x.weak
    if isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic):
        return python_scalar_dtype(x), is_weak_scalar(x)
    return dt.dtype(getattr(x, "dtype", x)), False


def result_type_and_weak(*operands) -> tuple[DType, bool]:
    if not operands:
        raise ValueError("result_type needs at least one operand")
    dtype, weak = operand_type(operands[0])
    for x in operands[1:]:
        dtype, weak = promote(dtype, weak, *operand_type(x))
    return dtype, weak


def result_type(*operands) -> DType:
    """jax.numpy.result_type over Tensors, dtypes and Python scalars."""
    return result_type_and_weak(*operands)[0]


# ---- weak results of operations ------------------------------------------------------

_WEAK_FAMILIES = ("elementwise", "shape")
_STRONG_PRIMS = ("convert", "bitcast_convert")  # astype gives a strong dtype, as in JAX


def weak_result(prim, tensors) -> bool:
    """JAX's weak-type rule: an elementwise or shape op whose operands are all weak gives
    weak results (a boolean operand, such as select's predicate, does not count)."""
    if prim.family not in _WEAK_FAMILIES or prim.name in _STRONG_PRIMS:
        return False
    seen = False
    for t in tensors:
        if t.weak:
            seen = True
        elif t.dtype is not dt.bool_:
            return False
    return seen
