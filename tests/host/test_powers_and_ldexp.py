"""Integer powers and ldexp over their whole range, on every way of running (eager, jit,
lazy, reference), against exact arithmetic (Python's pow modulo 2**bits, NumPy's ldexp).

Found by a differential fuzzer (each failed before its fix):
  - XLA's integer stablehlo.power reads only the exponent's low 6 bits (int8 2 ** 64 was 1,
    uint8 3 ** 200 was 0, not NumPy's 161): compiler/primitives/_integer_power.py;
  - under jit, XLA rewrote pow(x, -1) with a constant -1 into 1 / x, whose integer
    division by 0 is -1 (0 ** -1 was -1 under jit, 0 eagerly): compiler/passes/hold.py;
  - the reference rule gave x ** 0 = 1 for every negative exponent, where XLA gives 0
    but for 1 and -1;
  - ldexp was x * exp2(n): ldexp(inf, -200) was inf * 0 = NaN, ldexp(0, 200) NaN,
    ldexp(1e-30, 130) inf (2**130 overflows float32), ldexp(512.5, -34) in float16 0.
"""

from __future__ import annotations

import warnings

import ml_dtypes
import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp

MODES = ("eager", "jit", "lazy", "reference")
INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]


def _run(f, mode, *args):
    if mode == "reference":
        with stablejit.default_backend("reference"):
            return np.asarray(f(*[snp.asarray(a) for a in args]))
    ts = [snp.asarray(a) for a in args]
    if mode == "jit":
        return np.asarray(stablejit.jit(f)(*ts))
    if mode == "lazy":
        with stablejit.lazy():
            out = f(*ts)
        return np.asarray(out)
    return np.asarray(f(*ts))


def _power_table(dtype):
    info = np.iinfo(dtype)
    bases = [0, 1, 2, 3, 5, 7, 9, 255 % (int(info.max) + 1), info.max, info.max - 1]
    exps = [0, 1, 2, 5, 31, 32, 33, 63, 64, 65, 66, 100, 127, 128, 129, 200, 255, 2**15 - 1,
            2**15, 2**16 - 1, 2**31 - 1, 2**31, 2**32 - 1, 2**62 + 3, 2**63 - 1, 2**63,
            2**64 - 1]
    if info.min < 0:
        bases += [-1, -2, -3, info.min, info.min + 1]
        exps += [-1, -2, -3, -64, -65, info.min]
    exps = [e for e in exps if info.min <= e <= info.max]
    x = np.array([b for b in bases for _ in exps], dtype)
    y = np.array([e for _ in bases for e in exps], dtype)
    return x, y


def _exact_power(x, y, dtype):
    bits = np.iinfo(dtype).bits

    def one(b, e):
        if e < 0:  # XLA's rule: 1 / b ** -e truncated
            return 1 if b == 1 else (1 - 2 * (e % 2) if b == -1 else 0)
        return pow(b, e, 2**bits)

    vals = [one(int(b), int(e)) % 2**bits for b, e in zip(x, y, strict=True)]
    return np.array(vals, np.uint64).astype(dtype)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", INTS)
def test_integer_power_is_exact_modulo_two_to_the_bits(dtype, mode):
    x, y = _power_table(dtype)
    got = _run(lambda a, b: a ** b, mode, x, y)
    want = _exact_power(x, y, dtype)
    bad = got != want
    assert got.dtype == want.dtype and not bad.any(), (x[bad][:5], y[bad][:5], got[bad][:5])


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", INTS)
def test_integer_power_of_a_python_int_exponent(dtype, mode):
    """A constant exponent (what XLA's simplifier sees under jit and in a lazy graph)."""
    x, _ = _power_table(dtype)
    x = np.unique(x)
    for e in (-3, -2, -1, 5, 7, 63, 64, 65, 100):
        if not np.iinfo(dtype).min <= e <= np.iinfo(dtype).max:
            continue
        got = _run(lambda a, e=e: a ** e, mode, x)
        want = _exact_power(x, np.full(x.shape, e, dtype), dtype)
        assert np.array_equal(got, want), (e, got, want)


def test_nonnegative_integer_powers_are_numpys():
    """NumPy's integer power is exact modulo 2**bits (jax's, through XLA's, is not past
    exponent 63: jnp.power(int8(2), int8(64)) is 1)."""
    for dtype in INTS:
        x, y = _power_table(dtype)
        keep = y >= 0
        got = np.asarray(snp.power(snp.asarray(x[keep]), snp.asarray(y[keep])))
        assert np.array_equal(got, np.power(x[keep], y[keep])), dtype


