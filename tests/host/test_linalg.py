"""stablejit.numpy.linalg and the linalg primitives, three ways (jit, eager XLA,
reference) against NumPy, checking invariants where factors are not unique; gradients
against jax.grad."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp

from tests.support.compare import assert_close
from tests.support.runners import run_three_ways

TOL = {np.float32: 2e-4, np.float64: 1e-10, np.complex64: 2e-4, np.complex128: 1e-10}
DTYPES = list(TOL)


def _mat(dtype, shape, rng, spd=False):
    a = rng.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        a = a + 1j * rng.standard_normal(shape)
    a = a.astype(dtype)
    if spd:
        a = (a @ np.conj(np.swapaxes(a, -1, -2)) + shape[-1] * np.eye(shape[-1])).astype(dtype)
    return a


def _h(x):
    return np.conj(np.swapaxes(x, -1, -2))


@pytest.mark.parametrize("dtype", DTYPES)
def test_factorisations_reconstruct_three_ways(dtype):
    rng = np.random.default_rng(0)
    a = _mat(dtype, (2, 4, 3), rng)
    h = _mat(dtype, (2, 3, 3), rng, spd=True)
    tol = TOL[dtype] * 10

    def f(a, h):
        q, r = snp.linalg.qr(a)
        u, s, vh = snp.linalg.svd(a, full_matrices=False)
        w, v = snp.linalg.eigh(h)
        return q, r, u, s, vh, w, v, snp.linalg.cholesky(h)

    for path, (q, r, u, s, vh, w, v, l) in run_three_ways(f, a, h).items():
        assert_close(q @ r, a, atol=tol, rtol=tol, msg=path)
        assert_close(np.triu(r), r, msg=path)
        assert_close((u * s[..., None, :]) @ vh, a, atol=tol, rtol=tol, msg=path)
        assert_close(s, np.linalg.svd(a, compute_uv=False), atol=tol, rtol=tol, msg=path)
        assert_close(w, np.linalg.eigvalsh(h), atol=tol * 10, rtol=tol, msg=path)
        assert_close((v * w[..., None, :]) @ _h(v), h, atol=tol * 10, rtol=tol, msg=path)
        assert_close(l, np.linalg.cholesky(h), atol=tol * 10, rtol=tol, msg=path)


@pytest.mark.parametrize("dtype", [np.float32, np.complex128])
def test_solve_inv_det_slogdet_three_ways(dtype):
    rng = np.random.default_rng(1)
    a = _mat(dtype, (2, 4, 4), rng)
    b = _mat(dtype, (2, 4, 2), rng)
    tol = TOL[dtype] * 50

    def f(a, b):
        s, ld = snp.linalg.slogdet(a)
        return snp.linalg.solve(a, b), snp.linalg.inv(a), snp.linalg.det(a), s, ld

    for path, (x, ai, d, s, ld) in run_three_ways(f, a, b).items():
        assert_close(x, np.linalg.solve(a, b), atol=tol, rtol=tol, msg=path)
        assert_close(ai, np.linalg.inv(a), atol=tol, rtol=tol, msg=path)
        assert_close(d, np.linalg.det(a), atol=tol, rtol=tol, msg=path)
        es, eld = np.linalg.slogdet(a)
        assert_close(s, es, atol=tol, rtol=tol, msg=path)
        assert_close(ld, eld, atol=tol, rtol=tol, msg=path)


def test_lu_pivots_and_permutation_match_the_reference():
    rng = np.random.default_rng(2)
    a = _mat(np.float64, (3, 5, 4), rng)
    outs = run_three_ways(lambda a: snp.linalg.lu_factor(a), a)
    lu, piv, perm = outs["reference"]
    for path, (lu2, piv2, perm2) in outs.items():
        np.testing.assert_array_equal(piv2, piv, err_msg=path)
        np.testing.assert_array_equal(perm2, perm, err_msg=path)
        assert_close(lu2, lu, atol=1e-12, rtol=1e-12, msg=path)
    l = np.tril(lu[..., :, :4], -1) + np.eye(5, 4)
    u = np.triu(lu[..., :4, :])
    assert_close(np.take_along_axis(a, perm[..., None], -2), l @ u, atol=1e-12, rtol=1e-12)


def test_norms_trace_and_products():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((3, 4)).astype(np.float32)
    v = rng.standard_normal((3,)).astype(np.float32)
    w = rng.standard_normal((3,)).astype(np.float32)

    def f(a, v, w):
        L = snp.linalg
        return (L.norm(a), L.norm(a, "nuc"), L.norm(a, 2), L.norm(a, 1), L.norm(a, np.inf),
                L.vector_norm(v, ord=3), L.trace(a), L.diagonal(a, 1), L.cross(v, w),
                L.matrix_rank(a), L.pinv(a), L.matrix_power(a[:, :3], 3))

    expected = (np.linalg.norm(a), np.linalg.norm(a, "nuc"), np.linalg.norm(a, 2),
                np.linalg.norm(a, 1), np.linalg.norm(a, np.inf), np.linalg.norm(v, 3),
                np.trace(a), np.diagonal(a, 1), np.cross(v, w), np.linalg.matrix_rank(a),
                np.linalg.pinv(a), np.linalg.matrix_power(a[:, :3], 3))
    for path, outs in run_three_ways(f, a, v, w).items():
        for got, want in zip(outs, expected, strict=True):
            assert_close(got, want, atol=1e-4, rtol=1e-4, check_dtype=False, msg=path)


def test_not_positive_definite_gives_nan_and_bad_shapes_raise():
    x = np.array([[1.0, 2.0], [2.0, 1.0]], np.float32)
    assert np.isnan(np.asarray(snp.linalg.cholesky(x))).all()
    with pytest.raises(ValueError, match="square"):
        snp.linalg.eigh(np.ones((2, 3), np.float32))
    with pytest.raises(stablejit.ShapeError, match="rows"):
        snp.linalg.triangular_solve(np.eye(3, dtype=np.float32), np.ones((2, 1), np.float32))


def _grad_pair(sj_f, jax_f, *args):
    g = stablejit.grad(sj_f, argnums=tuple(range(len(args))))(*args)
    jg = jax.grad(jax_f, argnums=tuple(range(len(args))))(*args)
    return g, jg


def test_gradients_match_jax():
    rng = np.random.default_rng(4)
    a = rng.standard_normal((4, 4))
    h = a @ a.T + 4 * np.eye(4)
    b = rng.standard_normal((4, 2))
    t = rng.standard_normal((4, 3))
    cases = [
        (lambda h: snp.sum(snp.linalg.cholesky(h) ** 2),
         lambda h: jnp.sum(jnp.linalg.cholesky(h) ** 2), (h,)),
        (lambda h: snp.sum(snp.linalg.eigh(h)[1] ** 4) + snp.sum(snp.linalg.eigh(h)[0] ** 2),
         lambda h: jnp.sum(jnp.linalg.eigh(h)[1] ** 4) + jnp.sum(jnp.linalg.eigh(h)[0] ** 2),
         (h,)),
        (lambda a, b: snp.sum(snp.linalg.solve(a, b) ** 2),
         lambda a, b: jnp.sum(jnp.linalg.solve(a, b) ** 2), (a, b)),
        (lambda t: snp.sum(snp.linalg.qr(t)[0] ** 3) + snp.sum(snp.linalg.qr(t)[1] ** 2),
         lambda t: jnp.sum(jnp.linalg.qr(t)[0] ** 3) + jnp.sum(jnp.linalg.qr(t)[1] ** 2),
         (t,)),
        (lambda t: snp.sum(snp.linalg.svdvals(t) ** 2),
         lambda t: jnp.sum(jnp.linalg.svd(t, compute_uv=False) ** 2), (t,)),
        (lambda a, b: snp.sum(snp.linalg.triangular_solve(a, b, lower=False) ** 2),
         lambda a, b: jnp.sum(jax.scipy.linalg.solve_triangular(a, b, lower=False) ** 2),
         (a + 4 * np.eye(4), b)),
    ]
    for f, jf, args in cases:  # float32: jax runs without x64
        g, jg = _grad_pair(f, jf, *[np.asarray(x, np.float32) for x in args])
        for x, y in zip(g, jg, strict=True):
            assert_close(np.asarray(x), np.asarray(y), atol=2e-3, rtol=2e-3)


def test_factorisations_return_named_tuples():
    # the array API names the fields: eigh, qr, slogdet and svd
    a = _mat(np.float32, (3, 3), np.random.default_rng(3), spd=True)
    L = snp.linalg
    assert L.eigh(a)._fields == ("eigenvalues", "eigenvectors")
    assert L.qr(a)._fields == ("Q", "R")
    assert L.slogdet(a)._fields == ("sign", "logabsdet")
    res = L.svd(a)
    assert res._fields == ("U", "S", "Vh")
    assert_close(res.S, np.linalg.svd(a).S, atol=1e-4, rtol=1e-4)
    w = stablejit.jit(lambda a: L.eigh(a))(a)
    assert_close(w.eigenvalues, np.linalg.eigh(a).eigenvalues, atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("shape", [(0, 0), (2, 0, 0)])
def test_empty_square_matrices_match_numpy(shape):
    # the LU lowering could not slice an empty pivot vector: inv/det/slogdet/solve of 0x0
    a = np.zeros(shape, np.float32)
    L = snp.linalg
    assert_close(L.inv(a), np.linalg.inv(a))
    assert_close(L.det(a), np.linalg.det(a))
    sign, logabs = L.slogdet(a)
    assert_close(sign, np.linalg.slogdet(a).sign)
    assert_close(logabs, np.linalg.slogdet(a).logabsdet)
    assert_close(L.solve(a, a), np.linalg.solve(a, a))


@pytest.mark.parametrize("shape", [(2, 3, 0), (0, 2), (0, 2, 0)])
@pytest.mark.parametrize("full", [True, False])
def test_svd_and_pinv_of_empty_matrices_match_numpy(shape, full):
    a = np.zeros(shape, np.float32)
    got, want = snp.linalg.svd(a, full_matrices=full), np.linalg.svd(a, full_matrices=full)
    for g, w in zip(got, want, strict=True):
        assert_close(g, w.astype(np.float32))
    assert_close(snp.linalg.svdvals(a), np.linalg.svd(a, compute_uv=False).astype(np.float32))
    assert_close(snp.linalg.pinv(a), np.linalg.pinv(a).astype(np.float32))


def test_pinv_takes_one_rtol_per_matrix():
    a = np.random.default_rng(4).standard_normal((3, 4, 2)).astype(np.float32)
    rtol = np.array([0.1, 0.9, 0.01], np.float32)
    assert_close(snp.linalg.pinv(a, rtol=snp.asarray(rtol)), np.linalg.pinv(a, rtol=rtol),
                 atol=1e-5, rtol=1e-5)


def test_solve_promotes_both_operands():
    a = np.eye(2, dtype=np.complex64) * 2
    b = np.full((2, 2), 1 + 1e-12j, np.complex128)
    got = snp.linalg.solve(a, b)
    assert np.asarray(got).dtype == np.complex128
    assert_close(got, np.linalg.solve(a, b))


def test_vecdot_dtype_axis_and_shape_check_match_numpy():
    u8 = np.array([200, 100], np.uint8)
    assert_close(snp.vecdot(u8, np.array([2, 1], np.uint8)), np.vecdot(u8, np.array([2, 1],
                                                                                     np.uint8)))
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    y = np.arange(12, dtype=np.float32).reshape(2, 2, 3)
    assert_close(snp.linalg.vecdot(x, y), np.vecdot(x, y))
    assert_close(snp.vecdot(y, y, axis=0), np.vecdot(y, y, axis=0))
    c = np.array([1 + 2j, 3j], np.complex64)
    assert_close(snp.vecdot(c, c * 2), np.vecdot(c, c * 2))
    with pytest.raises(ValueError, match="contracted axis does not broadcast"):
        snp.vecdot(np.ones((1, 3)), np.ones((3, 1)))


@pytest.mark.parametrize("shape", [(0, 2, 3), (2, 0, 3), (2, 3, 0), (0, 0), (3, 0), (4, 3),
                                   (2, 4, 3), (3, 2, 2)])
def test_matrix_rank_of_empty_matrices_and_per_matrix_tolerances_matches_numpy(shape):
    """Found by the conformance suite at 300 examples: an empty matrix has rank 0 (we
    raised), and a tolerance per matrix of a stack broadcasts against that matrix's
    singular values (we broadcast it against the wrong axis)."""
    a = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    if a.ndim == 3 and a.size:
        a[0, :, 1:] = 0  # a rank-1 matrix in the stack
    per = np.full(shape[:-2], 0.5, np.float32)
    for kw in [{}, {"rtol": 0.1}, {"rtol": per}, {"tol": 0.5}, {"tol": per}]:
        got = snp.linalg.matrix_rank(snp.asarray(a), **kw)
        want = np.linalg.matrix_rank(a, **kw)
        assert np.asarray(got).shape == np.shape(want)
        np.testing.assert_array_equal(np.asarray(got), want, err_msg=str(kw))


def test_tensorinv_and_tensorsolve_errors_name_the_shapes():
    with pytest.raises(ValueError, match=r"first 2 axes \(2, 3\) hold 6 elements"):
        snp.linalg.tensorinv(snp.ones((2, 3, 5)))
    with pytest.raises(ValueError, match="leading axes"):
        snp.linalg.tensorsolve(snp.ones((2, 3, 6)), snp.ones((3, 2)))
    a = np.random.default_rng(1).standard_normal((2, 3, 6))
    x = snp.linalg.tensorsolve(snp.asarray(a), snp.ones((2, 3), snp.float64))
    np.testing.assert_allclose(np.tensordot(a, np.asarray(x), 1), np.ones((2, 3)), atol=1e-10)
