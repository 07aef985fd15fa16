"""Every primitive executed three ways — a compiled one-op jit program, the eager XLA
backend and the reference backend — against NumPy, over the dtypes each accepts
(tests/support/prim_table/ PRIM_TABLE), plus edge values where StableHLO fixes the semantics:
NaN, inf, -0.0, integer division/remainder by zero and overflow, shifts past the width,
saturating float->int conversion."""

import functools

import numpy as np
import pytest
from stablejit.compiler import dtypes as dt
from stablejit.compiler.ir import Literal
from stablejit.compiler.registry import ALL

from tests.support.compare import assert_close
from tests.support.dtype_groups import DTYPES
from tests.support.prim_table import PRIM_TABLE, result_dtype_of
from tests.support.runners import PATHS, run_primitive, run_primitive_jit_batch

CASES = [(name, case) for name, spec in PRIM_TABLE.items() for case in spec.cases()]


@functools.cache
def _jit_table(name):
    """The jit path for all of a primitive's table cases: one compiled program per
    primitive (each case is still one independent op in it)."""
    cases = list(PRIM_TABLE[name].cases())
    outs = run_primitive_jit_batch(ALL[name], [(c.operands, c.attrs, c.regions)
                                               for c in cases])
    return {c.label: o for c, o in zip(cases, outs, strict=True)}


def check_prim(name, operands, attrs, expected, *, signed_zeros=False, rtol=None, atol=None,
               label=None, regions=()):
    prim = ALL[name]
    operands = [np.asarray(o) for o in operands]
    for path in PATHS:
        if path == "jit" and label is not None:
            outs = _jit_table(name)[label]
        else:
            outs = run_primitive(prim, operands, attrs, path, regions)
        exp = expected if isinstance(expected, tuple) else (expected,)
        assert len(outs) == len(exp)
        for got, want in zip(outs, exp, strict=True):
            want = np.asarray(want)
            assert got.dtype == want.dtype, f"{name} via {path}: {got.dtype} != {want.dtype}"
            assert_close(got, want, rtol=rtol, atol=atol, signed_zeros=signed_zeros,
                         msg=f"{name} via {path} on {[o.dtype for o in operands]}")


@pytest.mark.parametrize("name,case", CASES, ids=[f"{n}-{c.label}" for n, c in CASES])
def test_primitive_three_ways_matches_numpy(name, case):
    out_dtypes = result_dtype_of(case, ALL[name])
    expected = case.expected(*case.operands, **case.attrs)
    if isinstance(expected, tuple):  # multi-result primitives (lu, qr, eigh, svd ...)
        expected = tuple(np.asarray(e).astype(d.np) for e, d in zip(expected, out_dtypes,
                                                                       strict=True))
    else:
        expected = np.asarray(expected).astype(out_dtypes[0].np)
    # transcendental complex functions: XLA's algorithms differ from NumPy's by a few ulps
    rtol = 1e-4 if name in ("tan", "tanh", "atanh", "asin", "acos", "power") and \
        case.label == "c64" else None
    check_prim(name, case.operands, case.attrs, expected, rtol=rtol, label=case.label,
               regions=case.regions)


# ---- edge values -------------------------------------------------------------------------

F = [dt.float16, dt.bfloat16, dt.float32, dt.float64]
SPECIAL = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 0.5, -2.5]


@pytest.mark.parametrize("d", F, ids=lambda d: d.short)
def test_float_edge_values(d):
    x = np.array(SPECIAL, d.np)
    y = np.array([1.0, 1.0, 0.0, -0.0, np.inf, np.nan, 2.0, -np.inf, -0.0], d.np)
    w = x.astype(np.float32) if d.bits == 16 else x
    v = y.astype(np.float32) if d.bits == 16 else y
    with np.errstate(all="ignore"):
        check_prim("neg", [x], {}, -x, signed_zeros=True)
        check_prim("abs", [x], {}, np.abs(x), signed_zeros=True)
        # StableHLO: sign(-0.0) is -0.0 (NumPy gives +0.0)
        check_prim("sign", [x], {}, np.where(x == 0, x, np.sign(w)).astype(d.np),
                   signed_zeros=True)
        check_prim("floor", [x], {}, np.floor(w).astype(d.np), signed_zeros=True)
        check_prim("ceil", [x], {}, np.ceil(w).astype(d.np), signed_zeros=True)
        check_prim("round", [x], {}, np.round(w).astype(d.np), signed_zeros=True)
        check_prim("sqrt", [x], {}, np.sqrt(w).astype(d.np), signed_zeros=True)
        check_prim("exp", [x], {}, np.exp(w).astype(d.np))
        check_prim("log", [x], {}, np.log(w).astype(d.np))
        check_prim("is_finite", [x], {}, np.isfinite(x))
        check_prim("add", [x, y], {}, (w + v).astype(d.np), signed_zeros=True)
        check_prim("multiply", [x, y], {}, (w * v).astype(d.np), signed_zeros=True)
        check_prim("divide", [x, y], {}, (w / v).astype(d.np), signed_zeros=True)
        check_prim("remainder", [x, y], {}, np.fmod(w, v).astype(d.np))
        check_prim("maximum", [x, y], {}, np.maximum(w, v).astype(d.np))
        check_prim("minimum", [x, y], {}, np.minimum(w, v).astype(d.np))
        check_prim("eq", [x, y], {}, x == y)
        check_prim("lt", [x, y], {}, x < y)
        check_prim("ne", [x, x], {}, x != x)  # NaN != NaN


