"""A differential fuzzer: hypothesis writes small programs (chains of elementwise ops with
weak Python scalars, reductions, indexing), runs each under jit, eagerly on XLA and on
the reference backend, and compares every path with NumPy evaluating the same program.

Where IEEE 754 defines the answer (+, -, *, /, sqrt, comparisons, min/max, rounding,
negation, integer arithmetic that wraps) the comparison is bit for bit: signed zeros,
NaN where NumPy has NaN (any payload: IEEE leaves a new NaN's bits open), infinities,
float64 values float32 cannot hold. Transcendentals compare within a few ulps.

Deliberate differences from NumPy (docs/numerics.md, "Where stablejit differs from NumPy"):
  - under jit XLA's algebraic simplifier rewrites x + 0.0 to x and folds chains of
    constants ((x + 1.5) + 1.5 is x + 3.0), as in jax;
  - max/min of +0.0 and -0.0 may give either zero (IEEE leaves maxNum's sign open);
  - XLA on the CPU flushes subnormals to zero (inputs and results), so inputs are drawn
    without subnormals and a result NumPy gives as a subnormal may be a zero of the
    same sign;
  (integer division and remainder by zero give 0, and INT_MIN // -1 wraps, as in
  NumPy: divisors include 0 and -1.)

FUZZ_EXAMPLES sets the number of programs per family (CI runs a sample; `make fuzz` runs
10,000 per family).
"""

from __future__ import annotations

import itertools
import os
import warnings

import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from tests.support.runners import run_three_ways

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "25"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                suppress_health_check=list(HealthCheck))

FLOATS = [np.float32, np.float64]
INTS = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint32]

# name -> (numpy function, stablejit function, exact by IEEE)
UNARY = {
    "negative": (np.negative, snp.negative, True),
    "abs": (np.abs, snp.abs, True),
    "sqrt": (np.sqrt, snp.sqrt, True),
    "floor": (np.floor, snp.floor, True),
    "ceil": (np.ceil, snp.ceil, True),
    "trunc": (np.trunc, snp.trunc, True),
    "round": (np.round, snp.round, True),
    "square": (np.square, snp.square, True),
    "sign": (np.sign, snp.sign, True),
    "exp": (np.exp, snp.exp, False),
    "log": (np.log, snp.log, False),
    "log1p": (np.log1p, snp.log1p, False),
    "sin": (np.sin, snp.sin, False),
    "tanh": (np.tanh, snp.tanh, False),
}
BINARY = {
    "add": (np.add, snp.add, True),
    "subtract": (np.subtract, snp.subtract, True),
    "multiply": (np.multiply, snp.multiply, True),
    "divide": (np.divide, snp.divide, True),
    "maximum": (np.maximum, snp.maximum, True),
    "minimum": (np.minimum, snp.minimum, True),
    "copysign": (np.copysign, snp.copysign, True),
    "arctan2": (np.arctan2, snp.arctan2, False),
}
INT_UNARY = {
    "negative": (np.negative, snp.negative),
    "abs": (np.abs, snp.abs),
    "square": (np.square, snp.square),
    "bitwise_invert": (np.invert, snp.bitwise_invert),
}
INT_BINARY = {
    "add": (np.add, snp.add),
    "subtract": (np.subtract, snp.subtract),
    "multiply": (np.multiply, snp.multiply),
    "maximum": (np.maximum, snp.maximum),
    "minimum": (np.minimum, snp.minimum),
    "bitwise_and": (np.bitwise_and, snp.bitwise_and),
    "bitwise_xor": (np.bitwise_xor, snp.bitwise_xor),
    "floor_divide": (np.floor_divide, snp.floor_divide),
    "remainder": (np.remainder, snp.remainder),
}
COMPARE = {"less": (np.less, snp.less), "equal": (np.equal, snp.equal),
           "greater_equal": (np.greater_equal, snp.greater_equal),
           "not_equal": (np.not_equal, snp.not_equal)}


# ---- values -------------------------------------------------------------------------------

def special_floats(dtype):
    info = np.finfo(dtype)
    out = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, 2.0, float(info.max),
           -float(info.max), float(info.tiny), -float(info.tiny), float(info.eps)]
    if dtype == np.float64:  # values float32 cannot hold
        out += [16777217.0, 1e300, -1e-300, 0.1, 2.0 ** 60 + 1]
    return out


def float_arrays(dtype, shape):
    elements = st.one_of(
        st.sampled_from(special_floats(dtype)),
        st.floats(width=np.finfo(dtype).bits, allow_subnormal=False))
    return hnp.arrays(dtype, shape, elements=elements)


def int_arrays(dtype, shape):
    info = np.iinfo(dtype)
    near = [info.min, info.min + 1, info.max, info.max - 1, 0, 1, -1 if info.min < 0 else 2]
    el = st.one_of(st.sampled_from(near), st.integers(int(info.min), int(info.max)))
    return hnp.arrays(dtype, shape, elements=el)


