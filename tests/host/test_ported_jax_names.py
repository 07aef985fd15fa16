"""JAX names a ported program calls that have no numpy counterpart: lax's special
functions (lgamma ... exp2), lax.linalg (JAX's signatures and result orders), split,
reduce_xor, approx_max_k / approx_min_k, optimization_barrier — each against jax.lax,
eagerly and under jit, over dtypes and options — and the top-level names
(checkpoint_policies, NamedSharding, P, make_mesh)."""

import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp
from stablejit import lax

TOL = {np.float32: 3e-5, np.float64: 1e-11, np.complex64: 3e-5, np.complex128: 1e-11}


def _both(f, *args):
    """f's results eagerly and under jit (they must agree), as NumPy arrays."""
    eager = jax.tree_util.tree_map(np.asarray, f(*args))
    jitted = jax.tree_util.tree_map(np.asarray, stablejit.jit(f)(*args))
    jax.tree_util.tree_map(lambda a, b: np.testing.assert_allclose(a, b, rtol=1e-6,
                                                                   atol=1e-6), eager, jitted)
    return eager


def _jax(f, *args):
    with jax.enable_x64(True):
        return jax.tree_util.tree_map(np.asarray, f(*[jnp.asarray(a) for a in args]))


# name, positive inputs per operand (broadcast together), jax's function
SPECIAL = [
    ("lgamma", [[0.5, 1.0, 3.5, 10.0, 0.01]], jax.lax.lgamma),
    ("digamma", [[0.5, 1.0, 3.5, 10.0, 0.01]], jax.lax.digamma),
    ("igamma", [[0.5, 1.0, 3.5, 2.0, 7.0], [0.3, 1.0, 2.0, 5.0, 6.0]], jax.lax.igamma),
    ("igammac", [[0.5, 1.0, 3.5, 2.0, 7.0], [0.3, 1.0, 2.0, 5.0, 6.0]], jax.lax.igammac),
    ("polygamma", [[0.0, 1.0, 2.0, 3.0, 1.0], [0.5, 1.5, 2.5, 4.0, 9.0]], jax.lax.polygamma),
    ("zeta", [[2.0, 3.0, 4.5, 2.5, 6.0], [1.0, 0.5, 2.0, 3.0, 1.5]], jax.lax.zeta),
    ("betainc", [[0.5, 1.0, 2.0, 3.0, 5.0], [0.5, 2.0, 3.0, 1.0, 4.0],
                 [0.1, 0.5, 0.3, 0.9, 0.6]], jax.lax.betainc),
    ("bessel_i0e", [[0.0, 0.5, -1.0, 3.0, 20.0]], jax.lax.bessel_i0e),
    ("bessel_i1e", [[0.0, 0.5, -1.0, 3.0, 20.0]], jax.lax.bessel_i1e),
    ("exp2", [[0.0, 0.5, -1.0, 3.0, 10.0]], jax.lax.exp2),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name,inputs,oracle", SPECIAL, ids=[c[0] for c in SPECIAL])
def test_special_functions_match_jax(name, inputs, oracle, dtype):
    args = [np.asarray(v, dtype) for v in inputs]
    got = _both(getattr(lax, name), *args)
    want = _jax(oracle, *args)
    assert got.dtype == dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=TOL[dtype] * 10, atol=TOL[dtype])


@pytest.mark.parametrize("name", [c[0] for c in SPECIAL])
def test_special_functions_keep_lax_operand_rules(name):
    arity = len(next(c[1] for c in SPECIAL if c[0] == name))
    f = getattr(lax, name)
    with pytest.raises(TypeError, match=f"lax.{name}.*floating-point"):
        f(*[snp.asarray([1, 2])] * arity)
    if arity > 1:
        with pytest.raises(TypeError, match="same dtypes"):
            f(snp.asarray([1.0], snp.float32), *[snp.asarray([1.0], snp.float64)] * (arity - 1))
        # a weak Python scalar takes the other operand's dtype; a 0-d operand broadcasts
        x = snp.asarray([1.5, 2.5], snp.float32)
        assert f(*([x] + [2.0] * (arity - 1))).dtype == snp.float32
        assert f(*([x] + [snp.asarray(2.0, snp.float32)] * (arity - 1))).shape == (2,)


