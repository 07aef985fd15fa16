"""stablejit.scipy.signal (convolve, correlate, fftconvolve, convolve2d, correlate2d)
and stablejit.scipy.integrate.trapezoid against SciPy in float64, over modes, methods,
shapes where either input is the larger (and neither), real and complex inputs; and
against jax.scipy.signal in float32, eagerly and under jit."""

import itertools

import jax
import jax.scipy.signal as jsignal
import numpy as np
import pytest
import scipy.integrate
import scipy.signal
import stablejit
import stablejit.numpy as snp
from stablejit.scipy import integrate, signal

SHAPES = [((7,), (3,)), ((6,), (4,)), ((3,), (7,)), ((4,), (6,)), ((5, 6), (2, 3)),
          ((4, 4), (3, 2)), ((2, 3), (5, 6)), ((5, 5), (5, 5)), ((6, 5), (2, 2)),
          ((3, 4, 5), (2, 2, 3))]
CASES = [(a, b, c) for (a, b), c in itertools.product(SHAPES, [False, True])]


def _inputs(s1, s2, cplx, rng):
    a, b = rng.standard_normal(s1), rng.standard_normal(s2)
    if cplx:
        a, b = a + 1j * rng.standard_normal(s1), b - 1j * rng.standard_normal(s2)
    return a, b


def _check(ours, theirs, *args, **kw):
    try:
        want = theirs(*args, **kw)
    except ValueError:
        with pytest.raises(ValueError, match="valid"):
            ours(*args, **kw)
        return
    got = np.asarray(ours(*args, **kw))
    assert got.shape == want.shape and got.dtype == want.dtype, kw
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9, err_msg=str(kw))


@pytest.mark.parametrize("s1,s2,cplx", CASES, ids=str)
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_matches_scipy(s1, s2, cplx, mode):
    a, b = _inputs(s1, s2, cplx, np.random.default_rng(len(s1) + 10 * cplx))
    for name in ("convolve", "correlate"):
        for method in ("direct", "fft", "auto"):
            _check(getattr(signal, name), getattr(scipy.signal, name), a, b, mode=mode,
                   method=method)
    _check(signal.fftconvolve, scipy.signal.fftconvolve, a, b, mode=mode)
    if len(s1) == 2:
        for name in ("convolve2d", "correlate2d"):
            _check(getattr(signal, name), getattr(scipy.signal, name), a, b, mode=mode)


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_fftconvolve_over_some_axes_matches_scipy(mode):
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((4, 6)), rng.standard_normal((4, 3))
    _check(signal.fftconvolve, scipy.signal.fftconvolve, a, b, mode=mode, axes=[1])


@pytest.mark.parametrize("name", ["convolve", "correlate", "convolve2d", "correlate2d",
                                  "fftconvolve"])
def test_float32_matches_jax_eagerly_and_under_jit(name):
    rng = np.random.default_rng(2)
    a = rng.standard_normal((6, 5)).astype(np.float32)
    b = rng.standard_normal((3, 2)).astype(np.float32)
    for mode in ("full", "same", "valid"):
        want = np.asarray(getattr(jsignal, name)(a, b, mode=mode))
        f = getattr(signal, name)
        for got in (f(a, b, mode=mode), stablejit.jit(lambda x, y, m=mode, f=f: f(x, y, mode=m))(
                snp.asarray(a), snp.asarray(b))):
            assert got.dtype == snp.float32
            np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)


def test_integers_become_the_default_float_and_errors_are_clear():
    assert signal.convolve(np.arange(3), np.arange(2)).dtype == snp.float32
    with pytest.raises(ValueError, match="mode must be one of"):
        signal.convolve(np.ones(3), np.ones(2), mode="wrap")
    with pytest.raises(ValueError, match="same number of dimensions"):
        signal.convolve(np.ones(3), np.ones((2, 2)))
    with pytest.raises(ValueError, match="at least as large"):
        signal.convolve(np.ones((3, 1)), np.ones((1, 3)), mode="valid")
    with pytest.raises(NotImplementedError, match="boundary='fill'"):
        signal.convolve2d(np.ones((3, 3)), np.ones((2, 2)), boundary="wrap")


def test_gradients_of_convolve_match_jax():
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal(7).astype(np.float32), rng.standard_normal(3).astype(np.float32)
    got = stablejit.grad(lambda x: snp.sum(signal.convolve(x, b, mode="same") ** 2))(
        snp.asarray(a))
    want = jax.grad(lambda x: (jsignal.convolve(x, b, mode="same") ** 2).sum())(a)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("kw", [{}, {"dx": 0.5}, {"x": np.array([0.0, 1.0, 3.0, 4.5])},
                                {"axis": 0}])
def test_trapezoid_matches_scipy(kw):
    y = np.arange(12.0).reshape(3, 4) ** 2
    if kw.get("axis") == 0:
        y = y.T
    np.testing.assert_allclose(np.asarray(integrate.trapezoid(y, **kw)),
                               scipy.integrate.trapezoid(y, **kw), rtol=1e-12)
