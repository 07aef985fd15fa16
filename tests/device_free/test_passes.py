"""Compiler passes, each shown on IR before and after: verify, dce, cse, fold
(constant folding and algebraic simplification) and the default pipeline."""

import numpy as np
import pytest
from stablejit.compiler import dtypes as dt
from stablejit.compiler.builder import Builder
from stablejit.compiler.interpreter import interpret, run_op
from stablejit.compiler.ir import Attrs, Literal, Op, TensorType
from stablejit.compiler.passes import cse, dce, fold, hold_operands, optimize, verify
from stablejit.compiler.passes.fold import FOLD_LIMIT
from stablejit.compiler.passes.rewrite import rewrite
from stablejit.compiler.registry import ALL

F32 = dt.float32


def T(shape, dtype=F32):
    return TensorType(shape, dt.dtype(dtype))


def prims(fn):
    return [op.prim.name for op in fn.ops]


def count(fn, name):
    return prims(fn).count(name)


class B:
    """A little builder DSL for these tests."""

    def __init__(self, *param_types):
        self.b = Builder("f")
        self.params = [self.b.param(t) for t in param_types]

    def __call__(self, name, *xs, **attrs):
        (r,) = self.b.bind(ALL[name], list(xs), attrs)
        return r

    def const(self, value, dtype=F32, shape=()):
        c = self("constant", value=Literal(np.asarray(value, dtype.np)))
        return self("broadcast_in_dim", c, shape=shape, broadcast_dimensions=()) if shape else c

    def build(self, *results):
        return self.b.build(list(results))


def run_and_compare(before, after, *args):
    """The pass must not change what the function computes."""
    verify(after)
    for x, y in zip(interpret(before, args), interpret(after, args), strict=True):
        np.testing.assert_array_equal(x, y, err_msg=f"before:\n{before}\nafter:\n{after}")


# ---- dce ---------------------------------------------------------------------------------

def test_dce_removes_ops_that_do_not_reach_results():
    g = B(T((3,)))
    (x,) = g.params
    g("exp", x)  # dead
    dead2 = g("sin", x)
    g("neg", dead2)  # dead chain
    live = g("cos", x)
    before = g.build(live)
    after = dce(before)
    assert prims(before) == ["exp", "sin", "neg", "cos"], str(before)
    assert prims(after) == ["cos"], f"before:\n{before}\nafter:\n{after}"
    run_and_compare(before, after, np.arange(3, dtype=np.float32))


def test_dce_returns_the_same_function_when_nothing_is_dead():
    g = B(T((3,)))
    fn = g.build(g("exp", g.params[0]))
    assert dce(fn) is fn


# ---- cse ---------------------------------------------------------------------------------

def test_cse_merges_identical_ops_and_keeps_different_ones():
    g = B(T((3,)), T((3,)))
    x, y = g.params
    a1 = g("add", x, y)
    a2 = g("add", x, y)  # same as a1
    a3 = g("add", y, x)  # different operand order: kept
    s1 = g("reduce_sum", a1, axes=(0,))
    s2 = g("reduce_sum", a2, axes=(0,))  # becomes identical to s1 after a2 -> a1
    before = g.build(g("add", s1, s2), a3)
    after = dce(cse(before))
    msg = f"before:\n{before}\nafter:\n{after}"
    assert count(before, "add") == 4 and count(before, "reduce_sum") == 2, msg
    assert count(after, "add") == 3 and count(after, "reduce_sum") == 1, msg
    run_and_compare(before, after, np.arange(3, dtype=np.float32),
                    np.ones(3, np.float32))


def test_cse_distinguishes_attributes():
    g = B(T((2, 3)))
    (x,) = g.params
    before = g.build(g("reduce_sum", x, axes=(0,)), g("reduce_sum", x, axes=(1,)))
    after = cse(before)
    assert count(after, "reduce_sum") == 2, str(after)


