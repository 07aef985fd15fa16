"""Programs over a mesh (shard_map, jit of a shard_map, pmap, jit with shardings) called
in every mode: eagerly, inside lazy() between recorded ops (they run at once, on their
mesh), on the native and Python recorders; over meshes of 1, 2 and 4 devices; and the
eager ops that follow on their sharded results. A one-device mesh broke both: its
shardings named an axis of size 1 and counted as split, so an eager op met two meshes,
and in lazy() the program was recorded as a one-device tape entry that XLA refused."""

import jax
import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp
from stablejit import recorder_native
from stablejit.sharding import Mesh, NamedSharding
from stablejit.sharding import PartitionSpec as P

pytestmark = pytest.mark.host_devices(4)

X = np.arange(8.0, dtype=np.float32)


def _mesh(n):
    return Mesh(np.array(stablejit.devices()[:n]), ("i",))


# name, make(mesh) -> a function of one f32[8] tensor that runs over the mesh
PROGRAMS = [
    ("shard_map", lambda m: stablejit.shard_map(lambda b: b * 2, m, in_specs=P("i"),
                                                out_specs=P("i"))),
    ("shard_map psum", lambda m: stablejit.shard_map(
        lambda b: b / stablejit.lax.psum(snp.sum(b), "i"), m, in_specs=P("i"),
        out_specs=P("i"))),
    ("jit of shard_map", lambda m: stablejit.jit(lambda x: stablejit.shard_map(
        lambda b: b + 1, m, in_specs=P("i"), out_specs=P("i"))(x) * 3)),
    ("jit in_shardings", lambda m: stablejit.jit(
        lambda x: x * 2, in_shardings=NamedSharding(m, P("i")))),
    ("sharding constraint", lambda m: stablejit.jit(
        lambda x: stablejit.lax.with_sharding_constraint(x + 1, NamedSharding(m, P("i"))))),
    ("pmap", lambda m: lambda x: snp.reshape(stablejit.pmap(
        lambda r: r - 1, devices=list(m.devices.flat))(snp.reshape(x, (m.devices.size, -1))),
        (-1,))),
]


def _reference(name):
    f = {"shard_map": lambda x: x * 2, "shard_map psum": lambda x: x / x.sum(),
         "jit of shard_map": lambda x: (x + 1) * 3, "jit in_shardings": lambda x: x * 2,
         "sharding constraint": lambda x: x + 1, "pmap": lambda x: x - 1}[name]
    y = f(X * 0.5)
    return (y + 1) * 2


@pytest.mark.parametrize("native", [True, False], ids=["native", "python"])
@pytest.mark.parametrize("n", [1, 2, 4])
@pytest.mark.parametrize("name,make", PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_mesh_programs_run_eagerly_and_in_lazy(name, make, n, native):
    if native and not recorder_native.available():
        pytest.skip("no native recorder in this build")
    f = make(_mesh(n))
    want = _reference(name)
    was = recorder_native.installed()
    recorder_native.install(native)
    try:
        eager = (f(snp.asarray(X) * 0.5) + 1) * 2  # eager ops on the sharded result
        np.testing.assert_allclose(np.asarray(eager), want, rtol=1e-6)
        with stablejit.lazy():
            x = snp.asarray(X) * 0.5  # recorded before: read when the program runs
            y = (f(x) + 1) * 2  # recorded after, on its result
        np.testing.assert_allclose(np.asarray(y), want, rtol=1e-6)
    finally:
        recorder_native.install(was)


SPECS = [P(), P("x"), P(None, "y"), P(("x", "y")), P("y", "x"), P(None, None)]


@pytest.mark.parametrize("shape", [(1, 1), (4, 1), (1, 4), (2, 2)])
@pytest.mark.parametrize("spec", SPECS, ids=str)
def test_is_fully_replicated_matches_jax(shape, spec):
    devices = np.array(stablejit.devices()[:int(np.prod(shape))]).reshape(shape)
    ours = NamedSharding(Mesh(devices, ("x", "y")), spec)
    jdevices = np.array(jax.devices()[:int(np.prod(shape))]).reshape(shape)
    theirs = jax.sharding.NamedSharding(jax.sharding.Mesh(jdevices, ("x", "y")),
                                        jax.sharding.PartitionSpec(*spec))
    assert ours.is_fully_replicated == theirs.is_fully_replicated
