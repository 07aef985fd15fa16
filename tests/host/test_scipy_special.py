"""stablejit.scipy.special against jax.scipy.special: one table of (function, arguments
with special values), each run under jit, eagerly on XLA and on the reference backend;
gradients of the functions with their own derivative rules against jax.grad."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import jax.scipy.special as jsp
import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp
import stablejit.scipy
from stablejit.scipy import special

from tests.support.runners import check_three_ways

nan, inf = np.nan, np.inf
f32, f64 = np.float32, np.float64
N = 24  # every table argument has this length, so eager runs share compiled ops


def _vec(values) -> np.ndarray:
    """float32 values, cycled to length N."""
    assert len(values) <= N
    return np.resize(np.array(values, f32), N)

# the gamma functions' interesting points: poles, signed zeros, both infinities, nan,
# tiny and huge values, near-integers, the reflection range
GAMMA_X = _vec([nan, inf, -inf, 0.0, -0.0, 1, 2, -1, -2, -2.5, -3.3, 0.5, 1e-30, 1e-8,
                    1 - 1e-7, 3.7, 10.2, 33.3, 171.5, 1e30, -170.5, -1e-6])
UNIT = _vec([nan, -1.5, -1, -0.999999, -0.5, -0.0, 0.0, 1e-10, 0.3, 0.7, 0.99,
                 0.9999999, 1, 1.5])
PROB = _vec([nan, -0.1, 0, 1e-30, 1e-10, 0.01, 0.1, 0.3, 0.5, 0.9, 0.99, 1 - 1e-7, 1,
                 1.1])
NORMAL_X = _vec([nan, -inf, -100, -30, -12, -10, -5, -0.5, 0, 0.5, 3, 5.5, 8.5, 40,
                     inf])
BESSEL_X = _vec([nan, -inf, -100, -8.5, -8, -1, -1e-10, -0.0, 0, 0.5, 3, 8, 8.01, 30,
                     700, inf])
GAMMAINC_A = _vec([0.5, 1, 2, 5, 10, 0, 3, nan, 2, 100, 0.1, -1, 2, 1e-3, 30])
GAMMAINC_X = _vec([0.3, 1, 3, 2, 12, 1, 0, 1, inf, 90, 50, 1, -1, 1e-3, 29])
BETAINC_A = _vec([0.5, 1, 2, 5, 10, 0, 3, nan, 2, 100, 0.1, 1, 2, -1, 7])
BETAINC_B = _vec([1.5, 2, 3, 6, 11, 1, 4, 1, inf, 101, 1.1, 0, 0, 1, 0.5])
BETAINC_X = _vec([0.3, 0.9, 0.5, 0, 1, 0.01, 0.99, 0.5, 0.5, 0.5, 0.2, 0.5, 1, 0.5,
                      1.5])
XLOGY_X = _vec([0, 0, 0, 1, 2, -1, 0, 3, nan, 0.5])
XLOGY_Y = _vec([0, nan, inf, 0, 3, 2, -1, -1, 1, 1e-30])
ENTR_P = _vec([0, 0, 0.5, 0.5, -1, 1, 2, nan, 0.3, inf])
ENTR_Q = _vec([0, 1, 0.25, 0, 1, -1, 2, 1, nan, 1])
LSE = np.array([[1, 2, 3, -inf], [-inf, -inf, -inf, -inf], [1e30, 1e30, 0, -1],
                [inf, 1, 2, 3], [0, 0, 0, 0]], f32)
LSE_B = np.array([[1, -1, 2, 1], [1, 1, 1, 1], [1, 1, 0, -2], [1, 1, 1, 1],
                  [1, -1, 1, -1]], f32)


def _jax(fn):
    """fn on jax (float64 enabled, so float64 cases are computed in float64)."""
    def run(*args):
        with jax.enable_x64(True):
            return jax.tree.map(np.asarray, fn(*(jnp.asarray(a) for a in args)))
    return run


def _case(name, fn, jfn, *args, rtol=None, atol=1e-6, f64=True):
    """One row of the table in float32 and (f64=True) again in float64."""
    rows = [pytest.param(fn, jfn, args, rtol, atol, id=f"{name}-float32")]
    if f64:
        args64 = tuple(a.astype(np.float64) if a.dtype == np.float32 else a for a in args)
        rows.append(pytest.param(fn, jfn, args64, None if rtol is None else 1e-10,
                                 1e-12, id=f"{name}-float64"))
    return rows


def _unary(name, x, **kw):
    return _case(name, getattr(special, name), getattr(jsp, name), x, **kw)


CASES = [
    *_unary("erf", UNIT * 3),
    *_unary("erfc", UNIT * 3),
    *_unary("erfinv", UNIT),
    *_unary("gammaln", GAMMA_X),
    # (at +-0 jax 0.10 gives nan and 0.11 -inf; SciPy, and we, -inf at +0, +inf at -0)
    *_case("digamma", special.digamma,
           lambda x: jnp.where(x == 0, jnp.copysign(jnp.inf, -x), jsp.digamma(x)),
           GAMMA_X, rtol=3e-5),
    *_unary("gamma", GAMMA_X, rtol=3e-5),
    *_unary("gammasgn", GAMMA_X),
    *_unary("loggamma", GAMMA_X, f64=False),
    *_unary("factorial", GAMMA_X, rtol=3e-5, f64=False),
    *_unary("ndtr", NORMAL_X),
    *_unary("ndtri", PROB),
    *_unary("log_ndtr", NORMAL_X),
    *_case("log_ndtr(series_order=6)", lambda x: special.log_ndtr(x, series_order=6),
           lambda x: jsp.log_ndtr(x, series_order=6), NORMAL_X, f64=False),
    *_unary("i0e", BESSEL_X),
    *_unary("i1e", BESSEL_X),
    *_unary("i0", np.nan_to_num(BESSEL_X, posinf=20, neginf=-20) / 10),  # i0(inf, f64=False): nan
    *_unary("i1", np.nan_to_num(BESSEL_X, posinf=20, neginf=-20) / 10, f64=False),
    *_unary("logit", PROB),
    *_unary("expit", NORMAL_X, f64=False),
    *_unary("entr", ENTR_P),
    # (a difference of gammaln terms near 1.7, so float32's rounding leaves ~1e-6: at
    # (3.4, 0.5) jax's answer on an H200 is 1.2e-6 from SciPy's float64 one, ours 6e-7)
    *_case("betaln", special.betaln, jsp.betaln, np.abs(GAMMA_X) + 0.1,
           np.abs(GAMMA_X[::-1]) + 0.5, rtol=3e-5, atol=2e-6),
    *_case("beta", special.beta, jsp.beta, _vec([0.5, 2, -1.5, 30, 3, 1e-3, 7.5, -0.5]),
           _vec([1.5, 3, 2, 40, -2.5, 2, 0.25, -0.25]), rtol=3e-5),
    *_case("poch", special.poch, jsp.poch, _vec([0.5, 2, -1.5, 30, 3, 1e-3, 7.5, 4]),
           _vec([1.5, 3, 2, 4, -2.5, 0, 0.25, -2]), rtol=3e-5),
    *_case("boxcox", special.boxcox, jsp.boxcox, _vec([1, 2, 0.5, 10, 0, -1, nan, inf]),
           _vec([0, 0.5, 1e-9, -2, 2, 1, 1, 0.5])),
    *_case("boxcox1p", special.boxcox1p, jsp.boxcox1p,
           _vec([0, 1, 1e-9, 10, -1, -2, nan, inf]), _vec([0, 0.5, 2, -2, 2, 1, 1, 0.5])),
    *_case("xlogy", special.xlogy, jsp.xlogy, XLOGY_X, XLOGY_Y),
    *_case("xlog1py", special.xlog1py, jsp.xlog1py, XLOGY_X, XLOGY_Y - 1, f64=False),
    # jax's rel_entr is inf for a nan argument and nan for (inf, 1); SciPy's, and ours,
    # nan and inf
    *_case("rel_entr", special.rel_entr,
           lambda p, q: jnp.where(jnp.isnan(p) | jnp.isnan(q), jnp.nan,
                                  jnp.where(jnp.isposinf(p) & (q > 0) & jnp.isfinite(q),
                                            jnp.inf, jsp.rel_entr(p, q))),
           ENTR_P, ENTR_Q, f64=False),
    *_case("kl_div", special.kl_div, jsp.kl_div, ENTR_P, ENTR_Q, f64=False),
    *_case("gammainc", special.gammainc, jsp.gammainc, GAMMAINC_A, GAMMAINC_X, rtol=1e-5),
    *_case("gammaincc", special.gammaincc, jsp.gammaincc, GAMMAINC_A, GAMMAINC_X,
           rtol=1e-5, f64=False),
    *_case("betainc", special.betainc, jsp.betainc, BETAINC_A, BETAINC_B, BETAINC_X,
           rtol=1e-4, f64=False),
    *_case("comb", special.comb, jsp.comb, _vec([5, 10, 3, 0, -1, 4.5, 50]),
           _vec([2, 0, 5, 0, 1, 2, 25]), rtol=1e-4, f64=False),
    *_case("comb(repetition)", lambda n, k: special.comb(n, k, repetition=True),
           lambda n, k: jsp.comb(n, k, repetition=True),
           _vec([5, 10, 3, 0, -1]), _vec([2, 0, 5, 0, 1]), rtol=1e-5, f64=False),
    *_case("multigammaln", lambda a: special.multigammaln(a, 3),
           lambda a: jsp.multigammaln(a, 3), _vec([1.5, 2, 10, 100]), rtol=3e-5, f64=False),
    *_case("logsumexp", special.logsumexp, jsp.logsumexp, LSE),
    *_case("logsumexp(axis=1)", lambda a: special.logsumexp(a, axis=1),
           lambda a: jsp.logsumexp(a, axis=1), LSE, f64=False),
    *_case("logsumexp(axis=0, keepdims)", lambda a: special.logsumexp(a, 0, keepdims=True),
           lambda a: jsp.logsumexp(a, 0, keepdims=True), LSE),
    *_case("logsumexp(b=)", lambda a, b: special.logsumexp(a, axis=-1, b=b),
           lambda a, b: jsp.logsumexp(a, axis=-1, b=b), LSE, LSE_B),
    *_case("logsumexp(b=, return_sign)",
           lambda a, b: special.logsumexp(a, axis=(1,), b=b, return_sign=True),
           lambda a, b: jsp.logsumexp(a, axis=(1,), b=b, return_sign=True), LSE, LSE_B),
    *_case("logsumexp(where=)", lambda a, w: special.logsumexp(a, axis=1, where=w),
           lambda a, w: jsp.logsumexp(a, axis=1, where=w), LSE, LSE_B > 0, f64=False),
    *_case("softmax", special.softmax, jsp.softmax, LSE[:1]),
    *_case("softmax(axis=1)", lambda x: special.softmax(x, axis=1),
           lambda x: jsp.softmax(x, axis=1), LSE[[0, 2, 4]], f64=False),
    *_case("log_softmax(axis=0)", lambda x: special.log_softmax(x, axis=0),
           lambda x: jsp.log_softmax(x, axis=0), LSE[[0, 4]], f64=False),
]


@pytest.mark.parametrize("fn, jfn, args, rtol, atol", CASES)
def test_matches_jax_three_ways(fn, jfn, args, rtol, atol):
    check_three_ways(fn, _jax(jfn), *args, rtol=rtol, atol=atol)


@pytest.mark.parametrize("n", [0, 1, 2, 3, 10, 31, 64])
def test_bernoulli_numbers_are_exact_then_rounded(n):
    import scipy.special  # noqa: PLC0415 - only this test compares with SciPy itself

    got = special.bernoulli(n)
    assert got.dtype == snp.float32 and got.shape == (n + 1,)
    want = scipy.special.bernoulli(n)
    np.testing.assert_allclose(got.numpy(), want.astype(f32), rtol=2e-7)
    theirs = np.asarray(jsp.bernoulli(n))  # (jax's float32 recurrence overflows past ~60)
    finite = np.isfinite(theirs)
    np.testing.assert_allclose(got.numpy()[finite], theirs[finite], rtol=1e-4)
    with stablejit.experimental.enable_x64():
        # (SciPy's own numbers are approximations, off by ~2e-12; ours are exact)
        np.testing.assert_allclose(special.bernoulli(n).numpy(), want, rtol=1e-11)
    assert float(special.bernoulli(12)[12]) == np.float32(-691 / 2730)
    with pytest.raises(ValueError, match="non-negative"):
        special.bernoulli(-1)
    with pytest.raises(TypeError, match="Python int"):
        special.bernoulli(2.0)


def test_integer_and_python_arguments_give_the_default_float():
    assert special.gammaln(np.arange(1, 4)).dtype == snp.float32
    assert special.xlogy(2, 3).dtype == snp.float32
    np.testing.assert_allclose(special.gammaln(np.arange(1, 5)).numpy(),
                               np.asarray(jsp.gammaln(np.arange(1, 5))), atol=1e-6)


def test_half_precision_is_computed_in_float32_and_rounded_back():
    x = np.array([0.5, 2.5, 7.0], np.float16)
    out = special.gammaln(x)
    assert out.dtype == snp.float16
    np.testing.assert_allclose(out.numpy().astype(f32), np.asarray(jsp.gammaln(x), f32),
                               rtol=2e-3, atol=1e-3)


GRAD_CASES = [
    ("gammaln", lambda m: m.gammaln, (np.array([0.3, 2.5, -1.5, 40.0], f32),)),
    ("digamma", lambda m: m.digamma, (np.array([0.3, 2.5, -1.5, 40.0], f32),)),
    ("erfinv", lambda m: m.erfinv, (np.array([-0.9, 0.0, 0.5, 0.999], f32),)),
    ("log_ndtr", lambda m: m.log_ndtr, (np.array([-30.0, -3, 6, 10], f32),)),
    ("xlogy", lambda m: m.xlogy, (np.array([0.0, 1, 2, 0], f32), np.array([0.0, 2, 3, 1], f32))),
    ("xlog1py", lambda m: m.xlog1py, (np.array([0.0, 1, 2, 0], f32),
                                      np.array([-1.0, 2, 3, 0], f32))),
    ("entr", lambda m: m.entr, (np.array([0.5, 1.0, 3.0, 1e-3], f32),)),
    ("logit", lambda m: m.logit, (np.array([0.1, 0.5, 0.9, 1e-4], f32),)),
    ("i0e", lambda m: m.i0e, (np.array([-3.0, -1e-9, 0.5, 10.0], f32),)),
    ("i1e", lambda m: m.i1e, (np.array([-3.0, -1e-9, 0.5, 10.0], f32),)),
    ("gammainc", lambda m: m.gammainc, (np.array([0.5, 2, 5, 10], f32),
                                        np.array([0.3, 3, 2, 12], f32))),
    ("gammaincc", lambda m: m.gammaincc, (np.array([0.5, 2, 5, 10], f32),
                                          np.array([0.3, 3, 2, 12], f32))),
    ("logsumexp", lambda m: lambda a, b: m.logsumexp(a, axis=1, b=b),
     (LSE[[0, 2, 4]], np.abs(LSE_B[[0, 2, 4]]))),
    ("softmax", lambda m: lambda x: m.softmax(x, axis=1) * np.arange(4, dtype=f32),
     (LSE[[0, 4]],)),
]


LOOPS = ("gammainc", "gammaincc")  # while_loops: slow to compile, run under jit only


@pytest.mark.parametrize("name, get, args", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
@pytest.mark.parametrize("use_jit", [False, True], ids=["eager", "jit"])
def test_gradient_matches_jax(name, get, args, use_jit):
    if name in LOOPS and not use_jit:
        pytest.skip("covered under jit (the eager run compiles the same loops again)")
    argnums = tuple(range(len(args)))
    ours = stablejit.grad(lambda *xs: snp.sum(get(special)(*xs)), argnums=argnums)
    if use_jit:
        ours = stablejit.jit(ours)
    theirs = jax.grad(lambda *xs: jnp.sum(get(jsp)(*xs)), argnums=argnums)
    for g, e in zip(ours(*args), theirs(*args), strict=True):
        np.testing.assert_allclose(g.numpy(), np.asarray(e), rtol=2e-5, atol=1e-6,
                                   err_msg=name)


def test_betainc_gradient_in_x_is_exact_and_in_a_b_close():
    a, b, x = np.array([2.0, 5.0], f64), np.array([3.0, 1.5], f64), np.array([0.3, 0.8], f64)
    ours = stablejit.grad(lambda *v: snp.sum(special.betainc(*v)), argnums=(0, 1, 2))(a, b, x)
    with jax.enable_x64(True):
        gx = jax.grad(lambda x: jnp.sum(jsp.betainc(a, b, x)))(x)
        eps = 1e-6  # jax has no derivative in a, b: compare with a finite difference
        ga = (jsp.betainc(a + eps, b, x) - jsp.betainc(a - eps, b, x)) / (2 * eps)
        gb = (jsp.betainc(a, b + eps, x) - jsp.betainc(a, b - eps, x)) / (2 * eps)
    np.testing.assert_allclose(ours[2].numpy(), gx, rtol=1e-12)
    np.testing.assert_allclose(ours[0].numpy(), ga, rtol=1e-6)
    np.testing.assert_allclose(ours[1].numpy(), gb, rtol=1e-6)


def test_the_namespace_is_reachable_from_the_package():
    assert stablejit.scipy.special.erf is special.erf
    assert set(special.__all__) <= set(dir(jsp)), set(special.__all__) - set(dir(jsp))


@pytest.mark.parametrize("fn", [special.erf, special.erfc, special.gammaln, special.xlogy])
def test_complex_input_is_rejected_with_advice(fn):
    args = (np.ones(2, np.complex64),) * (2 if fn is special.xlogy else 1)
    with pytest.raises(TypeError, match=r"real tensors only.*real part"):
        fn(*args)


@pytest.mark.parametrize("fn", [special.ndtr, special.ndtri, special.log_ndtr])
def test_normal_functions_take_float32_and_float64_only(fn):
    with pytest.raises(TypeError, match="float16 is not supported"):
        fn(np.ones(2, np.float16))


def test_log_ndtr_series_order_is_checked():
    with pytest.raises(ValueError, match=r"\[0, 30\]"):
        special.log_ndtr(1.0, series_order=31)


def test_python_scalars_and_integers_give_the_default_float():
    assert special.erf(1).dtype == stablejit.numpy.float32
    assert special.erfc(np.arange(3, dtype=np.int64)).dtype == stablejit.numpy.float32
    np.testing.assert_allclose(float(special.erf(1)), 0.8427007929497149, rtol=1e-6)
