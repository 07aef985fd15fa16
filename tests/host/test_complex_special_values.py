"""Special values of the complex elementwise functions (C99 Annex G, the array API
standard's special cases) and sign(±0), on jit, eager XLA and the reference backend,
against NumPy bit for bit (signed zeros included; NaNs compare equal).

Before the fixes XLA gave nan+nanj for most infinite or NaN parts (exp(-inf+infj),
cosh(inf+nanj), log(nan+infj) ...), ignored the sign of zero (acos(2.5-0j) on the wrong
side of the branch cut), and atanh(nan+nanj) had imaginary part -pi/2.
"""

import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp

from tests.support.runners import run_three_ways

INF, NAN = np.inf, np.nan
# (±1e30: XLA gives a huge finite part a finite result beside a NaN one, asinh(nan+1e30j)
# in complex64 was 69.8+nanj)
PARTS = [0.0, -0.0, 1.0, -1.0, 2.5, -2.5, 4.0, -4.0, 1e30, -1e30, INF, -INF, NAN]
GRID = np.array([complex(a, b) for a in PARTS for b in PARTS])

NP_NAME = {"acos": "arccos", "asin": "arcsin", "atan": "arctan", "acosh": "arccosh",
           "asinh": "arcsinh", "atanh": "arctanh"}
# (log2, log10 and exp2 scale a part by a real constant, and abs is +inf beside a NaN
# part: a complex product or quotient, and XLA's complex abs, gave NaN there)
FUNCTIONS = ["exp", "expm1", "exp2", "log", "log1p", "log2", "log10", "sqrt", "abs", "sin",
             "cos", "tan", "sinh", "cosh", "tanh", "asin", "acos", "atan", "asinh", "acosh",
             "atanh"]

# Where C99 leaves a sign unspecified and our reflection picks the other one than NumPy
# (e.g. sinh(-inf+nanj) = ±inf+nanj, cosh(0+infj) = nan±0j), and where NumPy's expm1
# departs from the standard (expm1(inf+0j) is inf+0j, expm1(-inf+infj) is -1±0j; NumPy
# gives nan+nanj, and expm1(1e30+0j) is inf+nanj where C99's exp(x+0j) = exp(x)+0j
# gives inf+0j): compare without the sign of a zero or infinity next to a NaN.
SIGN_UNSPECIFIED = {"sinh", "cosh", "sin", "cos"}
NUMPY_DEPARTS = {"expm1": lambda z: not np.isfinite(z) or z == 0 or abs(z.real) >= 1e30,
                 # the standard's tanh(+inf + iy) = 1 + 0j for finite y >= 0 (C99 and NumPy:
                 # 1 + i*0*sin(2y), -0 where sin(2y) < 0); tan(z) is -i*tanh(iz)
                 "tanh": lambda z: np.isinf(z.real) and np.isfinite(z.imag),
                 "tan": lambda z: np.isinf(z.imag) and np.isfinite(z.real)}


@pytest.mark.parametrize("y", [0.0, 1.0, 2.5, 4.0, 1e30])
def test_tanh_at_infinity_is_the_standards(y):
    """tanh(±inf ± iy) = ±1 ± 0j with the signs of the operand's parts (the array API's
    rule, from conjugate symmetry and oddness), where NumPy's zero follows sin(2y)."""
    for sx in (1, -1):
        for sy in (1, -1):
            z = np.array([complex(sx * INF, sy * y)], np.complex64)
            for path, got in run_three_ways(snp.tanh, z).items():
                g = complex(got[0])
                assert g.real == sx and g.imag == 0 and np.signbit(g.imag) == (sy < 0), \
                    (path, z, g)