def test_special_function_gradients_match_jax():
    x = np.asarray([0.7, 1.3, 4.0])
    for ours, theirs in [(lax.lgamma, jax.lax.lgamma), (lax.digamma, jax.lax.digamma),
                         (lax.bessel_i0e, jax.lax.bessel_i0e), (lax.exp2, jax.lax.exp2)]:
        got = np.asarray(stablejit.grad(lambda v, f=ours: snp.sum(f(v)))(snp.asarray(x)))
        want = _jax(jax.grad(lambda v, f=theirs: jnp.sum(f(v))), x)
        np.testing.assert_allclose(got, want, rtol=1e-9)


def _mat(dtype, shape, rng):
    a = rng.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dtype)


def _spd(dtype, shape, rng):
    a = _mat(dtype, shape, rng)
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + shape[-1] * np.eye(shape[-1])).astype(dtype)


@pytest.mark.parametrize("dtype", list(TOL))
def test_cholesky_and_lu_match_jax(dtype):
    rng = np.random.default_rng(0)
    h = _spd(dtype, (2, 4, 4), rng)
    tol = TOL[dtype] * 10
    lower_only = np.tril(h)  # symmetrize_input=False reads the lower triangle
    for x, sym in [(h, True), (lower_only, False)]:
        got = _both(lambda v, s=sym: lax.linalg.cholesky(v, symmetrize_input=s), x)
        want = _jax(lambda v, s=sym: jax.lax.linalg.cholesky(v, symmetrize_input=s), x)
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    a = _mat(dtype, (2, 5, 3), rng)
    for x in (a, np.swapaxes(a, -1, -2), h):
        got = _both(lax.linalg.lu, x)
        want = _jax(jax.lax.linalg.lu, x)
        for g, w in zip(got, want, strict=True):
            assert g.dtype == w.dtype and g.shape == w.shape
            np.testing.assert_allclose(g, w, rtol=tol, atol=tol)
        perm = _both(lambda p, m=x.shape[-2]: lax.linalg.lu_pivots_to_permutation(p, m), got[1])
        np.testing.assert_array_equal(perm, got[2])


@pytest.mark.parametrize("dtype", list(TOL))
def test_triangular_solve_matches_jax_in_every_mode(dtype):
    rng = np.random.default_rng(1)
    tol = TOL[dtype] * 100
    a = _mat(dtype, (2, 3, 3), rng) + 4 * np.eye(3, dtype=dtype)
    # (every combination of side, triangle, transpose and conjugate; unit_diagonal on half
    # of them, so that each of its values meets every other option)
    for left, lower, trans, conj in itertools.product([False, True], repeat=4):
        unit = left ^ lower ^ trans
        b = _mat(dtype, (2, 3, 4) if left else (2, 4, 3), rng)
        kw = dict(left_side=left, lower=lower, transpose_a=trans, conjugate_a=conj,
                  unit_diagonal=unit)
        got = _both(lambda x, y, k=kw: lax.linalg.triangular_solve(x, y, **k), a, b)
        want = _jax(lambda x, y, k=kw: jax.lax.linalg.triangular_solve(x, y, **k), a, b)
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=str(kw))


