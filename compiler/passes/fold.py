"""Constant folding and algebraic simplification.

Folding: an op whose operands are all constants is evaluated with its reference rule
and becomes a constant, if the result is small (large constants bloat the program;
XLA folds those itself) and the rule gives the bits every device gives: data movement,
comparisons, integer arithmetic and IEEE's correctly rounded float arithmetic. Anything
else (exp, a float sum, a product, a decomposition) runs on the device, as it runs when
its operands are buffers, or jit of a function of constants would differ from the same
function run eagerly: an eigh folded by NumPy's LAPACK gave other eigenvector signs than
the GPU's cuSOLVER, so a sampler drew other numbers under jit than eagerly. (hold.py keeps
StableHLO's and XLA's folders from evaluating what this one leaves.)
Simplification: identities that are exact for every input — x+(-0.0), x-(+0.0), x*1, x/1
(real x only),
neg(neg(x)), no-op reshape/transpose/convert/broadcast/slice/reverse, one rule per
primitive in the SIMPLIFY table. x*0 is not rewritten for floats (NaN*0 is NaN). Both
run through the one rewrite driver (passes/rewrite.py).
"""

from __future__ import annotations

import numpy as np

from ..interpreter import run_op
from ..ir import Attrs, Function, Literal, Op, Value
from ..primitives import elementwise as ew
from ..primitives import shape_ops as so
from .rewrite import rewrite

FOLD_LIMIT = 1024  # elements
# Ops that only spread a constant out: folding them would write every element.
_GENERATORS = (so.constant, so.broadcast_in_dim, so.iota)


def _constant_of(v: Value, producers: dict) -> np.ndarray | None:
    op = producers.get(v)
    if op is None:
        return None
    if op.prim is so.constant:
        return op.attrs["value"].array
    if op.prim is so.broadcast_in_dim:  # splat constants are usually broadcasts
        inner = _constant_of(op.operands[0], producers)
        if inner is not None and inner.size == 1 and not v.type.symbolic:
            return np.broadcast_to(inner.reshape(()), v.type.shape)
    return None


def _is_all(a: np.ndarray | None, x) -> bool:
    return a is not None and a.size > 0 and bool(np.all(a == x))


def _is_zero(a: np.ndarray | None, d, negative: bool) -> bool:
    """a is all zeros; for floats, zeros whose sign is `negative` (the exact identity)."""
    if not _is_all(a, 0):
        return False
    if d.kind not in "fc":
        return True
    parts = (a.real, a.imag) if d.kind == "c" else (a,)
    return all(bool(np.all(np.signbit(q) == negative)) for q in parts)


def fold(fn: Function) -> Function:
    producers: dict[Value, Op] = {}

    def rule(op: Op):
        simplify = SIMPLIFY.get(op.prim)
        result = (simplify and simplify(op, producers)) or _fold(op, producers)
        if isinstance(result, list):
            for new in result:
                for r in new.results:
                    producers[r] = new
        elif result is None:
            for r in op.results:
                producers[r] = op
        return result

    return rewrite(fn, rule)


# The ops whose reference rule gives every device's bits: moving data, comparing,
# selecting, and (exact) arithmetic that IEEE defines to the bit.
_MOVES = frozenset({"constant", "iota", "broadcast_in_dim", "reshape", "transpose", "slice",
                    "concatenate", "pad", "reverse", "dynamic_slice", "dynamic_update_slice",
                    "gather", "select", "clamp",
                    "maximum", "minimum", "eq", "ne", "lt", "le", "gt", "ge", "and", "or",
                    "xor", "not", "shift_left", "shift_right", "bitcast_convert", "real",
                    "imag", "conj", "complex", "is_finite", "sign", "floor", "ceil",
                    "round", "neg", "abs", "reduce_max", "reduce_min", "reduce_and",
                    "reduce_or", "argmax", "argmin", "cummax", "cummin", "nextafter"})
# correctly rounded for real floats (not complex: its products and quotients are each
# library's own formula), exact for integers
_ROUNDED = frozenset({"add", "subtract", "divide", "remainder"})
# exact for integers only: a float sum's order is the device's, and a float product is
# not always rounded alone (XLA contracts x * y + z into one fused multiply-add, as it
# does when x and y are buffers)
_INTEGER_ONLY = frozenset({"multiply", "reduce_sum", "reduce_prod", "cumsum", "cumprod",
                           "dot_general"})


