"""Constant folding and algebraic simplification.

Folding: an op whose operands are all constants is evaluated with its reference rule
and becomes a constant, if the result is small (large constants bloat the program;
XLA folds those itself).
Simplification: identities that are exact for every input — x+(-0.0), x-(+0.0), x*1, x/1,
neg(neg(x)), no-op reshape/transpose/convert/broadcast/slice/reverse. x*0 is not
rewritten for floats (NaN*0 is NaN).
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
        if inner is not None and inner.size == 1:
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
        result = _simplify(op, producers) or _fold(op, producers)
        if isinstance(result, list):
            for new in result:
                for r in new.results:
                    producers[r] = new
        elif result is None:
            for r in op.results:
                producers[r] = op
        return result

    return rewrite(fn, rule)


def _fold(op: Op, producers):
    if op.prim in _GENERATORS or op.regions or not op.operands:
        return None
    if any(r.type.size > FOLD_LIMIT for r in op.results):
        return None
    values = [_constant_of(v, producers) for v in op.operands]
    if any(v is None for v in values):
        return None
    outs = run_op(op, values)
    return [Op(so.constant, (), Attrs({"value": Literal(o)}), (r,), op.loc)
            for o, r in zip(outs, op.results)]


def _simplify(op: Op, producers):
    p, xs = op.prim, op.operands
    same = len(op.results) == 1 and xs and xs[0].type == op.results[0].type
    if p in (so.reshape, so.transpose, ew.convert, so.broadcast_in_dim, so.slice_) and same:
        if p is not so.transpose or tuple(op.attrs["permutation"]) == tuple(range(len(
                op.attrs["permutation"]))):
            return (xs[0],)
    if p is so.reverse and not op.attrs["axes"]:
        return (xs[0],)
    if p is ew.neg:
        inner = producers.get(xs[0])
        if inner is not None and inner.prim is ew.neg:
            return (inner.operands[0],)
    if p in (ew.add, ew.subtract, ew.multiply, ew.divide):
        lhs, rhs = (_constant_of(v, producers) for v in xs)
        d = xs[0].type.dtype
        # for floats only -0.0 is additive identity (-0.0 + 0.0 is +0.0), and x - 0.0
        if p is ew.add and _is_zero(lhs, d, True) and d.kind != "b":
            return (xs[1],)
        if p is ew.add and _is_zero(rhs, d, True) and d.kind != "b":
            return (xs[0],)
        if p is ew.subtract and _is_zero(rhs, d, False):
            return (xs[0],)
        if p is ew.multiply and _is_all(lhs, 1):
            return (xs[1],)
        if p in (ew.multiply, ew.divide) and _is_all(rhs, 1):
            return (xs[0],)
    return None
