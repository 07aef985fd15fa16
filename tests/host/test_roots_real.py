"""roots of a real polynomial come back as LAPACK's geev gives them (NumPy's and jax's
roots are the eigenvalues of the companion matrix): real roots with imaginary part
exactly 0, complex ones in exact conjugate pairs. Aberth's iteration left a double root
at -1+1e-31j (so r[np.isreal(r)] dropped it) and conjugate pairs an ulp apart (SciPy's
iircomb symmetry test); SciPy's freqs read the imaginary parts to choose its range.

Over a table of real polynomials (distinct, repeated, complex pairs, roots of unity, a
leading zero), eagerly, on the reference backend and under jit (strip_zeros=False there),
against NumPy: the same number of real roots, conjugate symmetry bit for bit, and the
same roots. (A repeated complex pair, known only to sqrt(eps), need not be exact.)"""

from __future__ import annotations

import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp

POLYS = {
    "distinct real": [1, -6, 11, -6],
    "linear": [1, 1],
    "double real": [1, 2, 1],
    "real and a pair": [1, -1, 1, -1],
    "pairs": [2, 3, 4, 5, 6],
    "roots of unity, 6": [1, 0, 0, 0, 0, 0, -1],
    "roots of unity, 20": [1] + [0] * 19 + [-1],
    "comb": [1] + [0] * 9 + [1],
    "wide scale": [1e-3, 1, 1e3],
    "alternating": [1, -2, 3, -4, 5, -6, 7],
}
ROOT_ERROR = {"double real": 1e-7}  # a double root is only known to sqrt(eps)


def _eager(p):
    return snp.roots(snp.asarray(p))


def _reference(p):
    with stablejit.default_backend("reference"):
        return snp.roots(snp.asarray(p))


def _jit(p):
    return stablejit.jit(lambda p: snp.roots(p, strip_zeros=False))(snp.asarray(p))


@pytest.mark.parametrize("path", [_eager, _reference, _jit], ids=["eager", "reference", "jit"])
@pytest.mark.parametrize("name", sorted(POLYS))
def test_real_polynomials_have_real_roots_and_exact_pairs(name, path):
    p = np.array(POLYS[name], np.float64)
    got = np.asarray(path(p))
    want = np.roots(p)
    assert np.isreal(got).sum() == np.isreal(want).sum(), (got, want)
    np.testing.assert_array_equal(np.sort_complex(got), np.sort_complex(np.conj(got)))
    np.testing.assert_allclose(np.sort_complex(got), np.sort_complex(want.astype(complex)),
                               atol=ROOT_ERROR.get(name, 1e-12))


def test_a_leading_zero_under_jit_is_nan_and_the_rest_as_numpy():
    p = np.array([0.0, 1, 2, 1])
    got = np.asarray(_jit(p))
    assert np.isnan(got).sum() == 1
    np.testing.assert_allclose(got[~np.isnan(got)], [-1.0, -1.0], atol=1e-7)


def test_complex_coefficients_are_left_as_they_come():
    p = np.array([1, -1j, 1 + 1j])
    np.testing.assert_allclose(np.sort_complex(np.asarray(_eager(p))),
                               np.sort_complex(np.roots(p)), atol=1e-12)
