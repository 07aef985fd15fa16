"""Dead-code elimination: drop ops none of whose results reach the function's results."""

from __future__ import annotations

from ..ir import Function


def dce(fn: Function) -> Function:
    live = set(fn.results)
    kept = []
    for op in reversed(fn.ops):
        if any(r in live for r in op.results) or op.prim.effectful:
            kept.append(op)
            live.update(op.operands)
    if len(kept) == len(fn.ops):
        return fn
    kept.reverse()
    return Function(fn.name, fn.params, kept, fn.results)