def test_float_reductions_with_nan_and_signed_zero():
    x = np.array([[1.0, np.nan, 3.0], [-0.0, 0.0, -np.inf]], np.float32)
    check_prim("reduce_max", [x], {"axes": (1,)}, np.array([np.nan, 0.0], np.float32))
    check_prim("reduce_min", [x], {"axes": (1,)}, np.array([np.nan, -np.inf], np.float32))
    check_prim("reduce_sum", [x], {"axes": (0, 1)}, np.array(np.nan, np.float32))
    # NaN counts as the extreme for argmax/argmin; ties go to the first index
    y = np.array([[1.0, 3.0, 3.0, 0.0], [2.0, np.nan, 5.0, np.nan]], np.float32)
    check_prim("argmax", [y], {"axis": 1, "index_dtype": dt.int32},
               np.array([1, 1], np.int32))
    check_prim("argmin", [y], {"axis": 1, "index_dtype": dt.int32},
               np.array([3, 1], np.int32))


def test_empty_reductions_give_the_identity():
    x = np.zeros((0, 3), np.float32)
    check_prim("reduce_sum", [x], {"axes": (0,)}, np.zeros(3, np.float32))
    check_prim("reduce_prod", [x], {"axes": (0,)}, np.ones(3, np.float32))
    check_prim("reduce_max", [x], {"axes": (0,)}, np.full(3, -np.inf, np.float32))
    check_prim("reduce_min", [np.zeros((0, 2), np.int8)], {"axes": (0,)},
               np.full(2, 127, np.int8))
    check_prim("reduce_and", [np.zeros((0, 2), np.uint16)], {"axes": (0,)},
               np.full(2, 0xFFFF, np.uint16))


@pytest.mark.parametrize("d", [dt.int8, dt.int32, dt.int64], ids=lambda d: d.short)
def test_signed_division_and_remainder_semantics(d):
    info = np.iinfo(d.np)
    x = np.array([7, -7, 7, -7, info.min, info.min, 5, -5], d.np)
    y = np.array([2, 2, -2, -2, -1, 1, 0, 0], d.np)
    # C semantics: truncate toward zero; remainder takes the dividend's sign.
    # XLA defines x/0 = -1 (all bits set) and x%0 = x, and MIN/-1 = MIN, MIN%-1 = 0.
    q = np.array([3, -3, -3, 3, info.min, info.min, -1, -1], d.np)
    r = np.array([1, -1, 1, -1, 0, 0, 5, -5], d.np)
    check_prim("divide", [x, y], {}, q)
    check_prim("remainder", [x, y], {}, r)


