"""vmap of control flow, of functions with custom derivative rules (and their grads), and
of linear algebra, on jit, eager XLA and the reference backend, against jax.vmap of the
same program written with jax.lax / jax.numpy."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp
from stablejit import collectives, cond, fori_loop, scan, switch, while_loop

from tests.support.runners import run_three_ways

F32 = np.float32
RNG = np.random.default_rng(0)
XS = RNG.normal(size=(4, 3)).astype(F32)       # four examples of a 3-vector
PS = np.array([1.0, -2.0, 0.5, -0.1], F32)     # four per-example predicates / scalars


@pytest.fixture(autouse=True)
def _x64():
    """float64 linear algebra in jax too (scoped: other test modules keep jax's default)."""
    with jax.enable_x64(True):
        yield


def _check(ours, theirs, *args, in_axes=0, rtol=1e-5, atol=1e-6):
    """stablejit.vmap(ours) on every path equals jax.vmap(theirs)."""
    expected = jax.tree_util.tree_map(
        np.asarray, jax.vmap(theirs, in_axes=in_axes)(*args))
    for path, got in run_three_ways(stablejit.vmap(ours, in_axes=in_axes), *args).items():
        for g, e in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(expected),
                        strict=True):
            np.testing.assert_allclose(g, e, rtol=rtol, atol=atol, err_msg=path)


# ---- cond / switch -----------------------------------------------------------------------

@pytest.mark.parametrize("in_axes", [(0, 0), (None, 0), (0, None)],
                         ids=["both", "pred-unbatched", "pred-only"])
def test_vmap_cond(in_axes):
    p = PS if in_axes[0] == 0 else PS[0]
    x = XS if in_axes[1] == 0 else XS[0]

    def ours(p, x):
        return cond(p > 0, lambda x: (snp.sin(x), x * p), lambda x: (x * 2.0, x - 1.0), x)

    def theirs(p, x):
        return jax.lax.cond(p > 0, lambda x: (jnp.sin(x), x * p), lambda x: (x * 2.0, x - 1.0),
                            x)

    _check(ours, theirs, p, x, in_axes=in_axes)


def test_vmap_switch_with_per_example_index_clamped_like_jax():
    idx = np.array([0, 2, 1, 7], np.int32)  # 7 is out of range: the last branch
    ours = lambda i, x: switch(i, [snp.sin, snp.cos, lambda x: x * 3.0], x)  # noqa: E731
    theirs = lambda i, x: jax.lax.switch(i, [jnp.sin, jnp.cos, lambda x: x * 3.0], x)  # noqa: E731
    _check(ours, theirs, idx, XS)


# ---- loops ------------------------------------------------------------------------------

def test_vmap_while_loop_with_per_example_trip_counts():
    limits = np.array([0, 3, 1, 6], np.int32)

    def body(c):
        i, x = c
        return i + 1, x * 1.5 + 1.0

    ours = lambda n, x: while_loop(lambda c: c[0] < n, body, (snp.asarray(0), x))  # noqa: E731
    theirs = lambda n, x: jax.lax.while_loop(lambda c: c[0] < n, body, (0, x))  # noqa: E731
    _check(ours, theirs, limits, XS)
    _check(ours, theirs, limits, XS[0], in_axes=(0, None))  # carry batched by the predicate
    _check(ours, theirs, limits[3], XS, in_axes=(None, 0))  # one trip count for all


def test_vmap_fori_loop_with_batched_closure():
    ours = lambda w, x: fori_loop(0, 4, lambda i, c: snp.sin(c) * w + i, x)  # noqa: E731
    theirs = lambda w, x: jax.lax.fori_loop(0, 4, lambda i, c: jnp.sin(c) * w + i, x)  # noqa: E731
    _check(ours, theirs, PS, XS)
    _check(ours, theirs, PS, XS[0], in_axes=(0, None))  # the carry becomes batched


