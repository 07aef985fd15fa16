"""Constants held behind an optimization barrier where a folder would round them.

jit of a function of constants must give the bits the same function gives eagerly,
where every op runs on the device with its operands in buffers. StableHLO's folders (run
when the text is parsed) and XLA's constant folding evaluate an op of constants on the
compiling host with their own arithmetic: `exp`, a float sum or product, a matrix
product (on a GPU the eager one runs in TF32), a decomposition. So the operands of such
an op, when all of them are computed from constants alone, pass through one
`optimization_barrier`, which no folder looks through, and the op runs on the device.
What fold.py folds itself (data movement and correctly rounded arithmetic) stays
foldable: each device gives those bits.

Not reached: XLA removes the barriers late, after which LLVM may still fold the
arithmetic of a fused kernel's constants; it keeps a subnormal float32 product of two
constants that the host's XLA flushes to zero when its operands are in buffers.
"""

from __future__ import annotations

from ..ir import EMPTY_ATTRS, Function, Op, Value
from ..primitives import custom_ad
from .fold import exact


# ops whose one region takes the operands as its params (the emitter inlines it): what
# is computed from constants flows in, and out through the results
_CALLS = frozenset({"custom_jvp_call", "custom_vjp_call", "checkpoint"})


def pin_constants(fn: Function) -> Function:
    return _pin(fn, frozenset())[0]


def _pin(fn: Function, constant_params) -> tuple[Function, list[bool]]:
    """fn with its ops of constants held; which of its results come from constants."""
    from_constants: set[Value] = set(constant_params)  # computed from constants alone
    ops: list[Op] = []
    changed = False
    for op in fn.ops:
        if op.regions:
            if op.prim.name in _CALLS:
                (region,) = op.regions
                inner = {p for p, v in zip(region.params, op.operands, strict=True)
                         if v in from_constants}
                new, constant_results = _pin(region, inner)
                from_constants.update(r for r, c in zip(op.results, constant_results,
                                                        strict=True) if c)
                regions = (new,)
            else:  # (a loop's carry, a branch's operands: run on the device)
                regions = tuple(_pin(r, frozenset())[0] for r in op.regions)
            if any(new is not old for new, old in zip(regions, op.regions, strict=True)):
                op = Op(op.prim, op.operands, op.attrs, op.results, op.loc, regions)
                changed = True
        elif op.prim.effectful or op.prim is custom_ad.optimization_barrier:
            pass
        elif all(v in from_constants for v in op.operands):
            if not op.operands or exact(op):
                from_constants.update(op.results)
            else:
                held = tuple(Value(v.type) for v in op.operands)
                ops.append(Op(custom_ad.optimization_barrier, op.operands, EMPTY_ATTRS, held,
                              op.loc))
                op = Op(op.prim, held, op.attrs, op.results, op.loc, op.regions)
                changed = True
        ops.append(op)
    constant_results = [r in from_constants for r in fn.results]
    if not changed:
        return fn, constant_results
    return Function(fn.name, fn.params, ops, fn.results), constant_results
