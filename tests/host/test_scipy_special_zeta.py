"""scipy.special.zeta (Hurwitz, two arguments) and polygamma against SciPy over a table
with the special values (poles, x < 1, infinities, nan, negative q), in float32 and
float64, under jit, eagerly and on the reference backend; against jax where jax agrees
with SciPy (finite x > 1, q > 0), with the derivatives in x and q (grad) and vmap."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import jax.scipy.special as jsp
import numpy as np
import pytest
import scipy.special as sp
import stablejit
import stablejit.numpy as snp
import stablejit.scipy.special as ss

from tests.support.compare import assert_close
from tests.support.runners import run_three_ways

ZETA = [  # (x, q)
    (1.0, 1.0), (0.5, 1.0), (0.0, 1.0), (2.0, 0.0), (2.0, -1.0), (2.0, -1.5), (3.0, -1.5),
    (2.5, -1.5), (2.0, np.inf), (np.inf, 2.0), (np.inf, 1.0), (np.inf, 0.5),
    (np.nan, 1.0), (2.0, np.nan), (2.0, 1e-3), (30.0, 0.5), (1.5, 0.1), (4.0, 2.5),
    (2.0, 100.0), (7.5, 1e4), (50.0, 1.2), (3.0, 1e-6), (1.25, 1.0), (2.0, 1.0),
    (10.0, 3.0), (1.1, 7.0)]
X = np.array([z[0] for z in ZETA])
Q = np.array([z[1] for z in ZETA])
POSITIVE = np.isfinite(X) & np.isfinite(Q) & (X > 1) & (Q > 0)


@pytest.mark.parametrize("dtype,rtol", [(np.float32, 2e-5), (np.float64, 1e-13)])
def test_zeta_matches_scipy(dtype, rtol):
    x, q = X.astype(dtype), Q.astype(dtype)
    with np.errstate(all="ignore"):
        want = sp.zeta(x.astype(np.float64), q.astype(np.float64)).astype(dtype)
    with stablejit.experimental.enable_x64():
        got = run_three_ways(ss.zeta, x, q)
    for path, out in got.items():
        assert out.dtype == dtype
        assert_close(out, want, rtol=rtol, atol=0, msg=f"zeta via {path}")


def test_zeta_riemann_and_jax():
    with jax.enable_x64(True):
        want = np.asarray(jsp.zeta(X[POSITIVE], Q[POSITIVE]))
    with stablejit.experimental.enable_x64():
        got = np.asarray(ss.zeta(X[POSITIVE], Q[POSITIVE]))
        riemann = np.asarray(ss.zeta(np.array([2.0, 4.0])))
    assert_close(got, want, rtol=1e-12, atol=0, msg="zeta against jax")
    assert_close(riemann, np.array([np.pi ** 2 / 6, np.pi ** 4 / 90]), rtol=1e-14, atol=0)


@pytest.mark.parametrize("argnums", [0, 1], ids=["in x", "in q"])
def test_zeta_grad_and_vmap_match_jax(argnums):
    """The derivative in q is -x zeta(x + 1, q); in x, -sum ln(k + q) (k + q)^-x through
    the summation (it was 0: the x tangent was dropped)."""
    x, q = X[POSITIVE].astype(np.float32), Q[POSITIVE].astype(np.float32)
    keep = q < 50  # beyond, jax's float32 tail and ours differ in the last bits only
    x, q = x[keep], q[keep]
    want = np.asarray(jax.vmap(jax.grad(jsp.zeta, argnums=argnums))(x, q))
    assert np.all(want != 0)
    grad = stablejit.vmap(stablejit.grad(ss.zeta, argnums=argnums))
    got = grad(snp.asarray(x), snp.asarray(q))
    assert_close(np.asarray(got), want, rtol=5e-5, atol=0, msg="vmap(grad zeta)")
    got_jit = stablejit.jit(grad)(x, q)
    assert_close(np.asarray(got_jit), want, rtol=5e-5, atol=0, msg="jit vmap grad")


POLY_N = np.array([0, 1, 2, 3, 1.5, -1, 1, 4, 0, 2, 5, 1], np.float64)
POLY_X = np.array([0.5, 2.0, 3.0, -1.5, 1.0, 1.0, 0.0, 0.25, 7.0, 30.0, 1.5, -2.0])


@pytest.mark.parametrize("dtype,rtol", [(np.float32, 5e-5), (np.float64, 1e-11)])
def test_polygamma_matches_scipy(dtype, rtol):
    n, x = POLY_N.astype(dtype), POLY_X.astype(dtype)
    with np.errstate(all="ignore"):
        want = sp.polygamma(POLY_N, x.astype(np.float64)).astype(dtype)
    with stablejit.experimental.enable_x64():
        got = run_three_ways(ss.polygamma, n, x)
    for path, out in got.items():
        assert_close(out, want, rtol=rtol, atol=1e-6 if dtype == np.float32 else 1e-12,
                     msg=f"polygamma via {path}")


def test_polygamma_grad_matches_jax():
    n = jnp.asarray([1, 2, 3], jnp.int32)
    x = np.array([0.5, 2.0, 4.5], np.float32)
    want = np.asarray(jax.grad(lambda v: jnp.sum(jsp.polygamma(n, v)))(x))
    got = stablejit.grad(lambda v: snp.sum(ss.polygamma(np.array([1, 2, 3]), v)))(
        snp.asarray(x))
    assert_close(np.asarray(got), want, rtol=5e-5, atol=0, msg="grad polygamma")


RIEMANN = np.concatenate([[-200.0, -171.5, -50.5, -21.0, -20.0, -2.5, -1.0, -0.5, 0.0, 1e-8,
                           0.5, 0.999, 0.9999, 1.0, 1.001, 2.0, 50.0, np.inf, -np.inf,
                           np.nan], np.linspace(-40, 40, 161)])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_riemann_zeta_of_one_argument_is_scipys_for_every_x(dtype):
    """zeta(x) with q None is Riemann's, continued below 1 as SciPy's one-argument zeta
    (zeta(0) = -1/2, 0 at the negative even integers); it was the Hurwitz sum at q = 1,
    NaN below 1."""
    x = RIEMANN.astype(dtype)
    want = sp.zeta(x)
    rtol = 2e-5 if dtype == np.float32 else 1e-11
    for path, got in run_three_ways(ss.zeta, x).items():
        assert got.dtype == want.dtype, path
        assert_close(got, want, rtol=rtol, atol=1e-30, msg=f"Riemann zeta via {path}")