@pytest.mark.parametrize("in_axes", [(0, 0), (None, 0), (0, None)],
                         ids=["both", "xs-only", "init-only"])
@pytest.mark.parametrize("reverse", [False, True])
def test_vmap_scan(in_axes, reverse):
    init = PS if in_axes[0] == 0 else PS[0]
    xs = XS if in_axes[1] == 0 else XS[0]

    def step(np_):
        def f(c, x):
            c = c * 0.5 + np_.sum(x * x)
            return c, (x * c, np_.cos(x))
        return f

    ours = lambda c, xs: scan(step(snp), c, xs, reverse=reverse)  # noqa: E731
    theirs = lambda c, xs: jax.lax.scan(step(jnp), c, xs, reverse=reverse)  # noqa: E731
    _check(ours, theirs, init, xs, in_axes=in_axes)


def test_vmap_of_grad_through_scan():
    def loss(np_, scan_):
        return lambda w, xs: np_.sum(scan_(lambda c, x: (np_.tanh(c * w + x), c), 0.5, xs)[1])

    ours = stablejit.grad(loss(snp, scan))
    theirs = jax.grad(loss(jnp, jax.lax.scan))
    _check(ours, theirs, PS, XS, rtol=1e-4)


def test_nested_vmap_of_while_and_scan():
    limits = np.array([[0, 3, 1], [2, 5, 4]], np.int32)
    x = RNG.normal(size=(2, 3, 2)).astype(F32)

    def program(lax, np_):
        def f(n, x):
            _, y = lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, np_.sin(c[1]) + 1),
                                  (n * 0, x))
            return lax.scan(lambda c, v: (c + v, c * v), y[0], y)
        return f

    want = jax.vmap(jax.vmap(program(jax.lax, jnp)))(limits, x)
    got = stablejit.jit(stablejit.vmap(stablejit.vmap(program(stablejit, snp))))(limits, x)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-5)


def test_derivatives_of_vmapped_control_flow():
    """grad of vmap through a per-example cond and scan, and jvp of vmap through a
    while_loop whose lanes stop at different steps."""
    def loss(lax, np_):
        def f(p, x):
            y = lax.cond(p > 0, np_.sin, lambda x: x * p, x)
            return np_.sum(lax.scan(lambda c, v: (c * v + 1.0, c), 1.0, y)[1])
        return f

    got = stablejit.grad(lambda p, x: snp.sum(stablejit.vmap(loss(stablejit, snp))(p, x)),
                         argnums=(0, 1))(PS, XS)
    want = jax.grad(lambda p, x: jnp.sum(jax.vmap(loss(jax.lax, jnp))(p, x)),
                    argnums=(0, 1))(PS, XS)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-5)

    limits = np.array([0, 3, 1, 6], np.int32)

    def per_example(lax, np_):
        def f(n, x):
            return lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, np_.sin(c[1]) * 1.5),
                                  (n * 0, x))[1]
        return f

    t = np.ones_like(XS)
    _, got_t = stablejit.jvp(lambda x: stablejit.vmap(per_example(stablejit, snp))(limits, x),
                             (XS,), (t,))
    _, want_t = jax.jvp(lambda x: jax.vmap(per_example(jax.lax, jnp))(limits, x), (XS,), (t,))
    np.testing.assert_allclose(got_t, want_t, rtol=1e-5)


def test_collectives_inside_bodies_see_the_vmap_axis():
    """A body that reads the vmapped axis batches its carry even when no operand is."""
    def loop(fori, index):
        return lambda x: fori(0, 3, lambda i, c: c + index("i"), 0.0)

    def in_cond(cond_, psum):
        return lambda p, x: cond_(p > 0, lambda x: psum(x, "i"), lambda x: x * 2.0, x)

    for ours, theirs, args, in_axes in [
            (loop(fori_loop, collectives.axis_index), loop(jax.lax.fori_loop,
                                                          jax.lax.axis_index), (XS,), 0),
            (in_cond(cond, collectives.psum), in_cond(jax.lax.cond, jax.lax.psum),
             (PS[0], XS), (None, 0))]:
        want = jax.vmap(theirs, in_axes=in_axes, axis_name="i")(*args)
        for path, got in run_three_ways(stablejit.vmap(ours, in_axes=in_axes, axis_name="i"),
                                        *args).items():
            np.testing.assert_allclose(got, want, rtol=1e-6, err_msg=path)


