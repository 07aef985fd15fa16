"""Common-subexpression elimination: an op equal to an earlier one (same primitive,
operands, attributes and regions) reuses the earlier results."""

from __future__ import annotations

from ..ir import Function, Op
from .rewrite import rewrite


def cse(fn: Function) -> Function:
    seen: dict[tuple, tuple] = {}

    def rule(op: Op):
        if op.prim.effectful:
            return None
        key = (op.prim, op.operands, op.attrs, tuple(f.key() for f in op.regions))
        if key in seen:
            return seen[key]
        seen[key] = op.results
        return None

    return rewrite(fn, rule)