shapes = hnp.array_shapes(min_dims=0, max_dims=2, min_side=1, max_side=5)


# ---- comparison ---------------------------------------------------------------------------

def _flushed(expected: np.ndarray) -> np.ndarray:
    """NumPy's result with subnormals made zeros of the same sign (what XLA's CPU does)."""
    e = np.array(expected, copy=True)
    if e.dtype.kind == "f":
        sub = (e != 0) & (np.abs(e) < np.finfo(e.dtype).tiny)
        e[sub] = np.copysign(0, e[sub])
    return e


def assert_same(got: np.ndarray, expected: np.ndarray, exact: bool, what: str,
                zero_sign_free: bool = False) -> None:
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.dtype == expected.dtype, f"{what}: dtype {got.dtype}, NumPy {expected.dtype}"
    assert got.shape == expected.shape, f"{what}: shape {got.shape}, NumPy {expected.shape}"
    if expected.dtype.kind != "f":
        np.testing.assert_array_equal(got, expected, err_msg=what)
        return
    options = [expected, _flushed(expected)]
    nan = np.isnan(expected)
    assert np.array_equal(np.isnan(got), nan), f"{what}: NaN differs\n{got}\n{expected}"
    if exact:
        ok = any(np.array_equal(got[~nan], e[~nan]) and (zero_sign_free or np.array_equal(
            np.signbit(got[~nan]), np.signbit(e[~nan]))) for e in options)
        assert ok, f"{what}: not bit for bit\nstablejit {got!r}\nnumpy     {expected!r}"
    else:
        finfo = np.finfo(expected.dtype)
        # a few ulps, and values NumPy gives as subnormals may be flushed
        np.testing.assert_allclose(got[~nan], expected[~nan], rtol=8 * finfo.eps,
                                   atol=2 * float(finfo.tiny), err_msg=what)