def test_cse_merges_equal_constants():
    g = B()
    c1 = g.const(2.5)
    c2 = g.const(2.5)
    c3 = g.const(3.5)
    before = g.build(g("add", c1, c2), c3)
    after = dce(cse(before))
    assert count(before, "constant") == 3 and count(after, "constant") == 2, str(after)


# ---- fold: constant folding ----------------------------------------------------------------

def test_fold_evaluates_ops_on_constants():
    g = B(T((3,)))
    (x,) = g.params
    c = g("add", g.const(2.0), g.const(3.0))
    c = g("divide", c, g.const(4.0))
    before = g.build(g("add", x, g("broadcast_in_dim", c, shape=(3,), broadcast_dimensions=())))
    after = dce(fold(before))
    msg = f"before:\n{before}\nafter:\n{after}"
    assert count(before, "divide") == 1 and count(after, "divide") == 0, msg
    assert prims(after) == ["constant", "broadcast_in_dim", "add"], msg
    folded = next(op for op in after.ops if op.prim.name == "constant")
    assert folded.attrs["value"].array == np.float32(1.25), msg
    run_and_compare(before, after, np.arange(3, dtype=np.float32))


def test_fold_sees_through_splat_broadcasts():
    g = B()
    a = g.const(2, dt.int32, shape=(4,))
    before = g.build(g("shift_left", a, g.const(3, dt.int32, shape=(4,))))
    after = dce(fold(before))
    assert count(after, "shift_left") == 0, f"before:\n{before}\nafter:\n{after}"
    np.testing.assert_array_equal(interpret(after, [])[0], np.full(4, 16, np.int32))


def test_the_rewrite_driver_takes_new_ops_that_define_an_ops_results():
    """A rule may replace a multi-result op by one new op per result, each defining the
    op's own Value (the driver took only the last new op's results and raised on eigh
    or svd of a constant when fold evaluated them)."""
    g = B(T((2,)))
    (x,) = g.params
    matrix = np.array([[2.0, 1.0], [1.0, 3.0]], np.float32)
    w, v = g.b.bind(ALL["eigh"], [g.const(matrix, shape=())], {"lower": True})
    before = g.build(g("add", x, w), v)

    def evaluate(op):
        if op.prim.name != "eigh":
            return None
        outs = run_op(op, [matrix])
        return [Op(ALL["constant"], (), Attrs({"value": Literal(o)}), (r,), op.loc)
                for o, r in zip(outs, op.results, strict=True)]

    after = dce(rewrite(before, evaluate))
    assert count(after, "eigh") == 0, f"before:\n{before}\nafter:\n{after}"
    run_and_compare(before, after, np.ones(2, np.float32))


def _unary(name, value, dtype=F32):
    def build(g):
        return g(name, g.const(value, dtype, shape=(3,)))
    return build


def _binary(name, a, b, dtype=F32):
    def build(g):
        return g(name, g.const(a, dtype, shape=(3,)), g.const(b, dtype, shape=(3,)))
    return build


def _reduce(name, dtype):
    def build(g):
        return g(name, g.const(3, dtype, shape=(4,)), axes=(0,))
    return build


def _dot(dtype):
    def build(g):
        a = g.const(3, dtype, shape=(2, 2))
        return g("dot_general", a, a, contracting=((1,), (0,)), batch=((), ()))
    return build


def _convert(value, src, dst):
    def build(g):
        return g("convert", g.const(value, src, shape=(3,)), dtype=dst)
    return build