FLOATS = [np.float16, ml_dtypes.bfloat16, np.float32, np.float64]


def _ldexp_table(dtype):
    f = np.finfo(np.float32 if dtype is ml_dtypes.bfloat16 else dtype)
    big = {np.float16: 6e4, np.float64: 1e300}.get(dtype, 1e30)
    small = {np.float16: 1e-4, np.float64: 1e-300}.get(dtype, 1e-30)
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -3.5, 0.1, small, -small, big,
                  float(f.tiny) if dtype is not np.float16 else 6.2e-5], np.float64)
    n = np.array([0, 1, -1, 5, -5, 14, -14, 15, -24, 100, -100, 127, -126, 130, -130, 200,
                  -200, 1000, -1000, 1100, -1100, 2100, -2100, 2**31 - 1, -2**31], np.int64)
    with np.errstate(all="ignore"):
        xs = np.repeat(x[None], len(n), 0).astype(dtype)
    return xs, np.repeat(n[:, None], len(x), 1)


def _flushed(a, dtype):
    """XLA on the host flushes float32, bfloat16 and float64 subnormals to zero."""
    if dtype is np.float16:
        return a
    tiny = np.finfo(np.float32 if dtype is ml_dtypes.bfloat16 else dtype).tiny
    wide = a.astype(np.float64)
    with np.errstate(invalid="ignore"):
        return np.where(np.abs(wide) < tiny, np.copysign(0.0, wide), wide).astype(dtype)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("itype", [np.int8, np.int32, np.int64, np.uint8, np.uint64])
def test_ldexp_is_numpys_bit_for_bit(dtype, itype, mode):
    x, n = _ldexp_table(dtype)
    info = np.iinfo(itype)
    n = np.clip(n, int(info.min), int(info.max)).astype(itype)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        # NumPy's ldexp of the exact float64 value (float16 and bfloat16 results round
        # once from it); a clipped exponent over/underflows all the same
        want = np.ldexp(x.astype(np.float64), np.clip(n.astype(np.int64), -5000, 5000))
        want = want.astype(dtype) if dtype is not np.float64 else want
    if mode != "reference":
        want = _flushed(want, dtype)
    got = _run(snp.ldexp, mode, x, n)
    same = (got.astype(np.float64) == want.astype(np.float64)) | (
        np.isnan(got.astype(np.float64)) & np.isnan(want.astype(np.float64)))
    same &= np.signbit(got.astype(np.float64)) == np.signbit(want.astype(np.float64))
    assert got.dtype == np.dtype(dtype) and same.all(), (x[~same][:4], n[~same][:4],
                                                         got[~same][:4], want[~same][:4])


def test_ldexp_of_every_float16_is_numpys():
    x = np.arange(2**16, dtype=np.uint32).astype(np.uint16).view(np.float16)
    x = x[~np.isnan(x)]
    n = np.arange(-45, 46, dtype=np.int32)
    xs, ns = np.repeat(x[None], len(n), 0), np.repeat(n[:, None], len(x), 1)
    got = np.asarray(stablejit.jit(snp.ldexp)(snp.asarray(xs), snp.asarray(ns)))
    with np.errstate(over="ignore"):
        want = np.ldexp(xs, ns)
    assert np.array_equal(got.view(np.uint16), want.view(np.uint16))


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16, np.float32, np.float64],
                         ids=lambda d: np.dtype(d).name)
def test_float_powers_of_special_values_agree_on_every_path(dtype):
    """C's pow on every path: the reference rule passed a 0-d exponent to np.power, whose
    scalar 0.5 fast path is sqrt (-0.0 ** 0.5 was -0.0 and -inf ** 0.5 NaN there, +0.0
    and inf eagerly, under jit and in NumPy with an array exponent)."""
    x = np.array([-0.0, 0.0, -np.inf, np.inf, 4.0, -1.0, np.nan, 0.5, -2.0], dtype)
    for y in (0.5, -0.5, 2.0, 1.5, 0.25, -1.0, 3.0, -2.0, np.inf, -np.inf):
        with np.errstate(all="ignore"):
            wide = x.astype(np.float64)
            want = np.power(wide, np.full(x.shape, y)).astype(dtype)
        for mode in MODES:
            got = _run(lambda a, y=y: a ** y, mode, x).astype(np.float64)
            w = want.astype(np.float64)
            close = np.isclose(got, w, rtol=1e-2 if dtype in (np.float16, ml_dtypes.bfloat16)
                               else 1e-6, equal_nan=True)
            signs = (np.signbit(got) == np.signbit(w)) | np.isnan(w)  # (a NaN's sign is open)
            assert close.all() and signs.all(), (mode, y, got, w)
