"""Operands held behind an optimization barrier where XLA would compute other bits.

A program must give the bits its ops give on buffers, whatever the operands are made
of. Three kinds of rewrite on the compiling host break that, and a barrier, which no
folder or simplifier looks through, stops each:

- Folding. StableHLO's folders (run when the text is parsed) and XLA's constant folding
  evaluate an op of constants with their own arithmetic: `exp`, a float sum or product,
  a matrix product (on a GPU the one on buffers runs in TF32), a decomposition (an eigh
  of a constant covariance came back with other signs than cuSOLVER's on the GPU, so a
  sampler drew other numbers under jit than eagerly). The operands of such an op, when
  all of them are computed from constants alone, are held. What fold.py folds (data
  movement, correctly rounded arithmetic) stays foldable: every device gives those bits.
- Division. XLA's algebraic simplifier turns x / c and x / broadcast(y) into
  x * (1 / c), x / sqrt(y) into x * rsqrt(y), (x / y) / z into x / (y * z) and the like:
  not IEEE's quotient, and not what the ops give one by one (x / 3.0 differed from
  NumPy's in 358 of 1000 float32 elements, eagerly and under jit, as in jax; a softmax's
  division by its broadcast sum too; x / sqrt(v) under jit from eager in 393; and
  (0 / -1e-300) / -1e-300 was NaN). The divisor is held unless it is a parameter, and
  a dividend that is a quotient.
- Arithmetic with a constant. The simplifier folds (x + c1) + c2 into x + (c1 + c2) and
  (x * c1) * c2 into x * (c1 * c2), one rounding where the ops round twice (572 of 1000
  float32 sums differed under jit), and drops x + 0.0 (-0.0 + 0.0 is +0.0). The
  constant operand of a float add, subtract or multiply is held. So is an integer
  power's constant operand: pow(x, -1) became 1 / x, and XLA's integer division by 0
  gives -1 where its power gives 0 (0 ** -1 was -1 under jit, 0 eagerly). And a float
  product's operand converted from a bool: convert(b) * x became select(b, x, 0), so
  False * -1.0 was +0.0 under jit, -0.0 (IEEE's and NumPy's) eagerly.

compilation.program_text runs this on every program, so each path to XLA (jit, an eager
op, a lazy graph, an export) has it. Not reached: XLA removes the barriers late, after
which LLVM may still fold the arithmetic of a fused kernel's constants (a subnormal
float32 product of two constants survives where the host's XLA flushes it to zero on
buffers), and a fused kernel may contract x * y + z into one multiply-add.
"""

from __future__ import annotations

from ..ir import EMPTY_ATTRS, Function, Op, Value
from ..primitives import custom_ad
from ..primitives import elementwise as ew
from .fold import exact

# ops whose one region takes the operands as its params (the emitter inlines it): what
# is computed from constants flows in, and out through the results
_CALLS = frozenset({custom_ad.custom_jvp_call, custom_ad.custom_vjp_call, custom_ad.checkpoint})
# float arithmetic whose constant operand XLA's simplifier would fold with another
# ((x + c1) + c2 becomes x + (c1 + c2)) or drop (x + 0.0 becomes x, -0.0 for -0.0)
_ARITHMETIC = frozenset({ew.add, ew.subtract, ew.multiply})


def hold_operands(fn: Function) -> Function:
    return _hold_in(fn, frozenset())[0]


def _hold(op: Op, which, ops: list[Op]) -> Op:
    """op with its operands at `which` passed through one barrier (appended to ops)."""
    which = tuple(which)
    held = tuple(Value(op.operands[i].type) for i in which)
    ops.append(Op(custom_ad.optimization_barrier, tuple(op.operands[i] for i in which),
                  EMPTY_ATTRS, held, op.loc))
    operands = list(op.operands)
    for i, v in zip(which, held, strict=True):
        operands[i] = v
    return Op(op.prim, tuple(operands), op.attrs, op.results, op.loc, op.regions)


def _rewritable(op: Op, params: set, quotients: set) -> tuple[int, ...]:
    """The operands of a float division that XLA's simplifier may rewrite it through:
    the divisor unless it is a parameter (x / c, x / broadcast(y), x / sqrt(y),
    x / exp(y), x / pow(y, p), x / (y / z) all become products), and a dividend that is
    itself a quotient ((x / y) / z becomes x / (y * z))."""
    x, y = op.operands
    return (*((0,) if x in quotients else ()), *(() if y in params else (1,)))


def _constant_operands(op: Op, from_constants: set) -> tuple[int, ...]:
    """Where op has an operand computed from constants beside one that is not."""
    which = tuple(i for i, v in enumerate(op.operands) if v in from_constants)
    return which if len(which) < len(op.operands) else ()


def _bool_operands(op: Op, from_bools: set) -> set[int]:
    """The operands of a float product converted from bools: XLA rewrites
    convert(b) * x into select(b, x, 0), +0.0 where IEEE gives False * -1.0 = -0.0."""
    if op.prim is not ew.multiply:
        return set()
    return {i for i, v in enumerate(op.operands) if v in from_bools}


def _hold_in(fn: Function, constant_params) -> tuple[Function, list[bool]]:
    """fn with its operands held; which of its results are computed from constants."""
    from_constants: set[Value] = set(constant_params)  # computed from constants alone
    params, quotients, from_bools = set(fn.params), set(), set()
    ops: list[Op] = []
    changed = False
    for op in fn.ops:
        if op.regions:
            if op.prim in _CALLS:
                (region,) = op.regions
                inner = {p for p, v in zip(region.params, op.operands, strict=True)
                         if v in from_constants}
                new, constant_results = _hold_in(region, inner)
                from_constants.update(r for r, c in zip(op.results, constant_results,
                                                        strict=True) if c)
                regions = (new,)
            else:  # (a loop's carry, a branch's operands: computed on the device)
                regions = tuple(_hold_in(r, frozenset())[0] for r in op.regions)
            if any(new is not old for new, old in zip(regions, op.regions, strict=True)):
                op = Op(op.prim, op.operands, op.attrs, op.results, op.loc, regions)
                changed = True
        elif op.prim.effectful or op.prim is custom_ad.optimization_barrier:
            pass
        elif op.prim is ew.divide and op.results[0].type.dtype.kind in "fc" and (
                which := _rewritable(op, params, quotients)):
            op = _hold(op, which, ops)
            changed = True
        elif op.prim in _ARITHMETIC and op.results[0].type.dtype.kind in "fc" and (
                which := sorted(set(_constant_operands(op, from_constants))
                                | _bool_operands(op, from_bools))):
            op = _hold(op, which, ops)
            changed = True
        elif op.prim is ew.power and op.results[0].type.dtype.kind in "iu" and (
                which := _constant_operands(op, from_constants)):
            op = _hold(op, which, ops)
            changed = True
        elif all(v in from_constants for v in op.operands):
            if not op.operands or exact(op):
                from_constants.update(op.results)
            else:
                op = _hold(op, range(len(op.operands)), ops)
                changed = True
        if op.prim is ew.divide:
            quotients.add(op.results[0])
        elif op.prim is ew.convert and op.operands[0].type.dtype.kind == "b":
            from_bools.add(op.results[0])
        ops.append(op)
    constant_results = [r in from_constants for r in fn.results]
    if not changed:
        return fn, constant_results
    return Function(fn.name, fn.params, ops, fn.results), constant_results
