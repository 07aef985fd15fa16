"""shard_map and its collectives on 8 host devices (a subprocess with 8 forced devices
when this run has fewer; see conftest.py): compiled over the devices, eagerly, and on
the reference backend (which simulates the devices), against jax.shard_map."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp
from jax.sharding import PartitionSpec as JP
from stablejit import lax
from stablejit.sharding import NamedSharding, P, make_mesh

pytestmark = pytest.mark.host_devices(8)

X = (np.arange(16 * 8, dtype=np.float32).reshape(16, 8) % 11 - 5) / 4
RING = [(i, (i + 1) % 4) for i in range(4)]


def test_seed_example_ones_all_reduced_give_100_n_everywhere():
    n = 8
    mesh = make_mesh((n,), ("replica",))

    @stablejit.jit
    def step():
        def per_replica():
            return lax.psum(snp.sum(snp.ones([100])), "replica")[None]
        return stablejit.shard_map(per_replica, mesh=mesh, in_specs=(),
                                   out_specs=P("replica"))()

    out = step()
    np.testing.assert_array_equal(np.asarray(out), np.full(n, 100.0 * n))
    assert [np.asarray(s.data).tolist() for s in out.addressable_shards] == [[100.0 * n]] * n


# (name, our body, jax's body, out spec) on X split P("x", "y"): blocks of 4x4
CASES = [
    ("psum", lambda a: lax.psum(a, "x"), lambda a: jax.lax.psum(a, "x"), ("x", "y")),
    ("psum2", lambda a: lax.psum(a, ("x", "y")), lambda a: jax.lax.psum(a, ("x", "y")),
     ("x", "y")),
    ("pmean", lambda a: lax.pmean(a, "y"), lambda a: jax.lax.pmean(a, "y"), ("x", "y")),
    ("pmax", lambda a: lax.pmax(a, "x"), lambda a: jax.lax.pmax(a, "x"), ("x", "y")),
    ("pmin", lambda a: lax.pmin(a, "y"), lambda a: jax.lax.pmin(a, "y"), ("x", "y")),
    ("all_gather", lambda a: lax.all_gather(a, "x"), lambda a: jax.lax.all_gather(a, "x"),
     (None, "y")),
    ("all_gather_tiled", lambda a: lax.all_gather(a, "y", axis=1, tiled=True),
     lambda a: jax.lax.all_gather(a, "y", axis=1, tiled=True), ("x",)),
    ("all_to_all_tiled", lambda a: lax.all_to_all(a, "x", 0, 1, tiled=True),
     lambda a: jax.lax.all_to_all(a, "x", 0, 1, tiled=True), ("x", "y")),
    ("all_to_all", lambda a: lax.all_to_all(a, "x", 0, 1),
     lambda a: jax.lax.all_to_all(a, "x", 0, 1), ("x", "y")),
    ("ppermute", lambda a: lax.ppermute(a, "x", RING), lambda a: jax.lax.ppermute(a, "x", RING),
     ("x", "y")),
    ("ppermute_partial", lambda a: lax.ppermute(a, "y", [(0, 1)]),
     lambda a: jax.lax.ppermute(a, "y", [(0, 1)]), ("x", "y")),
    ("axis_index", lambda a: a + lax.axis_index("x") * 10 + lax.axis_index("y"),
     lambda a: a + jax.lax.axis_index("x") * 10 + jax.lax.axis_index("y"), ("x", "y")),
    ("psum_scatter_tiled", lambda a: lax.psum_scatter(a, "x", scatter_dimension=1, tiled=True),
     lambda a: jax.lax.psum_scatter(a, "x", scatter_dimension=1, tiled=True), ("x", "y")),
    ("psum_scatter", lambda a: lax.psum_scatter(a, "x"),
     lambda a: jax.lax.psum_scatter(a, "x"), (("x", "y"),)),
]


def _jax_result(jmesh, jf, out):
    sm = jax.shard_map(jf, mesh=jmesh, in_specs=JP("x", "y"), out_specs=JP(*out),
                       check_vma=False)
    return np.asarray(jax.jit(sm)(X))


@pytest.mark.parametrize("how", ["jit", "eager", "reference"])
@pytest.mark.parametrize("name,f,jf,out", CASES, ids=[c[0] for c in CASES])
def test_collectives_in_shard_map_match_jax(mesh, jmesh, name, f, jf, out, how):
    mapped = stablejit.shard_map(f, mesh=mesh, in_specs=P("x", "y"), out_specs=P(*out))
    if how == "jit":
        got = stablejit.jit(mapped)(X)
    elif how == "eager":
        got = mapped(X)
    else:
        got = stablejit.jit(mapped, backend="reference")(X)
    np.testing.assert_allclose(np.asarray(got), _jax_result(jmesh, jf, out), rtol=1e-6)


_MESH_AXES = {
    "replica_groups = dense<[[0, 2, 4, 6], [1, 3, 5, 7]]> : tensor<2x4xi64>":
        'replica_groups = #stablehlo.replica_group_mesh_axes<mesh = @mesh_0, axes = '
        '[#stablehlo.axis_ref<name = "x">]>',
    "replica_groups = dense<[[0, 1], [2, 3], [4, 5], [6, 7]]> : tensor<4x2xi64>":
        'replica_groups = #stablehlo.replica_group_mesh_axes<mesh = @mesh_0, axes = '
        '[#stablehlo.axis_ref<name = "y">]>'}


def test_replica_groups_and_channels_are_written_as_jax_writes_them(mesh, jmesh):
    def body(a):
        return lax.psum(a, "x") + lax.ppermute(a, "x", RING), lax.all_gather(a, "y")

    def jbody(a):
        return jax.lax.psum(a, "x") + jax.lax.ppermute(a, "x", RING), jax.lax.all_gather(a, "y")

    outs = (P("x", "y"), P(None, "x"))
    g = stablejit.jit(stablejit.shard_map(body, mesh=mesh, in_specs=P("x", "y"),
                                          out_specs=outs))
    g(X)
    prog = next(iter(g._cache._done.values())).prog
    text = prog.stablehlo(prog.shardings_for([stablejit.device_put(X, NamedSharding(mesh,
                                                                                    P()))]))
    jtext = jax.jit(jax.shard_map(jbody, mesh=jmesh, in_specs=JP("x", "y"),
                                  out_specs=tuple(JP(*o) for o in outs), check_vma=False)
                    ).lower(X).as_text()
    for piece in ("replica_groups = dense<[[0, 2, 4, 6], [1, 3, 5, 7]]> : tensor<2x4xi64>",
                  "replica_groups = dense<[[0, 1], [2, 3], [4, 5], [6, 7]]> : tensor<4x2xi64>",
                  "source_target_pairs = dense<[[0, 2], [2, 4], [4, 6], [6, 0], [1, 3], [3, 5], "
                  "[5, 7], [7, 1]]> : tensor<8x2xi64>",
                  "channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>",
                  "use_global_device_ids"):
        assert piece in text, piece
        # (jax 0.11 names the mesh axis instead of listing its groups)
        assert piece in jtext or _MESH_AXES.get(piece, "\0") in jtext, piece
    # the same attribute, in MLIR's generic form (ours) and its pretty form (jax's)
    assert 'manual_axes = #sdy<manual_axes{"x", "y"}>' in text
    assert 'manual_axes={"x", "y"}' in jtext
    assert "sdy.manual_computation" in text and "sdy.manual_computation" in jtext


GRADS = [  # (name, our loss body, jax's, out spec)
    ("psum", lambda a: lax.psum(snp.sum(snp.sin(a) * a), ("x", "y")),
     lambda a: jax.lax.psum(jnp.sum(jnp.sin(a) * a), ("x", "y")), ()),
    ("sharded_out", lambda a: snp.tanh(a) * lax.pmean(a, "x"),
     lambda a: jnp.tanh(a) * jax.lax.pmean(a, "x"), ("x", "y")),
    ("all_gather", lambda a: lax.all_gather(a, "y", axis=1, tiled=True) ** 2,
     lambda a: jax.lax.all_gather(a, "y", axis=1, tiled=True) ** 2, ("x",)),
    ("ppermute", lambda a: lax.ppermute(a, "x", RING) * snp.cos(a),
     lambda a: jax.lax.ppermute(a, "x", RING) * jnp.cos(a), ("x", "y")),
    # jax has no derivative for pmax: its oracle is the same function written globally
    ("pmax", lambda a: lax.pmax(a, "y") * a,
     lambda a: jnp.tile(jnp.maximum(a[:, :4], a[:, 4:]), (1, 2)) * a, None),
    ("all_to_all", lambda a: lax.all_to_all(a, "x", 0, 1, tiled=True) ** 3,
     lambda a: jax.lax.all_to_all(a, "x", 0, 1, tiled=True) ** 3, ("x", "y")),
    ("psum_scatter", lambda a: lax.psum_scatter(a * a, "x", scatter_dimension=1, tiled=True),
     lambda a: jax.lax.psum_scatter(a * a, "x", scatter_dimension=1, tiled=True), ("x", "y")),
]


@pytest.mark.parametrize("how", ["jit", "reference"])
@pytest.mark.parametrize("name,f,jf,out", GRADS, ids=[g[0] for g in GRADS])
def test_grad_of_shard_map_matches_jax(mesh, jmesh, name, f, jf, out, how):
    mapped = stablejit.shard_map(f, mesh=mesh, in_specs=P("x", "y"),
                                 out_specs=P(*(("x", "y") if out is None else out)))
    w = np.cos(np.arange(64 * 64, dtype=np.float32)).reshape(64, 64)

    def loss(a):
        return snp.sum(mapped(a) * w[:mapped(a).shape[0], :mapped(a).shape[1]]
                       if mapped(a).ndim == 2 else mapped(a))

    jmapped = jf if out is None else jax.shard_map(
        jf, mesh=jmesh, in_specs=JP("x", "y"), out_specs=JP(*out), check_vma=False)

    def jloss(a):
        r = jmapped(a)
        return jnp.sum(r * w[:r.shape[0], :r.shape[1]] if r.ndim == 2 else r)

    backend = None if how == "jit" else "reference"
    got = stablejit.jit(stablejit.grad(loss), backend=backend)(X)
    np.testing.assert_allclose(np.asarray(got), np.asarray(jax.jit(jax.grad(jloss))(X)),
                               rtol=2e-5, atol=2e-5)


def test_shard_map_under_vmap(mesh):
    def body(a):
        return lax.psum(a, "x")

    mapped = stablejit.shard_map(body, mesh=mesh, in_specs=P("x"), out_specs=P())
    xs = np.stack([X, 2 * X])
    got = stablejit.jit(stablejit.vmap(mapped))(xs)
    want = np.stack([X.reshape(4, 4, 8).sum(0), 2 * X.reshape(4, 4, 8).sum(0)])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)


def test_a_collective_over_an_unknown_axis_says_where_it_can_be_used(mesh):
    mapped = stablejit.shard_map(lambda a: lax.psum(a, "z"), mesh=mesh, in_specs=P("x"),
                                 out_specs=P("x"))
    with pytest.raises(NameError, match="unbound axis name 'z'.*shard_map"):
        stablejit.jit(mapped)(X)


def test_blocks_that_do_not_divide_are_an_error(mesh):
    mapped = stablejit.shard_map(lambda a: a, mesh=mesh, in_specs=P("x"), out_specs=P("x"))
    with pytest.raises(stablejit.ShapeError, match="does not divide into 4 blocks"):
        mapped(np.ones((6, 2), np.float32))


def test_reachable_where_jax_experimental_puts_it():
    from stablejit.experimental.shard_map import shard_map

    assert shard_map is stablejit.shard_map