def exact(op: Op) -> bool:
    """The op's reference rule gives the bits the device gives, for these operands."""
    name, kinds = op.prim.name, {v.type.dtype.kind for v in op.operands}
    if name == "convert":  # float to integer is the platform's outside the range
        return not (kinds & set("fc") and op.results[0].type.dtype.kind in "iub")
    if name in _INTEGER_ONLY:
        return not kinds & set("fc")
    if name in _ROUNDED and "c" in kinds:
        return False
    if name == "abs" and "c" in kinds:  # a hypot
        return False
    return name in _MOVES or name in _ROUNDED


def _fold(op: Op, producers):
    # an exported module's reference rule runs XLA (its IR is gone): never at compile time
    if op.prim in _GENERATORS or op.regions or not op.operands or op.prim.family == "exported":
        return None
    # (a symbolic result's size is known only when the exported function runs)
    if any(r.type.symbolic or r.type.size > FOLD_LIMIT for r in op.results):
        return None
    if not exact(op):
        return None
    values = [_constant_of(v, producers) for v in op.operands]
    if any(v is None for v in values):
        return None
    outs = run_op(op, values)
    return [Op(so.constant, (), Attrs({"value": Literal(o)}), (r,), op.loc)
            for o, r in zip(outs, op.results, strict=True)]


# ---- simplification rules: rule(op, producers) -> replacement values, or None ----------

def _no_op_if_same_type(op: Op, producers):
    """reshape, broadcast, convert, slice to the operand's own type."""
    return (op.operands[0],) if op.operands[0].type == op.results[0].type else None


def _identity_transpose(op: Op, producers):
    perm = tuple(op.attrs["permutation"])
    return (op.operands[0],) if perm == tuple(range(len(perm))) else None


def _reverse_no_axes(op: Op, producers):
    return (op.operands[0],) if not op.attrs["axes"] else None


def _double_neg(op: Op, producers):
    inner = producers.get(op.operands[0])
    return (inner.operands[0],) if inner is not None and inner.prim is ew.neg else None


def _constants(op: Op, producers):
    return [_constant_of(v, producers) for v in op.operands]


# For floats only -0.0 is the additive identity (-0.0 + 0.0 is +0.0), and x - (+0.0).
def _add_zero(op: Op, producers):
    (x, y), (lhs, rhs), d = op.operands, _constants(op, producers), op.operands[0].type.dtype
    if d.kind == "b":  # boolean add is `or`: left alone
        return None
    if _is_zero(lhs, d, True):
        return (y,)
    return (x,) if _is_zero(rhs, d, True) else None


def _subtract_zero(op: Op, producers):
    rhs = _constant_of(op.operands[1], producers)
    return (op.operands[0],) if _is_zero(rhs, op.operands[0].type.dtype, False) else None


# Not for complex numbers: (a + bi) * (1 + 0i) has the part a * 0 + b, NaN where a is
# infinite (NumPy's and the device's inf+nanj for (inf+1j) * 1); a quotient likewise.
def _multiply_one(op: Op, producers):
    if op.operands[0].type.dtype.is_complex:
        return None
    (x, y), (lhs, rhs) = op.operands, _constants(op, producers)
    if _is_all(lhs, 1):
        return (y,)
    return (x,) if _is_all(rhs, 1) else None


def _divide_one(op: Op, producers):
    if op.operands[0].type.dtype.is_complex:
        return None
    return (op.operands[0],) if _is_all(_constant_of(op.operands[1], producers), 1) else None


SIMPLIFY = {
    so.reshape: _no_op_if_same_type,
    so.broadcast_in_dim: _no_op_if_same_type,
    ew.convert: _no_op_if_same_type,
    so.slice_: _no_op_if_same_type,
    so.transpose: _identity_transpose,
    so.reverse: _reverse_no_axes,
    ew.neg: _double_neg,
    ew.add: _add_zero,
    ew.subtract: _subtract_zero,
    ew.multiply: _multiply_one,
    ew.divide: _divide_one,
}