def check_program(fn, np_fn, args, exact: bool, what: str, adds_zero: bool = False,
                  jit_exact: bool = True, zero_sign_free: bool = False) -> None:
    """`adds_zero`: the program adds a constant zero; under jit XLA's simplifier rewrites
    x + 0.0 to x (as in jax), so the sign of a zero result is not checked there.
    `jit_exact=False`: XLA reassociates chains of constants under jit ((x + 1.5) + 1.5
    becomes x + 3.0, as in jax), so the jit path is compared within rounding.
    `zero_sign_free`: IEEE leaves the sign open (NumPy's max of +0 and -0 is either)."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = np_fn(*args)
        results = run_three_ways(fn, *args)
    for path, got in results.items():
        assert_same(got, expected, exact and (jit_exact or path != "jit"), f"{what} [{path}]",
                    zero_sign_free=zero_sign_free or (adds_zero and path == "jit"))


# ---- families -----------------------------------------------------------------------------

@st.composite
def float_programs(draw):
    """A chain of 1-4 float ops on one or two arrays, with weak Python scalars."""
    dtype = draw(st.sampled_from(FLOATS))
    shape = draw(shapes)
    x = draw(float_arrays(dtype, shape))
    y = draw(float_arrays(dtype, shape))
    steps = draw(st.lists(st.one_of(
        st.tuples(st.just("u"), st.sampled_from(sorted(UNARY))),
        st.tuples(st.just("b"), st.sampled_from(sorted(BINARY))),
        st.tuples(st.just("s"), st.sampled_from(sorted(BINARY)),
                  st.sampled_from([0.0, -0.0, 1.5, -2.0, 3, np.inf, 0.1, 16777217.0]))),
        min_size=1, max_size=4))
    return x, y, steps


def _apply_steps(steps, a, b, lib):
    exact = True
    for step in steps:
        if step[0] == "u":
            np_f, s_f, ex = UNARY[step[1]]
            a = (np_f if lib == "np" else s_f)(a)
        elif step[0] == "b":
            np_f, s_f, ex = BINARY[step[1]]
            a = (np_f if lib == "np" else s_f)(a, b)
        else:
            np_f, s_f, ex = BINARY[step[1]]
            a = (np_f if lib == "np" else s_f)(a, step[2])  # a weak Python scalar
        exact = exact and ex
    return a, exact


@FUZZ
@given(float_programs())
def test_fuzz_float_elementwise(program):
    x, y, steps = program
    with np.errstate(all="ignore"):
        _, exact = _apply_steps(steps, x, y, "np")
    adds_zero = any(s[0] == "s" and s[1] in ("add", "subtract") and s[2] == 0 for s in steps)
    constants_in_a_row = any(a[0] == b[0] == "s" for a, b in itertools.pairwise(steps))
    check_program(lambda a, b: _apply_steps(steps, a, b, "snp")[0],
                  lambda a, b: _apply_steps(steps, a, b, "np")[0], (x, y), exact,
                  f"{steps} on {x.dtype}{list(x.shape)}", adds_zero,
                  jit_exact=not constants_in_a_row)


@st.composite
def int_programs(draw):
    dtype = draw(st.sampled_from(INTS))
    shape = draw(shapes)
    x = draw(int_arrays(dtype, shape))
    y = draw(int_arrays(dtype, shape))
    ops = draw(st.lists(st.one_of(
        st.tuples(st.just("u"), st.sampled_from(sorted(INT_UNARY))),
        st.tuples(st.just("b"), st.sampled_from(sorted(INT_BINARY)))), min_size=1,
        max_size=3))
    return x, y, ops


def _int_steps(ops, a, b, lib):
    for kind, name in ops:
        if kind == "u":
            a = INT_UNARY[name][0 if lib == "np" else 1](a)
        else:
            a = INT_BINARY[name][0 if lib == "np" else 1](a, b)
    return a


@FUZZ
@given(int_programs())
def test_fuzz_integer_elementwise(program):
    x, y, ops = program
    check_program(lambda a, b: _int_steps(ops, a, b, "snp"),
                  lambda a, b: _int_steps(ops, a, b, "np"), (x, y), True,
                  f"{ops} on {x.dtype}{list(x.shape)}")


@FUZZ
@given(st.sampled_from(FLOATS + INTS).flatmap(lambda d: st.tuples(
    (float_arrays if np.dtype(d).kind == "f" else int_arrays)(d, shapes),
    st.sampled_from(sorted(COMPARE)))))
def test_fuzz_comparisons(case):
    x, name = case
    y = np.flip(x)
    np_f, s_f = COMPARE[name]
    check_program(s_f, np_f, (x, y), True, f"{name} on {x.dtype}")


@st.composite
def reductions(draw):
    dtype = draw(st.sampled_from(FLOATS + INTS))
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4))
    x = draw((float_arrays if np.dtype(dtype).kind == "f" else int_arrays)(dtype, shape))
    axis = draw(st.one_of(st.none(), st.integers(-len(shape), len(shape) - 1)))
    name = draw(st.sampled_from(["max", "min", "argmax", "argmin", "sum", "prod"]))
    return x, axis, name


@FUZZ
@given(reductions())
def test_fuzz_reductions(case):
    x, axis, name = case
    if name in ("argmax", "argmin") and axis is None:
        s_fn = lambda a: getattr(snp, name)(a)  # noqa: E731
        np_fn = lambda a: getattr(np, name)(a)  # noqa: E731
    else:
        s_fn = lambda a: getattr(snp, name)(a, axis=axis)  # noqa: E731
        np_fn = lambda a: getattr(np, name)(a, axis=axis)  # noqa: E731
    if name in ("argmax", "argmin"):
        np_fn = (lambda a, f=np_fn: np.asarray(f(a)).astype(np.int64))
    exact = not (name in ("sum", "prod") and x.dtype.kind == "f")
    check_program(s_fn, np_fn, (x,), exact, f"{name}(axis={axis}) on {x.dtype}{list(x.shape)}",
                  zero_sign_free=name in ("max", "min"))


@st.composite
def indexings(draw):
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=5))
    x = draw(float_arrays(np.float64, shape))
    kind = draw(st.sampled_from(["basic", "int_array", "take"]))
    if kind == "basic":
        idx = draw(hnp.basic_indices(shape, allow_newaxis=True, allow_ellipsis=True))
    elif kind == "int_array":
        idx = draw(hnp.arrays(np.int32, draw(hnp.array_shapes(min_dims=1, max_dims=2,
                                                              max_side=4)),
                              elements=st.integers(-shape[0], shape[0] - 1)))
    else:
        idx = draw(st.lists(st.integers(0, shape[-1] - 1), min_size=1, max_size=5))
    return x, kind, idx


@FUZZ
@given(indexings())
def test_fuzz_indexing(case):
    x, kind, idx = case
    if kind == "take":
        s_fn = lambda a: snp.take(a, snp.asarray(idx), axis=-1)  # noqa: E731
        np_fn = lambda a: np.take(a, np.asarray(idx), axis=-1)  # noqa: E731
    elif kind == "int_array":
        s_fn = lambda a: a[snp.asarray(idx)]  # noqa: E731
        np_fn = lambda a: a[idx]  # noqa: E731
    else:
        s_fn = lambda a: a[idx]  # noqa: E731
        np_fn = lambda a: np.asarray(a[idx])  # noqa: E731
    check_program(s_fn, np_fn, (x,), True, f"{kind} {idx!r} of {x.shape}")


@pytest.mark.parametrize("value", [0.0, -0.0, 16777217.0, 2.0 ** 60 + 1, -np.inf])
def test_weak_scalars_keep_their_value_in_float64(value):
    x = np.asarray([1.0, -0.0, 3.0], np.float64)
    check_program(lambda a: a * 1.0 + value, lambda a: a * 1.0 + value, (x,), True,
                  f"x*1.0 + {value!r}", adds_zero=value == 0)
    assert stablejit.jit(lambda a: a + value)(snp.asarray(x)).dtype == snp.float64