# ---- custom derivative rules ---------------------------------------------------------------

def _custom_vjp_pair():
    """f(x, y) = sin(x) * y whose bwd returns a deliberately wrong, distinctive rule
    (42 * ct * y for x, ct for y): a gradient equal to it proves the rule was used."""
    def fwd(x, y, np_):
        return np_.sin(x) * y, (x, y)

    def bwd(res, ct):
        x, y = res
        return 42.0 * ct * y, ct

    @stablejit.custom_vjp
    def ours(x, y):
        return snp.sin(x) * y

    ours.defvjp(lambda x, y: fwd(x, y, snp), bwd)

    @jax.custom_vjp
    def theirs(x, y):
        return jnp.sin(x) * y

    theirs.defvjp(lambda x, y: fwd(x, y, jnp), bwd)
    return ours, theirs


def _custom_jvp_pair():
    """f(x) = x ** 3 whose rule gives 7 * t (not the true derivative, so it shows)."""
    @stablejit.custom_jvp
    def ours(x):
        return x * x * x

    @ours.defjvp
    def _(primals, tangents):
        return ours(primals[0]), 7.0 * tangents[0]

    @jax.custom_jvp
    def theirs(x):
        return x * x * x

    @theirs.defjvp
    def _(primals, tangents):
        return theirs(primals[0]), 7.0 * tangents[0]

    return ours, theirs


@pytest.mark.parametrize("in_axes", [(0, 0), (0, None), (None, 0)])
def test_vmap_custom_vjp_and_its_grads(in_axes):
    ours, theirs = _custom_vjp_pair()
    x = XS if in_axes[0] == 0 else XS[0]
    y = XS[::-1] * 2.0 if in_axes[1] == 0 else XS[1]
    _check(ours, theirs, x, y, in_axes=in_axes)
    # vmap of grad: each example's gradient through the user's bwd
    scalar = lambda f, np_: lambda x, y: np_.sum(f(x, y))  # noqa: E731
    _check(stablejit.grad(scalar(ours, snp), argnums=(0, 1)),
           jax.grad(scalar(theirs, jnp), argnums=(0, 1)), x, y, in_axes=in_axes)
    # grad of vmap: the batched call still differentiates through bwd (an argument every
    # example shares gets the sum of the examples' cotangents)
    got = stablejit.jit(stablejit.grad(
        lambda x, y: snp.sum(stablejit.vmap(ours, in_axes=in_axes)(x, y)), argnums=(0, 1)))(x, y)
    want = jax.grad(lambda x, y: jnp.sum(jax.vmap(theirs, in_axes=in_axes)(x, y)),
                    argnums=(0, 1))(x, y)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-5)


def test_vmap_of_grad_uses_the_custom_vjp_bwd():
    ours, _ = _custom_vjp_pair()
    g = stablejit.vmap(stablejit.grad(lambda x, y: snp.sum(ours(x, y))))(XS, XS * 0 + 1.0)
    np.testing.assert_allclose(g, np.full_like(XS, 42.0))


def test_vmap_custom_jvp_and_its_grads():
    ours, theirs = _custom_jvp_pair()
    _check(ours, theirs, XS)
    _check(stablejit.grad(lambda x: snp.sum(ours(x))), jax.grad(lambda x: jnp.sum(theirs(x))),
           XS)
    got = stablejit.grad(lambda x: snp.sum(stablejit.vmap(ours)(x)))(XS)
    np.testing.assert_allclose(got, np.full_like(XS, 7.0))
    _, t = stablejit.jvp(stablejit.vmap(ours), (XS,), (np.ones_like(XS),))
    np.testing.assert_allclose(t, np.full_like(XS, 7.0))


