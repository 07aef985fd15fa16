"""Type promotion: the one place that decides result dtypes and weak types (README,
"Type promotion", is the same table in words).

The rule is JAX's promotion lattice (jax/_src/dtypes.py, its 64-bit form, since stablejit
keeps 64-bit types): the result of combining two operands is their least upper bound in
the graph below. `i*`, `f*`, `c*` are the weak kinds: Python scalars, and values computed
only from weak values. A weak operand is placed at its kind's node, so it takes the other
operand's dtype when the kind fits (x_f16 * 2.0 is float16, x_i8 + 3 is int8). A result at
a weak node is weak and has that kind's default dtype (float32, int64, complex64; in x64
mode float64, int64, complex128). Python bools are never weak (a bool promotes as bool
either way, as in JAX).

x64 mode (jax's `jax_enable_x64`): `config.update("jax_enable_x64", True)`, the variable
JAX_ENABLE_X64=1 or STABLEJIT_ENABLE_X64=1, or `stablejit.experimental.enable_x64()`,
makes the default float float64 and the default complex complex128: Python floats,
`zeros(3)`, integer inputs to float functions. `default_float()` and `default_complex()`
are the one way to read them (module variables that `set_x64` writes; never import them
by value).
"""

from __future__ import annotations

import numpy as np

from . import config, writes
from .compiler import dtypes as dt
from .compiler.dtypes import DType
from .errors import int_out_of_range
from .tensor import Tensor

DEFAULT_INT = dt.int64  # in both modes (jax's x64 mode's; stablejit keeps 64-bit types)

# the weak kinds
WEAK_INT, WEAK_FLOAT, WEAK_COMPLEX = "i*", "f*", "c*"
_WEAK_NODE = {"i": WEAK_INT, "u": WEAK_INT, "f": WEAK_FLOAT, "c": WEAK_COMPLEX}
_WEAK_DEFAULT = {WEAK_INT: DEFAULT_INT, WEAK_FLOAT: dt.float32, WEAK_COMPLEX: dt.complex64}

# ---- x64 mode: the default float and complex --------------------------------------------

x64 = False  # read on hot paths (and in cache keys) as promotion.x64
_float, _complex = dt.float32, dt.complex64


def default_float() -> DType:
    """The default real floating dtype: float32, or float64 in x64 mode."""
    return _float


def default_complex() -> DType:
    """The default complex dtype: complex64, or complex128 in x64 mode."""
    return _complex


def set_x64(on: bool) -> None:
    """Turn x64 mode on or off (config.update("jax_enable_x64", on) calls this). Programs
    traced in the other mode are not reused: jit's signature and composite keys hold
    `x64`, and the change bumps writes.epoch, which sends jitted calls (the native one
    too) through the Python path once, where their fast tables are cleared."""
    global x64, _float, _complex
    on = bool(on)
    if on == x64:
        return
    x64 = on
    _float, _complex = (dt.float64, dt.complex128) if on else (dt.float32, dt.complex64)
    _WEAK_DEFAULT[WEAK_FLOAT], _WEAK_DEFAULT[WEAK_COMPLEX] = _float, _complex
    dt.set_python_defaults(_float, _complex)  # dtype=float, dtype=complex
    writes.new_mode()


config.on_update("enable_x64", set_x64)
set_x64(config.enable_x64)  # JAX_ENABLE_X64 / STABLEJIT_ENABLE_X64, read at start-up

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
        return _float
    if isinstance(x, complex):
        return _complex
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