def _same(got: complex, want: complex, loose_sign: bool) -> bool:
    def part(g, w, other_nan):
        if np.isnan(w):
            return bool(np.isnan(g))
        if not np.isfinite(w) or w == 0:
            if loose_sign and other_nan:
                return abs(g) == abs(w)
            return g == w and np.signbit(g) == np.signbit(w)
        return bool(np.isclose(g, w, rtol=1e-5, atol=0))
    return (part(got.real, want.real, np.isnan(want.imag))
            and part(got.imag, want.imag, np.isnan(want.real)))


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128], ids=["c64", "c128"])
@pytest.mark.parametrize("name", FUNCTIONS)
def test_complex_special_values_match_numpy(name, dtype):
    z = GRID.astype(dtype)
    with np.errstate(all="ignore"):
        want = getattr(np, NP_NAME.get(name, name))(z)
    skip = NUMPY_DEPARTS.get(name, lambda z: False)
    for path, got in run_three_ways(getattr(snp, name), z).items():
        assert got.dtype == want.dtype, path
        bad = [(complex(a), complex(g), complex(w)) for a, g, w in zip(z, got, want, strict=True)
               if not skip(complex(a))
               and not _same(complex(g), complex(w), name in SIGN_UNSPECIFIED)]
        assert not bad, f"{name} via {path}: (operand, got, numpy) {bad[:6]}"


@pytest.mark.parametrize("z,want", [
    (complex(INF, 0.0), complex(INF, 0.0)),
    (complex(-INF, INF), complex(-1.0, 0.0)),
    (complex(-INF, NAN), complex(-1.0, 0.0)),
    (complex(INF, INF), complex(INF, NAN)),
    (complex(NAN, 0.0), complex(NAN, 0.0)),
    (complex(NAN, -0.0), complex(NAN, -0.0)),
    (complex(-0.0, 0.0), complex(0.0, 0.0)),
    (complex(1.0, INF), complex(NAN, NAN)),
])
def test_expm1_follows_the_standard_where_numpy_does_not(z, want):
    for path, got in run_three_ways(snp.expm1, np.array([z])).items():
        assert _same(complex(got[0]), want, loose_sign=False), (path, got)


def test_branch_cuts_respect_the_sign_of_zero():
    z = np.array([complex(2.5, -0.0), complex(-2.5, -0.0), complex(0.0, -2.5)])
    for name in ("acos", "asin", "acosh", "atanh", "log", "sqrt"):
        want = getattr(np, NP_NAME.get(name, name))(z)
        for path, got in run_three_ways(getattr(snp, name), z).items():
            assert np.allclose(got, want, rtol=1e-12) and np.array_equal(
                np.signbit(got.imag), np.signbit(want.imag)), (name, path, got, want)


def test_sign_of_zero_is_positive_zero():
    x = np.array([-0.0, 0.0, 2.0, -3.0, NAN], np.float32)
    z = np.array([complex(-0.0, -0.0), complex(0.0, -0.0), complex(3.0, 4.0)])
    for arg in (x, z):
        want = np.sign(arg)
        for path, got in run_three_ways(snp.sign, arg).items():
            assert np.allclose(got, want, rtol=1e-15, atol=0, equal_nan=True), path
            assert np.array_equal(np.signbit(got.real), np.signbit(want.real)), path
            assert np.array_equal(np.signbit(np.imag(got)), np.signbit(np.imag(want))), path


def test_sign_of_complex_infinities_is_the_unit_along_them():
    z = np.array([complex(a, b) for a in PARTS for b in PARTS])
    finite_or_inf = ~(np.isnan(z.real) | np.isnan(z.imag) | (np.isinf(z.real) & np.isinf(z.imag)))
    z = z[finite_or_inf]  # NumPy gives 1+0j for inf+nanj; the standard nan+nanj
    with np.errstate(all="ignore"):
        want = np.sign(z)
    for path, got in run_three_ways(snp.sign, z).items():
        bad = [(a, g, w) for a, g, w in zip(z, got, want, strict=True)
               if not _same(complex(g), complex(w), loose_sign=False)]
        assert not bad, (path, bad[:6])


def test_derivative_through_the_reflection_at_zero():
    # the fold into the first quadrant negates rather than takes |x|: d/dt stays right at 0
    got = stablejit.grad(lambda t: snp.real(snp.sinh(t + 1j)))(snp.asarray(0.0))
    assert np.isclose(float(got), np.cos(1.0))
    got = stablejit.grad(lambda t: snp.imag(snp.sin(1.0 + t * 1j)))(snp.asarray(0.0))
    assert np.isclose(float(got), np.cos(1.0))