# (an op of constants, whether fold evaluates it): only what every device computes to
# the same bits as NumPy's reference (moves, comparisons, correctly rounded arithmetic
# on real floats, integers); jit of constants must give the eager bits
FOLDS = {
    "add f32": (_binary("add", 1.5, 2.25), True),
    "divide f32": (_binary("divide", 1.0, 3.0), True),
    "multiply i32": (_binary("multiply", 7, 9, dt.int32), True),
    "maximum f32": (_binary("maximum", 1.0, 2.0), True),
    "compare": (_binary("lt", 1.0, 2.0), True),
    "sum i32": (_reduce("reduce_sum", dt.int32), True),
    "max f32": (_reduce("reduce_max", F32), True),
    "dot i32": (_dot(dt.int32), True),
    "convert i32 -> f32": (_convert(3, dt.int32, F32), True),
    "exp": (_unary("exp", 0.3), False),
    "tanh": (_unary("tanh", 0.3), False),
    "sqrt": (_unary("sqrt", 2.0), False),
    "sum f32": (_reduce("reduce_sum", F32), False),
    "prod f32": (_reduce("reduce_prod", F32), False),
    "dot f32": (_dot(F32), False),
    "multiply f32": (_binary("multiply", 1.5, 3.0), False),
    "multiply c64": (_binary("multiply", 1 + 2j, 3 - 1j, dt.complex64), False),
    "abs c64": (_unary("abs", 3 + 4j, dt.complex64), False),
    "convert f32 -> i32": (_convert(3.5, F32, dt.int32), False),
}


@pytest.mark.parametrize("case", list(FOLDS))
def test_fold_evaluates_only_what_every_device_computes_alike(case):
    build, folds = FOLDS[case]
    g = B()
    before = g.build(build(g))
    after = dce(fold(before))
    computed = [p for p in prims(after) if p not in ("constant", "broadcast_in_dim")]
    assert (computed == []) is folds, f"before:\n{before}\nafter:\n{after}"
    run_and_compare(before, after)


@pytest.mark.parametrize("case", list(FOLDS))
def test_hold_holds_the_constants_of_what_fold_leaves(case):
    """The operands of an op of constants that fold leaves pass a barrier, so StableHLO's
    and XLA's folders do not evaluate it on the compiling host either; ops on parameters
    pass none."""
    build, folds = FOLDS[case]
    g = B()
    before = dce(fold(g.build(build(g))))
    after = hold_operands(before)
    assert count(after, "optimization_barrier") == (0 if folds else 1), str(after)
    barrier = next((op for op in after.ops if op.prim.name == "optimization_barrier"), None)
    if barrier is not None:  # right in front of the op it holds
        op = after.ops[after.ops.index(barrier) + 1]
        assert barrier.results[-1] in op.operands, str(after)
    run_and_compare(before, after)
    g = B(T((3,)))
    on_a_parameter = g.build(g("exp", g("add", g.params[0], g.params[0])))
    assert hold_operands(on_a_parameter) is on_a_parameter


def test_hold_holds_constants_inside_a_region():
    inner = B(T(()))
    body = inner.build(inner("add", inner.params[0], inner("exp", inner.const(0.5))))
    pinned = hold_operands(body)
    assert count(pinned, "optimization_barrier") == 1, str(pinned)
    g = B(T(()))
    (out,) = g.b.bind(ALL["checkpoint"], [g.params[0]], {"prevent_cse": True},
                      regions=[body])
    outer = g.build(out)
    after = hold_operands(outer)
    (op,) = [op for op in after.ops if op.regions]
    assert count(op.regions[0], "optimization_barrier") == 1, str(after)
    run_and_compare(outer, after, np.float32(2.0))


def test_fold_leaves_large_results_to_xla():
    g = B()
    n = FOLD_LIMIT + 1
    before = g.build(g("exp", g.const(1.0, shape=(n,))))
    after = fold(before)
    assert count(after, "exp") == 1, str(after)


def test_fold_keeps_ops_on_parameters():
    g = B(T((3,)))
    before = g.build(g("exp", g.params[0]))
    assert fold(before) is before


# ---- fold: algebraic simplification ------------------------------------------------------

