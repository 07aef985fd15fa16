"""log2 and log10 are exact at the powers of their base, as NumPy's (C's log2/log10):
log(x) / log(base) missed by an ulp for a fifth of the powers of two and most powers of
ten, so floor(log10(1e5)) was 4 and SciPy's freqs chose a frequency range a decade off
(log10(0.1) was -0.9999999999999998, and round(-1.5) went the other way).

Every power whose float is close enough to have the integer as its correctly rounded
logarithm, per dtype, eagerly, on the reference backend and under jit, against NumPy in
float64 rounded to the dtype (NumPy's own float32 log10 misses some of them by an ulp);
other values keep their accuracy (a few ulps of NumPy)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp

from tests.support.runners import PATHS, run_three_ways

KS = {2: range(-1074, 1024), 10: range(-330, 330)}


def _powers(base: int, dtype) -> np.ndarray:
    near = [math.ldexp(1.0, k) if base == 2 else float(f"1e{k}") for k in KS[base]]
    with np.errstate(over="ignore", under="ignore"):
        x = np.array(near).astype(dtype)
    x = x[np.isfinite(x) & (x >= np.finfo(dtype).tiny)]  # XLA flushes subnormals
    exact = np.log10(x.astype(np.float64)) if base == 10 else np.log2(x.astype(np.float64))
    return x[exact.astype(dtype) == np.round(exact)]  # those whose log rounds to k


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("name,base", [("log2", 2), ("log10", 10)])
def test_exact_at_the_powers_of_the_base(name, base, dtype):
    x = _powers(base, dtype)
    assert x.size >= 9  # float16: 1e-4 ... 1e4
    want = np.round(getattr(np, name)(x.astype(np.float64))).astype(dtype)
    for path, got in run_three_ways(getattr(snp, name), x).items():
        assert got.dtype == dtype
        np.testing.assert_array_equal(got, want, err_msg=f"{name} via {path}")


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("name", ["log2", "log10"])
def test_other_values_and_special_cases_as_numpy(name, dtype):
    rng = np.random.default_rng(3)
    x = np.concatenate([np.exp(rng.uniform(-10, 10, 500)), rng.uniform(0, 3, 500),
                        [0.0, -0.0, -1.0, np.inf, -np.inf, np.nan, 3.0, 7.5, 1e-3]])
    x = x.astype(dtype)
    with np.errstate(divide="ignore", invalid="ignore"):
        want = getattr(np, name)(x)
    for path in PATHS:
        got = run_three_ways(getattr(snp, name), x, paths=(path,))[path]
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        np.testing.assert_array_equal(got[np.isinf(want)], want[np.isinf(want)])
        fine = np.isfinite(want)
        np.testing.assert_allclose(got[fine], want[fine], rtol=4 * np.finfo(dtype).eps,
                                   atol=4 * np.finfo(dtype).eps, err_msg=path)


def test_digit_counts_and_bit_lengths_are_integers():
    """floor(log10(n)) + 1 digits and floor(log2(n)) + 1 bits, as Python counts them."""
    n = np.array([10**k for k in range(16)] + [2**k for k in range(53)], np.float64)
    digits = stablejit.jit(lambda n: snp.floor(snp.log10(n)) + 1)(snp.asarray(n))
    bits = stablejit.jit(lambda n: snp.floor(snp.log2(n)) + 1)(snp.asarray(n))
    np.testing.assert_array_equal(np.asarray(digits), [len(str(int(v))) for v in n])
    np.testing.assert_array_equal(np.asarray(bits), [int(v).bit_length() for v in n])


def test_complex_log10_unchanged():
    z = np.array([1 + 1j, -10 + 0j, 100j], np.complex128)
    np.testing.assert_allclose(np.asarray(snp.log10(snp.asarray(z))), np.log10(z), rtol=1e-15)