@pytest.mark.parametrize("dtype", list(TOL))
def test_qr_eigh_svd_keep_jax_result_orders(dtype):
    rng = np.random.default_rng(2)
    tol = TOL[dtype] * 100
    a = _mat(dtype, (2, 5, 3), rng)
    for full in (True, False):
        q, r = _both(lambda x, f=full: lax.linalg.qr(x, full_matrices=f), a)
        wq, wr = _jax(lambda x, f=full: jax.lax.linalg.qr(x, full_matrices=f), a)
        assert q.shape == wq.shape and r.shape == wr.shape
        np.testing.assert_allclose(q @ r, a, rtol=tol, atol=tol)
        np.testing.assert_allclose(np.abs(r), np.abs(wr), rtol=tol, atol=tol)
    h = _spd(dtype, (2, 4, 4), rng)
    for subset in (None, (1, 3)):
        v, w = _both(lambda x, s=subset: lax.linalg.eigh(x, subset_by_index=s), h)
        wv, ww = _jax(jax.lax.linalg.eigh, h)  # (jax has no subset_by_index on CPU)
        if subset is not None:
            wv, ww = wv[..., subset[0]:subset[1]], ww[..., subset[0]:subset[1]]
        assert v.shape == wv.shape and w.shape == ww.shape and w.dtype == ww.dtype
        np.testing.assert_allclose(w, ww, rtol=tol, atol=tol)
        np.testing.assert_allclose(h @ v, v * w[..., None, :], rtol=tol, atol=tol * 10)
    for full, uv, subset in [(True, True, None), (False, True, None), (False, False, None),
                             (False, True, (0, 2)), (False, False, (1, 3))]:
        kw = dict(full_matrices=full, compute_uv=uv, subset_by_index=subset)
        got = _both(lambda x, k=kw: lax.linalg.svd(x, **k), a)
        # (jax has no subset_by_index on CPU: its full answer, sliced)
        want = _jax(lambda x, k=dict(kw, subset_by_index=None): jax.lax.linalg.svd(x, **k), a)
        if subset is not None:
            lo, hi = subset
            want = (want[..., lo:hi] if not uv else
                    (want[0][..., :, lo:hi], want[1][..., lo:hi], want[2][..., lo:hi, :]))
        if not uv:
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
            continue
        (u, s, vh), (wu, ws, wvh) = got, want
        assert (u.shape, s.shape, vh.shape) == (wu.shape, ws.shape, wvh.shape), kw
        np.testing.assert_allclose(s, ws, rtol=tol, atol=tol)
        k = s.shape[-1]
        # the singular vectors agree with jax's up to a phase each
        dots = np.abs(np.sum(np.conj(u[..., :, :k]) * wu[..., :, :k], axis=-2))
        np.testing.assert_allclose(dots, 1, rtol=tol * 10)
        np.testing.assert_allclose((u[..., :, :k] * s[..., None, :]) @ vh[..., :k, :],
                                   (wu[..., :, :k] * ws[..., None, :]) @ wvh[..., :k, :],
                                   rtol=tol * 10, atol=tol * 10)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_tridiagonal_solve_matches_jax(dtype):
    rng = np.random.default_rng(3)
    m = 6
    d = (4 + rng.random((2, m))).astype(dtype)
    dl, du = rng.standard_normal((2, 2, m)).astype(dtype)
    dl[:, 0], du[:, -1] = np.nan, np.nan  # ignored corners
    b = rng.standard_normal((2, m, 3)).astype(dtype)
    got = _both(lax.linalg.tridiagonal_solve, dl, d, du, b)
    want = _jax(jax.lax.linalg.tridiagonal_solve, dl, d, du, b)
    np.testing.assert_allclose(got, want, rtol=TOL[dtype] * 100, atol=TOL[dtype] * 100)
    g = stablejit.grad(lambda v: snp.sum(lax.linalg.tridiagonal_solve(dl, v, du, b)))(
        snp.asarray(d))
    gw = _jax(jax.grad(lambda v: jnp.sum(jax.lax.linalg.tridiagonal_solve(
        jnp.asarray(dl), v, jnp.asarray(du), jnp.asarray(b)))), d)
    np.testing.assert_allclose(np.asarray(g), gw, rtol=TOL[dtype] * 1000, atol=TOL[dtype] * 100)


def test_linalg_errors_name_the_function():
    with pytest.raises(TypeError, match="lax.linalg.cholesky needs floating-point"):
        lax.linalg.cholesky(snp.ones((2, 2), snp.int32))
    with pytest.raises(NotImplementedError, match="pivoting=True"):
        lax.linalg.qr(snp.ones((2, 2)), pivoting=True)
    with pytest.raises(ValueError, match="subset_by_index"):
        lax.linalg.eigh(snp.eye(3), subset_by_index=(2, 5))
    with pytest.raises(ValueError, match="full_matrices=False"):
        lax.linalg.svd(snp.eye(3), subset_by_index=(0, 1))


def test_split_reduce_xor_and_small_names_match_jax():
    x = np.arange(24, dtype=np.int32).reshape(4, 6)
    for sizes, axis in [((1, 2, 3), 1), ((0, 4), 0), ((2, 2), -2)]:
        got = _both(lambda v, s=sizes, a=axis: lax.split(v, s, a), x)
        want = _jax(lambda v, s=sizes, a=axis: jax.lax.split(v, s, a), x)
        for g, w in zip(got, want, strict=True):
            np.testing.assert_array_equal(g, w)
    with pytest.raises(ValueError, match="add up to the length 6"):
        lax.split(snp.asarray(x), (1, 2), 1)
    for v, axes in [(x, (0,)), (x, (0, 1)), (x.astype(np.uint8), (1,)),
                    (x % 3 == 0, (1,)), (x % 2 == 0, (0, 1))]:
        got = _both(lambda t, a=axes: lax.reduce_xor(t, a), v)
        want = _jax(lambda t, a=axes: jax.lax.reduce_xor(t, a), v)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
    assert lax.broadcast_shapes((2, 1), (3,)) == jax.lax.broadcast_shapes((2, 1), (3,))
    assert lax.dtype(snp.ones(2, snp.int8)) == snp.int8