@pytest.mark.parametrize("expr,kept", [
    (lambda g, x: g("add", x, g.const(-0.0, shape=(3,))), []),
    (lambda g, x: g("add", g.const(-0.0, shape=(3,)), x), []),
    (lambda g, x: g("subtract", x, g.const(0.0, shape=(3,))), []),
    (lambda g, x: g("multiply", x, g.const(1.0, shape=(3,))), []),
    (lambda g, x: g("multiply", g.const(1.0, shape=(3,)), x), []),
    (lambda g, x: g("divide", x, g.const(1.0, shape=(3,))), []),
    (lambda g, x: g("neg", g("neg", x)), []),
    (lambda g, x: g("reshape", x, shape=(3,)), []),
    (lambda g, x: g("transpose", x, permutation=(0,)), []),
    (lambda g, x: g("convert", x, dtype=F32), []),
    (lambda g, x: g("slice", x, start=(0,), limit=(3,), strides=(1,)), []),
    (lambda g, x: g("reverse", x, axes=()), []),
    # not identities for every input: must stay
    (lambda g, x: g("multiply", x, g.const(0.0, shape=(3,))), ["multiply"]),  # NaN * 0
    (lambda g, x: g("subtract", g.const(0.0, shape=(3,)), x), ["subtract"]),  # 0 - x
    (lambda g, x: g("add", x, g.const(0.0, shape=(3,))), ["add"]),  # -0.0 + 0.0 is +0.0
    (lambda g, x: g("subtract", x, g.const(-0.0, shape=(3,))), ["subtract"]),
])
def test_algebraic_simplification(expr, kept):
    g = B(T((3,)))
    (x,) = g.params
    before = g.build(expr(g, x))
    after = dce(fold(before))
    msg = f"before:\n{before}\nafter:\n{after}"
    assert [p for p in prims(after) if p not in ("constant", "broadcast_in_dim")] == kept, msg
    if not kept:
        assert after.results[0] is x, msg
    a = np.array([np.nan, -0.0, 2.5], np.float32)
    run_and_compare(before, after, a)
    (got,), (want,) = interpret(after, [a]), interpret(before, [a])
    assert np.array_equal(np.signbit(got), np.signbit(want)), msg


def test_add_of_negative_zero_keeps_the_sign_of_zero():
    """x + (-0.0) is x for every x (including -0.0); x + 0.0 turns -0.0 into +0.0."""
    g = B(T((1,)))
    (x,) = g.params
    before = g.build(g("add", x, g.const(0.0, shape=(1,))))
    after = dce(fold(before))
    a = np.array([-0.0], np.float32)
    (want,) = interpret(before, [a])
    (got,) = interpret(after, [a])
    assert np.signbit(got) == np.signbit(want), f"before:\n{before}\nafter:\n{after}"


def test_bool_add_zero_is_not_simplified_wrongly():
    g = B(T((2,), "bool"))
    (x,) = g.params
    before = g.build(g("add", x, g.const(False, dt.bool_, shape=(2,))))
    after = dce(fold(before))
    run_and_compare(before, after, np.array([True, False]))


# ---- the pipeline ------------------------------------------------------------------------

def test_optimize_runs_fold_cse_dce_and_verifies():
    g = B(T((4,)))
    (x,) = g.params
    two = g("add", g.const(1.0), g.const(1.0))
    y1 = g("multiply", x, g("broadcast_in_dim", two, shape=(4,), broadcast_dimensions=()))
    y2 = g("multiply", x, g("broadcast_in_dim", two, shape=(4,), broadcast_dimensions=()))
    g("exp", x)  # dead
    before = g.build(g("add", g("neg", g("neg", y1)), y2))
    after = optimize(before, check=True)
    msg = f"before:\n{before}\nafter:\n{after}"
    assert count(after, "multiply") == 1 and count(after, "neg") == 0, msg
    assert count(after, "exp") == 0 and len(after.ops) < len(before.ops), msg
    run_and_compare(before, after, np.arange(4, dtype=np.float32))


# (divisor, dtype, whether hold_operands holds it): XLA's simplifier rewrites x / c and
# x / broadcast(y) as x * (1 / c), which is not IEEE's quotient
DIVISORS = {
    "a constant": ("constant", F32, True),
    "a broadcast parameter": ("broadcast", F32, True),
    "a broadcast in float64": ("broadcast", dt.float64, True),
    "a full-shape parameter": ("parameter", F32, False),
    "an integer constant": ("constant", dt.int32, False),
}