@pytest.mark.parametrize("d", [dt.uint8, dt.uint32, dt.uint64], ids=lambda d: d.short)
def test_unsigned_division_by_zero(d):
    info = np.iinfo(d.np)
    x = np.array([7, info.max, 9], d.np)
    y = np.array([2, 3, 0], d.np)
    check_prim("divide", [x, y], {}, np.array([3, info.max // 3, info.max], d.np))
    check_prim("remainder", [x, y], {}, np.array([1, info.max % 3, 9], d.np))


@pytest.mark.parametrize("d", [dt.int8, dt.int32, dt.int64, dt.uint8, dt.uint64],
                         ids=lambda d: d.short)
def test_shifts_past_the_bit_width(d):
    info = np.iinfo(d.np)
    bits = d.bits
    x = np.array([1, info.max, info.min, info.min, 5, info.min, 3], d.np)
    s = np.array([0, 1, bits - 1, bits, bits + 3, 1, bits], d.np)
    neg_fill = -1 if d.kind == "i" else 0
    shl = np.array([1, np.left_shift(x[1], 1), np.left_shift(x[2], bits - 1), 0, 0,
                    np.left_shift(x[5], 1), 0], d.np)
    shr = np.array([1, x[1] >> 1, x[2] >> (bits - 1), neg_fill if d.kind == "i" else 0, 0,
                    x[5] >> 1, 0], d.np)
    check_prim("shift_left", [x, s], {}, shl)
    check_prim("shift_right", [x, s], {}, shr)
    if d.kind == "i":  # a negative shift amount counts as past the width
        check_prim("shift_left", [np.array([3], d.np), np.array([-1], d.np)], {},
                   np.array([0], d.np))
        check_prim("shift_right", [np.array([-8], d.np), np.array([-1], d.np)], {},
                   np.array([-1], d.np))


def test_integer_overflow_wraps():
    x = np.array([127, -128, 100], np.int8)
    check_prim("add", [x, np.array([1, -1, 100], np.int8)], {},
               np.array([-128, 127, -56], np.int8))
    check_prim("neg", [x], {}, np.array([-127, -128, -100], np.int8))
    check_prim("abs", [np.array([-128, -3], np.int8)], {}, np.array([-128, 3], np.int8))
    u = np.array([0, 255], np.uint8)
    check_prim("subtract", [u, np.array([1, 0], np.uint8)], {}, np.array([255, 255], np.uint8))


@pytest.mark.parametrize("dst", [dt.int8, dt.int32, dt.uint8, dt.int64, dt.uint32],
                         ids=lambda d: d.short)
def test_float_to_int_conversion_saturates_and_maps_nan_to_zero(dst):
    info = np.iinfo(dst.np)
    x = np.array([np.nan, np.inf, -np.inf, 1e30, -1e30, 2.9, -2.9, 0.0], np.float64)
    want = np.array([0, info.max, info.min, info.max, info.min, 2, max(-2, info.min), 0],
                    dst.np)
    check_prim("convert", [x], {"dtype": dst}, want)
    check_prim("convert", [x.astype(np.float32)], {"dtype": dst}, want)


def test_conversions_to_bool_and_between_complex():
    x = np.array([0.0, -0.0, 0.5, np.nan, -3.0], np.float32)
    check_prim("convert", [x], {"dtype": dt.bool_}, np.array([0, 0, 1, 1, 1], bool))
    c = np.array([1 + 2j, -0.5j], np.complex64)
    check_prim("convert", [c], {"dtype": dt.complex128}, c.astype(np.complex128))
    check_prim("convert", [np.array([True, False])], {"dtype": dt.bfloat16},
               np.array([1, 0], dt.bfloat16.np))


@pytest.mark.parametrize("d", DTYPES, ids=lambda d: d.short)
def test_constants_round_trip_through_every_path(d):
    if d.kind in "iu":
        info = np.iinfo(d.np)
        a = np.array([info.min, info.max, 0, 1], d.np)
    elif d.kind == "b":
        a = np.array([True, False, True])
    elif d.kind == "c":
        a = np.array([complex(np.nan, 1), complex(np.inf, -np.inf), -0.0 + 2j, 1.5], d.np)
    else:
        a = np.array([np.nan, np.inf, -np.inf, -0.0, 0.1, 1.0], d.np)
    for path in PATHS:
        (got,) = run_primitive(ALL["constant"], [], {"value": Literal(a)}, path)
        assert got.dtype == a.dtype
        if d.kind == "c":
            for part in (np.real, np.imag):
                assert part(got).tobytes() == part(a).tobytes() or np.array_equal(
                    part(got), part(a), equal_nan=True), (path, got)
        elif d.kind == "f":
            # bit-exact: NaN stays NaN, -0.0 keeps its sign
            assert np.array_equal(np.isnan(got.astype(np.float32)),
                                  np.isnan(a.astype(np.float32)))
            fin = ~np.isnan(a.astype(np.float32))
            assert got[fin].tobytes() == a[fin].tobytes(), (path, got)
        else:
            assert got.tobytes() == a.tobytes(), (path, got)


def test_iota_and_dot_preferred_types_differ_from_operands():
    check_prim("iota", [], {"shape": (2, 3), "dtype": dt.float16, "dimension": 0},
               np.array([[0, 0, 0], [1, 1, 1]], np.float16))
    x = np.full((1, 2, 64), 100, np.int8)
    check_prim("dot_general", [x, x.reshape(1, 64, 2)],
               {"contracting": ((2,), (1,)), "batch": ((0,), (0,)),
                "preferred_element_type": dt.int32}, np.full((1, 2, 2), 640000, np.int32))