def test_approx_k_is_exact_top_k_along_any_axis():
    rng = np.random.default_rng(4)
    x = rng.permutation(60).reshape(3, 4, 5).astype(np.float32)  # no ties
    for k, dim in [(2, -1), (3, 1), (1, 0), (5, 2)]:
        for ours, theirs in [(lax.approx_max_k, jax.lax.approx_max_k),
                             (lax.approx_min_k, jax.lax.approx_min_k)]:
            got = _both(lambda v, o=ours, k=k, d=dim: o(v, k, reduction_dimension=d), x)
            want = _jax(lambda v, t=theirs, k=k, d=dim: t(v, k, reduction_dimension=d), x)
            for g, w in zip(got, want, strict=True):
                assert g.dtype == w.dtype
                np.testing.assert_array_equal(g, w)
    with pytest.raises(ValueError, match=r"k=0 is outside 1\.\.5"):
        lax.approx_max_k(snp.asarray(x), 0)


def test_optimization_barrier_is_the_identity_for_values_grad_and_vmap():
    x = snp.asarray([1.0, 2.0, 3.0])
    tree = {"a": x, "b": (x * 2, x + 1)}
    out = lax.optimization_barrier(tree)
    assert set(out) == {"a", "b"}
    np.testing.assert_array_equal(np.asarray(out["b"][0]), [2.0, 4.0, 6.0])
    f = stablejit.jit(lambda v: snp.sum(lax.optimization_barrier(v * v)))
    assert float(f(x)) == 14.0
    assert "optimization_barrier" in f.lower(x).as_text()
    np.testing.assert_array_equal(np.asarray(stablejit.grad(f)(x)), [2.0, 4.0, 6.0])
    np.testing.assert_array_equal(
        np.asarray(stablejit.vmap(lambda v: lax.optimization_barrier(v) * 2)(x)), [2, 4, 6])


def test_checkpoint_policies_are_jax_s_names_and_leave_gradients_alone():
    from stablejit import checkpoint_policies as ours

    theirs = jax.checkpoint_policies
    public = {n for n in dir(theirs) if not n.startswith("_")}
    assert public <= set(ours.__all__), public - set(ours.__all__)
    x = np.random.default_rng(5).standard_normal((3, 3)).astype(np.float32)

    def loss(m, ckpt, policy):
        f = ckpt(lambda v: m.sin(v) @ v + m.tanh(v), policy=policy)
        return lambda v: m.sum(f(v) ** 2)

    want = _jax(jax.grad(loss(jnp, jax.checkpoint, None)), x)
    policies = [ours.everything_saveable, ours.nothing_saveable, ours.dots_saveable,
                ours.dots_with_no_batch_dims_saveable, ours.save_only_these_names("a"),
                ours.save_anything_except_these_names("a"),
                ours.save_from_both_policies(ours.dots_saveable, ours.nothing_saveable),
                ours.offload_dot_with_no_batch_dims("device", "pinned_host")]
    for policy in policies:
        got = stablejit.grad(loss(snp, stablejit.checkpoint, policy))(snp.asarray(x))
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)
    # the predicates answer for stablejit's primitives, as JAX's for its own
    from stablejit.compiler.primitives import elementwise, products

    assert ours.dots_saveable(products.dot_general) and not ours.dots_saveable(
        elementwise.sin)
    assert ours.dots_with_no_batch_dims_saveable(products.dot_general, batch=((), ()))
    assert not ours.dots_with_no_batch_dims_saveable(products.dot_general,
                                                     batch=((0,), (0,)))
    both = ours.save_from_both_policies(ours.nothing_saveable, ours.dots_saveable)
    assert both(products.dot_general) and not both(elementwise.sin)


def test_top_level_sharding_names_are_jax_s():
    assert stablejit.P is stablejit.sharding.PartitionSpec
    assert stablejit.NamedSharding is stablejit.sharding.NamedSharding
    mesh = stablejit.make_mesh((1,), ("x",))
    s = stablejit.NamedSharding(mesh, stablejit.P("x"))
    y = stablejit.device_put(snp.arange(4.0), s)
    np.testing.assert_array_equal(np.asarray(y), np.arange(4.0))
