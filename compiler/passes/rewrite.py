"""The one driver for rewrite passes: visit ops in order, let a rule replace each.

A rule gets the op with its operands already substituted and returns either None
(keep the op), a tuple of existing Values (the op's results are replaced by them), or
a list of new Ops whose last op's results replace the op's; new Ops that define the
op's own result Values (folding makes one constant per result) replace nothing.
"""

from __future__ import annotations

from collections.abc import Callable

from ..ir import Function, Op, Value


def rewrite(fn: Function, rule: Callable[[Op], object]) -> Function:
    subst: dict[Value, Value] = {}
    ops: list[Op] = []
    changed = False
    for op in fn.ops:
        if any(v in subst for v in op.operands):
            op = Op(op.prim, tuple(subst.get(v, v) for v in op.operands), op.attrs,
                    op.results, op.loc, op.regions)
            changed = True
        out = rule(op)
        if out is None:
            ops.append(op)
            continue
        changed = True
        if isinstance(out, tuple):  # replaced by existing values
            subst.update(zip(op.results, out, strict=True))
        else:  # replaced by new ops
            ops.extend(out)
            defined = {r for new in out for r in new.results}
            if not all(r in defined for r in op.results):  # (else the new ops define the
                subst.update(zip(op.results, out[-1].results, strict=True))  # op's values)
    if not changed:
        return fn
    return Function(fn.name, fn.params, ops, tuple(subst.get(r, r) for r in fn.results))
