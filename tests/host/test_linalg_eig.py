"""stablejit.numpy.linalg.eig and eigvals (general matrices) against jax.numpy.linalg's:
eigenvalues as sorted multisets, eigenvectors by A v = v w (they are unique only up to
a phase), under jit and eagerly, batched; the geev call only on the host."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp
from stablejit.compiler.ir import Attrs
from stablejit.compiler.primitives import linalg as la
from stablejit.compiler.primitives.linalg import UnsupportedPlatformError
from stablejit.dispatch import bind

TOL = {np.float32: 1e-4, np.float64: 1e-11, np.complex64: 1e-4, np.complex128: 1e-11}
DTYPES = list(TOL)


def _mat(dtype, shape, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dtype)


def _sorted(w):
    """Eigenvalues of each matrix as a multiset: sorted by rounded (real, imag)."""
    w = np.asarray(w)
    key = np.round(w.real, 5) + 1j * np.round(w.imag, 5)
    return np.take_along_axis(w, np.argsort(key, axis=-1), axis=-1)


def _jax_eig(a):
    with jax.enable_x64(True):
        w, v = jnp.linalg.eig(a)
        return np.asarray(w), np.asarray(v)


def _check(a, w, v, dtype, jw):
    tol = TOL[dtype] * max(1.0, float(np.abs(a).max())) * a.shape[-1]
    w, v = np.asarray(w), np.asarray(v)
    complex_dtype = np.result_type(dtype, np.complex64)
    assert w.dtype == complex_dtype and v.dtype == complex_dtype
    assert w.shape == a.shape[:-1] and v.shape == a.shape
    np.testing.assert_allclose(_sorted(w), _sorted(jw), atol=tol, rtol=tol)
    av = np.asarray(a).astype(complex_dtype) @ v
    np.testing.assert_allclose(av, v * w[..., None, :], atol=tol, rtol=0)
    np.testing.assert_allclose(np.linalg.norm(v, axis=-2), 1.0, atol=tol)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(5, 5), (3, 4, 4), (2, 2, 3, 3)])
def test_eig_matches_jax_under_jit_and_eagerly(dtype, shape):
    a = _mat(dtype, shape)
    jw, jv = _jax_eig(a)
    _check(a, *stablejit.jit(snp.linalg.eig)(a), dtype, jw)
    w, v = snp.linalg.eig(a)
    _check(a, w, v, dtype, jw)
    assert isinstance(snp.linalg.eig(a), snp.linalg.EigResult)


@pytest.mark.parametrize("dtype", DTYPES)
def test_eigvals_matches_jax(dtype):
    a = _mat(dtype, (3, 6, 6), seed=1)
    with jax.enable_x64(True):
        jw = np.asarray(jnp.linalg.eigvals(a))
    tol = TOL[dtype] * 60
    for w in (stablejit.jit(snp.linalg.eigvals)(a), snp.linalg.eigvals(a)):
        assert np.asarray(w).dtype == np.result_type(dtype, np.complex64)
        np.testing.assert_allclose(_sorted(w), _sorted(jw), atol=tol, rtol=tol)


def test_eig_of_known_matrices():
    """A rotation has eigenvalues +-i; a triangular matrix its diagonal; integers are
    converted to float32 first."""
    rot = np.array([[0.0, -1.0], [1.0, 0.0]])
    np.testing.assert_allclose(_sorted(snp.linalg.eigvals(rot)), [-1j, 1j], atol=1e-6)
    tri = np.triu(np.arange(1, 10).reshape(3, 3))
    w = snp.linalg.eigvals(tri)
    assert np.asarray(w).dtype == np.complex64
    np.testing.assert_allclose(_sorted(w), [1, 5, 9], atol=1e-5)


def test_eig_under_vmap_matches_the_batched_call():
    a = _mat(np.float64, (4, 3, 3), seed=2)
    w = stablejit.vmap(snp.linalg.eigvals)(a)
    np.testing.assert_allclose(_sorted(w), _sorted(snp.linalg.eigvals(a)), atol=1e-12)


def test_left_eigenvectors_of_the_primitive_match_jax():
    a = _mat(np.float64, (2, 4, 4), seed=3)
    attrs = Attrs({"compute_left_eigenvectors": True, "compute_right_eigenvectors": True})
    w, vl, vr = stablejit.jit(lambda x: bind(la.eig, (snp.asarray(x),), attrs))(a)
    with jax.enable_x64(True):
        jw, jvl, jvr = (np.asarray(r) for r in jax.lax.linalg.eig(a))
    # the same LAPACK routine on the same matrix: the same order and phases
    np.testing.assert_allclose(np.asarray(w), jw, atol=1e-12)
    np.testing.assert_allclose(np.asarray(vl), jvl, atol=1e-12)
    np.testing.assert_allclose(np.asarray(vr), jvr, atol=1e-12)
    # vl^H A = w vl^H
    lhs = np.conj(np.swapaxes(np.asarray(vl), -1, -2)) @ a
    np.testing.assert_allclose(lhs, np.asarray(w)[..., :, None] *
                               np.conj(np.swapaxes(np.asarray(vl), -1, -2)), atol=1e-12)


def test_eig_on_tpu_raises_an_error_naming_the_platform():
    with pytest.raises(UnsupportedPlatformError, match="eig is not implemented for 'tpu'"):
        stablejit.jit(snp.linalg.eig).lower(np.eye(3, dtype=np.float32), platform="tpu")


@pytest.mark.parametrize("platform,prefix", [("cuda", "cu"), ("rocm", "hip")])
@pytest.mark.parametrize("dtype,kind", [(np.float32, "real"), (np.complex128, "comp")])
def test_eig_on_gpus_calls_the_plugins_hybrid_kernels(platform, prefix, dtype, kind):
    """As jax: the GPU plugin's LAPACK geev behind device copies (tests/lowering compares
    the whole call with jax's lowering; an H200 run said 'eig is not implemented for
    cuda' before)."""
    text = stablejit.jit(snp.linalg.eig).lower(np.eye(3, dtype=dtype),
                                               platform=platform).as_text()
    assert f'call_target_name = "{prefix}hybrid_eig_{kind}"' in text


def test_eig_rejects_bad_operands_and_eigenvector_gradients():
    with pytest.raises(ValueError, match="square"):
        snp.linalg.eig(np.ones((2, 3)))
    with pytest.raises(NotImplementedError, match="through eig's eigenvectors"):
        stablejit.grad(lambda a: snp.linalg.eig(a)[1].real.sum())(np.eye(3))


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_eigenvalue_gradients_match_jax(dtype):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((2, 4, 4)).astype(np.float32)
    if dtype == np.complex64:
        a = (a + 1j * rng.standard_normal((2, 4, 4))).astype(dtype)

    def f(xp):
        return lambda m: (xp.abs(xp.linalg.eigvals(m)) ** 2).sum()
    want = jax.grad(f(jnp))(a)
    for run in (stablejit.grad(f(snp)), stablejit.jit(stablejit.grad(f(snp)))):
        np.testing.assert_allclose(np.asarray(run(snp.asarray(a))), want, rtol=1e-4,
                                   atol=1e-4)


def test_poly_of_a_matrix_is_its_characteristic_polynomial_as_in_jax():
    a = np.array([[1.0, 2.0, 0.0], [3.0, 4.0, 1.0], [0.0, 1.0, 2.0]])
    with jax.enable_x64(True):
        want = np.asarray(jnp.poly(a))
    got = np.asarray(stablejit.jit(snp.poly)(a))
    assert got.dtype == want.dtype == np.complex128
    np.testing.assert_allclose(got, want, atol=1e-12)
