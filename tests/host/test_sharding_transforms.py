"""Every transformation of a shard_map'ped function and of a jit with shardings, eagerly,
under jit and on sharded arguments, against jax on 8 host devices (a subprocess with 8
forced devices when this run has fewer; see conftest.py).

The table is FUNCTIONS x TRANSFORMS x MODES. Values are compared for every entry; the
shardings of the results too for shard_map, whose out_specs say where its results live
(see test_a_sharded_jit_keeps_its_shardings for the jit). Eager grad of a shard_map
recursed until Python's recursion limit: shard_map's eager call was a jit of itself, and
jit calls its function inline under grad's tape, where shard_map chose the same again.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp
from jax.sharding import NamedSharding as JNamed
from jax.sharding import PartitionSpec as JP
from stablejit import lax
from stablejit.sharding import NamedSharding, P

pytestmark = pytest.mark.host_devices(8)

X = (np.arange(8 * 16, dtype=np.float32).reshape(8, 16) % 7 - 3) / 4
W = np.cos(np.arange(16, dtype=np.float32))
XS = np.stack([X, np.sin(X)])


@pytest.fixture(scope="module")
def functions(mesh, jmesh):
    """name -> (ours, jax's): f(a [8, 16], w [16]) -> [8, 16], each over the 4x2 mesh: a
    shard_map with a collective, a function with a sharding constraint, a jit with
    shardings."""
    def body(a, w):
        return snp.tanh(a * w) + lax.psum(a, "x") * 0.5

    def jbody(a, w):
        return jnp.tanh(a * w) + jax.lax.psum(a, "x") * 0.5

    def dense(a, w):
        return snp.tanh(a * w) @ (a.T * 0.1) @ a

    def jdense(a, w):
        return jnp.tanh(a * w) @ (a.T * 0.1) @ a

    def constrained(a, w):
        return lax.with_sharding_constraint(snp.tanh(a * w), NamedSharding(mesh, P("x", "y"))) * a

    def jconstrained(a, w):
        return jax.lax.with_sharding_constraint(jnp.tanh(a * w),
                                                JNamed(jmesh, JP("x", "y"))) * a

    ins, out = (P("x"), P()), P("x", "y")
    return {
        "sharding_constraint": (constrained, jconstrained),
        "shard_map": (
            stablejit.shard_map(body, mesh=mesh, in_specs=(P("x", "y"), P("y")),
                                out_specs=P("x", "y")),
            jax.shard_map(jbody, mesh=jmesh, in_specs=(JP("x", "y"), JP("y")),
                          out_specs=JP("x", "y"), check_vma=False)),
        "sharded_jit": (
            stablejit.jit(dense, in_shardings=tuple(NamedSharding(mesh, s) for s in ins),
                          out_shardings=NamedSharding(mesh, out)),
            jax.jit(jdense, in_shardings=tuple(JNamed(jmesh, JP(*s)) for s in ins),
                    out_shardings=JNamed(jmesh, JP(*out)))),
    }


def _vjp(vjp):
    def run(f):
        def call(a, w):
            out, pullback = vjp(f, a, w)
            return out, pullback(out * 0.5)
        return call
    return run


def _linearize(linearize):
    def run(f):
        def call(a, w):
            out, f_jvp = linearize(lambda w: f(a, w), w)
            return out, f_jvp(w * 0.5)
        return call
    return run


def _loss(sum_):
    return lambda f: lambda a, w: sum_(f(a, w) ** 2)


# (name, ours: f -> callable, jax's: f -> callable, arguments)
TRANSFORMS = [
    ("grad", lambda f: stablejit.grad(_loss(snp.sum)(f), argnums=(0, 1)),
     lambda f: jax.grad(_loss(jnp.sum)(f), argnums=(0, 1)), (X, W)),
    ("value_and_grad", lambda f: stablejit.value_and_grad(_loss(snp.sum)(f), argnums=1),
     lambda f: jax.value_and_grad(_loss(jnp.sum)(f), argnums=1), (X, W)),
    ("vjp", _vjp(stablejit.vjp), _vjp(jax.vjp), (X, W)),
    ("jvp", lambda f: lambda a, w: stablejit.jvp(f, (a, w), (a * 0 + 1, w)),
     lambda f: lambda a, w: jax.jvp(f, (a, w), (a * 0 + 1, w)), (X, W)),
    ("linearize", _linearize(stablejit.linearize), _linearize(jax.linearize), (X, W)),
    ("vmap", lambda f: stablejit.vmap(f, in_axes=(0, None)),
     lambda f: jax.vmap(f, in_axes=(0, None)), (XS, W)),
    ("jacrev", lambda f: stablejit.jacrev(lambda w, a: f(a, w)[:2], argnums=0),
     lambda f: jax.jacrev(lambda w, a: f(a, w)[:2], argnums=0), (W, X)),
    ("jacfwd", lambda f: stablejit.jacfwd(lambda w, a: f(a, w)[:2], argnums=0),
     lambda f: jax.jacfwd(lambda w, a: f(a, w)[:2], argnums=0), (W, X)),
    ("hessian", lambda f: stablejit.hessian(lambda w, a: snp.sum(f(a, w) ** 3)),
     lambda f: jax.hessian(lambda w, a: jnp.sum(f(a, w) ** 3)), (W, X)),
    ("grad_of_vmap", lambda f: stablejit.grad(
        lambda w, xs: snp.sum(stablejit.vmap(f, in_axes=(0, None))(xs, w) ** 2)),
     lambda f: jax.grad(lambda w, xs: jnp.sum(jax.vmap(f, in_axes=(0, None))(xs, w) ** 2)),
     (W, XS)),
    ("vmap_of_grad", lambda f: stablejit.vmap(stablejit.grad(_loss(snp.sum)(f), argnums=1),
                                              in_axes=(0, None)),
     lambda f: jax.vmap(jax.grad(_loss(jnp.sum)(f), argnums=1), in_axes=(0, None)),
     (XS, W)),
    ("checkpoint", lambda f: stablejit.grad(_loss(snp.sum)(stablejit.checkpoint(f)),
                                            argnums=(0, 1)),
     lambda f: jax.grad(_loss(jnp.sum)(jax.checkpoint(f)), argnums=(0, 1)), (X, W)),
    ("remat", lambda f: stablejit.value_and_grad(_loss(snp.sum)(stablejit.remat(f))),
     lambda f: jax.value_and_grad(_loss(jnp.sum)(jax.remat(f))), (X, W)),
]

# eager: host arguments, the transformation called outside jit (grad records on its tape
# until the shard_map, then takes the traced path); jit: the transformed function jitted;
# sharded: eagerly on arguments already replicated over the mesh (the traced path)
MODES = ["eager", "jit", "sharded"]


def _layout(t) -> dict:
    """device id -> (start, stop) per dimension of its block."""
    return {d.id: tuple((0 if i.start is None else i.start, n if i.stop is None else i.stop)
                        for i, n in zip(index, t.shape, strict=True))
            for d, index in t.sharding.devices_indices_map(t.shape).items()}


# (function, transform) -> jax's result: one per row of the table, whatever the mode
# (jax's eager transforms compile about ten programs each; they were two thirds of this
# module's time when each mode recomputed them)
_JAX_RESULTS: dict = {}


def _jax_result(theirs, fname, tname, jtransform, args):
    key = (fname, tname)
    if key not in _JAX_RESULTS:
        _JAX_RESULTS[key] = jtransform(theirs)(*args)
    return _JAX_RESULTS[key]


def _run(functions, mesh, fname, tname, mode):
    ours, theirs = functions[fname]
    _, transform, jtransform, args = next(t for t in TRANSFORMS if t[0] == tname)
    f = transform(ours)
    if mode == "jit":
        f = stablejit.jit(f)
    if mode == "sharded":
        args_in = tuple(stablejit.device_put(a, NamedSharding(mesh, P())) for a in args)
    else:
        args_in = args
    got, want = f(*args_in), _jax_result(theirs, fname, tname, jtransform, args)
    got_leaves, got_tree = stablejit.tree.flatten(got)
    want_leaves, want_tree = jax.tree.flatten(want)
    assert len(got_leaves) == len(want_leaves) and got_tree.num_leaves == \
        want_tree.num_leaves
    for g, w in zip(got_leaves, want_leaves, strict=True):
        assert g.shape == w.shape and np.dtype(g.dtype.np) == w.dtype
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-5, atol=2e-5)
    return got_leaves, want_leaves


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("tname", [t[0] for t in TRANSFORMS])
@pytest.mark.parametrize("fname", ["shard_map", "sharding_constraint", "sharded_jit"])
def test_transformed_sharded_functions_match_jax(functions, mesh, fname, tname, mode):
    got, want = _run(functions, mesh, fname, tname, mode)
    for g, w in zip(got, want, strict=True):  # laid out over the mesh as jax lays them out
        assert _layout(g) == _layout(w)


def test_a_sharded_jit_keeps_its_shardings(functions, mesh, jmesh):
    ours, theirs = functions["sharded_jit"]
    got, want = ours(X, W), theirs(X, W)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=2e-5, atol=2e-5)
    assert got.sharding == NamedSharding(mesh, P("x", "y"))
    assert _layout(got) == _layout(want)


def test_eager_grad_of_shard_map_inside_lazy(functions):
    ours, theirs = functions["shard_map"]
    with stablejit.lazy():
        got = stablejit.grad(lambda w: snp.sum(ours(X, w) ** 2))(W)
    want = jax.grad(lambda w: jnp.sum(theirs(X, w) ** 2))(W)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("name", ["sharding_constraint", "shard_map", "sharded_jit"])
def test_eager_grad_inside_lazy_runs_where_the_first_call_ran_call_after_call(name, functions):
    """Eager grad of a function over a mesh, in lazy(), again and again: the same
    gradient on the same devices every call. (grad's tape stops at the mesh and the
    traced path runs it; a repeated tape that did reach recorder.c's C finish would be
    run there only where spmd's memo says its derivative names no mesh.)"""
    ours, theirs = functions[name]
    want = jax.grad(lambda w: jnp.sum(theirs(X, w) ** 2))(W)
    grad = stablejit.grad(lambda w: snp.sum(ours(X, w) ** 2))
    placed = []
    for _ in range(3):
        with stablejit.lazy():
            got = grad(snp.asarray(W))
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=2e-5, atol=2e-5)
        placed.append((got._backend.name, got.sharding))
    assert placed[1:] == placed[:1] * 2


def test_eager_grad_of_shard_map_called_again_gives_the_same_gradient(functions):
    ours, _ = functions["shard_map"]
    grad = stablejit.grad(lambda w: snp.sum(ours(X, w) ** 2))
    first = np.asarray(grad(W))
    for _ in range(3):  # the derivative built once is run again
        np.testing.assert_array_equal(np.asarray(grad(W)), first)