@pytest.mark.parametrize("case", list(DIVISORS))
def test_hold_holds_a_divisor_the_simplifier_would_invert(case):
    kind, dtype, held = DIVISORS[case]
    g = B(T((3,), dtype), T((), dtype), T((3,), dtype))
    x, scalar, full = g.params
    divisor = {"constant": lambda: g.const(3, dtype, shape=(3,)),
               "broadcast": lambda: g("broadcast_in_dim", scalar, shape=(3,),
                                      broadcast_dimensions=()),
               "parameter": lambda: full}[kind]()
    before = g.build(g("divide", x, divisor))
    after = hold_operands(before)
    assert count(after, "optimization_barrier") == held, str(after)
    if held:
        barrier = next(op for op in after.ops if op.prim.name == "optimization_barrier")
        division = after.ops[-1]
        assert division.operands == (x, barrier.results[0]), str(after)
    args = [np.array([1, 2, 3], dtype.np), np.asarray(3, dtype.np),
            np.array([3, 3, 3], dtype.np)]
    run_and_compare(before, after, *args)


# (op, operand kinds, which operands hold_operands holds): a constant operand of float
# arithmetic, which XLA's simplifier would fold with another constant or drop
ARITHMETIC = {
    "add param + const": ("add", ("param", "const"), F32, (1,)),
    "add const + param": ("add", ("const", "param"), F32, (0,)),
    "subtract param - const": ("subtract", ("param", "const"), F32, (1,)),
    "multiply param * const": ("multiply", ("param", "const"), F32, (1,)),
    "multiply in float64": ("multiply", ("param", "const"), dt.float64, (1,)),
    "add param + param": ("add", ("param", "param"), F32, ()),
    "add int32 param + const": ("add", ("param", "const"), dt.int32, ()),
    "maximum param, const": ("maximum", ("param", "const"), F32, ()),
}


@pytest.mark.parametrize("case", list(ARITHMETIC))
def test_hold_holds_the_constant_of_float_arithmetic(case):
    name, kinds, dtype, held = ARITHMETIC[case]
    g = B(T((3,), dtype), T((3,), dtype))
    params = iter(g.params)
    operands = [next(params) if k == "param" else g.const(2, dtype, shape=(3,))
                for k in kinds]
    before = g.build(g(name, *operands))
    after = hold_operands(before)
    barriers = [op for op in after.ops if op.prim.name == "optimization_barrier"]
    assert len(barriers) == (1 if held else 0), str(after)
    if held:
        op = after.ops[-1]
        assert [op.operands[i] for i in held] == list(barriers[0].results), str(after)
        assert all(op.operands[i] is operands[i] for i in range(2) if i not in held)
    args = [np.array([1, 2, 3], dtype.np), np.array([4, 5, 6], dtype.np)]
    run_and_compare(before, after, *args)


@pytest.mark.parametrize("expr", [
    lambda g, x: g("multiply", x, g.const(1 + 0j, dtype=dt.complex64, shape=(4,))),
    lambda g, x: g("multiply", g.const(1 + 0j, dtype=dt.complex64, shape=(4,)), x),
    lambda g, x: g("divide", x, g.const(1 + 0j, dtype=dt.complex64, shape=(4,))),
], ids=["x*1", "1*x", "x/1"])
def test_complex_times_one_is_not_simplified(expr):
    """(a + bi) * (1 + 0i) has the part a * 0 + b: NaN where a is infinite, so x * 1 is not
    x for complex x ((inf+1j) * 1 is inf+nanj in NumPy and on the device; under jit it
    was inf+1j)."""
    g = B(T((4,), "complex64"))
    (x,) = g.params
    before = g.build(expr(g, x))
    after = dce(fold(before))
    assert after.results[0] is not x, f"before:\n{before}\nafter:\n{after}"
