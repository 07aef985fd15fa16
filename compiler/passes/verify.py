"""The verifier: SSA form and agreement with every primitive's shape rule."""

from __future__ import annotations

from ..errors import ShapeError, VerifyError
from ..ir import Function, Value


def verify(fn: Function) -> Function:
    """Raise VerifyError if fn is malformed; return fn unchanged otherwise."""
    defined: set[Value] = set()
    for p in fn.params:
        if p in defined:
            raise VerifyError(f"{fn.name}: parameter defined twice")
        defined.add(p)
    for i, op in enumerate(fn.ops):
        where = f"{fn.name}: op {i} ({op.prim.name}) at {op.loc}"
        for j, v in enumerate(op.operands):
            if v not in defined:
                raise VerifyError(f"{where}: operand {j} is used before it is defined")
        for region in op.regions:
            verify(region)
        try:
            expected = op.prim.infer(tuple(v.type for v in op.operands), op.attrs, op.regions)
        except ShapeError as e:
            raise VerifyError(f"{where}: shape rule rejects the operands: {e}") from None
        if tuple(expected) != op.result_types:
            raise VerifyError(f"{where}: results are typed {op.result_types}, but the shape "
                              f"rule gives {tuple(expected)}")
        for r in op.results:
            if r in defined:
                raise VerifyError(f"{where}: result redefines an existing value")
            defined.add(r)
    for k, r in enumerate(fn.results):
        if r not in defined:
            raise VerifyError(f"{fn.name}: result {k} is not defined in the function")
    return fn