def test_vmap_stop_gradient():
    f = lambda np_, sg: lambda x: np_.sum(x * sg(x))  # noqa: E731
    _check(stablejit.grad(f(snp, stablejit.stop_gradient)),
           jax.grad(f(jnp, jax.lax.stop_gradient)), XS)


# ---- linear algebra ------------------------------------------------------------------------

def _spd_batch(n=4, k=3, dtype=np.float64):
    a = RNG.normal(size=(n, k, k))
    return (a @ np.swapaxes(a, -1, -2) + k * np.eye(k)).astype(dtype)


A = _spd_batch()
B = RNG.normal(size=(4, 3, 2))


def _sign_fixed(v):
    """Eigen/singular vectors up to sign: make each column's largest entry positive."""
    v = np.asarray(v)
    big = np.take_along_axis(v, np.abs(v).argmax(-2)[..., None, :], -2)
    return v * np.sign(big)


@pytest.mark.parametrize("in_axes", [(0, 0), (0, None), (None, 0)])
def test_vmap_solve(in_axes):
    a = A if in_axes[0] == 0 else A[0]
    b = B if in_axes[1] == 0 else B[0]
    _check(snp.linalg.solve, jnp.linalg.solve, a, b, in_axes=in_axes)


@pytest.mark.parametrize("name", ["cholesky", "qr", "inv", "det"])
def test_vmap_linalg(name):
    # tuple(): qr's named-tuple result as a plain pair, which the runners convert
    as_tuple = lambda f: lambda a: tuple(r) if isinstance(r := f(a), tuple) else r  # noqa: E731
    _check(as_tuple(getattr(snp.linalg, name)), as_tuple(getattr(jnp.linalg, name)), A)


def test_vmap_eigh_and_svd():
    _check(lambda a: snp.linalg.eigh(a)[0], lambda a: jnp.linalg.eigh(a)[0], A)
    _check(lambda a: snp.linalg.svd(a)[1], lambda a: jnp.linalg.svd(a)[1], A)
    w, v = jax.vmap(jnp.linalg.eigh)(A)
    u, s, vt = jax.vmap(jnp.linalg.svd)(A[:, :, :2])
    for path, (ours_e, ours_s) in run_three_ways(
            lambda a: (tuple(stablejit.vmap(snp.linalg.eigh)(a)),
                       tuple(stablejit.vmap(snp.linalg.svd)(a[:, :, :2]))), A).items():
        np.testing.assert_allclose(ours_e[0], w, rtol=1e-10, err_msg=path)
        np.testing.assert_allclose(_sign_fixed(ours_e[1]), _sign_fixed(v), atol=1e-10,
                                   err_msg=path)
        np.testing.assert_allclose(ours_s[1], s, rtol=1e-10, err_msg=path)
        np.testing.assert_allclose(_sign_fixed(ours_s[0][..., :2]), _sign_fixed(u[..., :2]),
                                   atol=1e-10, err_msg=path)


def test_grad_of_vmap_cholesky():
    f = lambda np_, vmap, lin: lambda a: np_.sum(np_.sin(vmap(lin.cholesky)(a)))  # noqa: E731
    got = stablejit.grad(f(snp, stablejit.vmap, snp.linalg))(A)
    want = jax.grad(f(jnp, jax.vmap, jnp.linalg))(A)
    # jax symmetrises the cotangent; compare what both define: the lower triangle's effect
    # on a symmetric perturbation
    sym = lambda g: np.asarray(g) + np.swapaxes(np.asarray(g), -1, -2)  # noqa: E731
    np.testing.assert_allclose(sym(got), sym(want), rtol=1e-8, atol=1e-12)
