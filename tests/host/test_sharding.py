"""Tensors over several devices and jit with shardings, on 8 host devices (the module
runs in a subprocess with XLA_FLAGS=--xla_force_host_platform_device_count=8 when this
run has fewer; see conftest.py). jax, under the same 8 devices, is the oracle."""

from __future__ import annotations

import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp
from jax.sharding import NamedSharding as JNamed
from jax.sharding import PartitionSpec as JP
from stablejit.sharding import Mesh, NamedSharding, P, SingleDeviceSharding, make_mesh

pytestmark = pytest.mark.host_devices(8)

A = np.arange(8 * 16, dtype=np.float32).reshape(8, 16) / 10

SPECS = [P(), P("x"), P("x", "y"), P(None, "y"), P(("x", "y")), P("y", "x"),
         P(None, ("y", "x"))]


def _shards(x) -> list:
    """(device id, index, replica_id, block) of each addressable shard, jax's or ours."""
    return [(s.device.id, s.index, s.replica_id, np.asarray(s.data))
            for s in x.addressable_shards]


def _same_shards(x, j) -> None:
    ours, theirs = _shards(x), _shards(j)
    assert [o[:3] for o in ours] == [t[:3] for t in theirs]
    for o, t in zip(ours, theirs, strict=True):
        np.testing.assert_array_equal(o[3], t[3])
    for s in x.addressable_shards:  # each block is a tensor on its own device
        assert isinstance(s.data, stablejit.Tensor) and s.data.device == s.device
        assert s.data.shape == np.asarray(x)[s.index].shape and s.data.dtype == x.dtype


@pytest.mark.parametrize("spec", SPECS, ids=map(repr, SPECS))
def test_device_put_shards_like_jax(mesh, jmesh, spec):
    x = stablejit.device_put(A, NamedSharding(mesh, spec))
    j = jax.device_put(A, JNamed(jmesh, JP(*spec)))
    assert x.shape == A.shape and x.dtype == stablejit.dtypes.float32
    np.testing.assert_array_equal(np.asarray(x), A)
    _same_shards(x, j)
    assert x.sharding == NamedSharding(mesh, spec)
    assert x.sharding.devices_indices_map(A.shape) == {
        stablejit.devices()[d.id]: i for d, i in j.sharding.devices_indices_map(A.shape).items()}


LAYOUTS = [  # (name, mesh shape, mesh axes, spec): rows, columns, replicated, a 2-d mesh
    ("rows", (8,), ("i",), P("i")),
    ("columns", (8,), ("i",), P(None, "i")),
    ("replicated", (8,), ("i",), P()),
    ("2d", (4, 2), ("x", "y"), P("x", "y")),
    ("2d_rows_replicated", (4, 2), ("x", "y"), P("x")),
    ("2d_columns_by_y", (2, 4), ("x", "y"), P(None, "y")),
]


@pytest.mark.parametrize("name,shape,axes,spec", LAYOUTS, ids=[c[0] for c in LAYOUTS])
def test_shards_of_a_jit_result_are_jax_shards(name, shape, axes, spec):
    mesh = make_mesh(shape, axes)
    jmesh = jax.make_mesh(shape, axes, axis_types=(jax.sharding.AxisType.Auto,) * len(axes))
    y = stablejit.jit(lambda a: snp.sin(a) * 2, out_shardings=NamedSharding(mesh, spec))(A)
    jy = jax.jit(lambda a: jnp.sin(a) * 2, out_shardings=JNamed(jmesh, JP(*spec)))(A)
    assert len(y.addressable_shards) == 8
    _same_shards(y, jy)
    s = y.addressable_shards[3]
    np.testing.assert_allclose(np.asarray(s.data + 1), np.asarray(jy)[s.index] + 1,
                               rtol=1e-6)  # a block computes like any tensor
    assert f"replica_id={s.replica_id}" in repr(s) and "index=" in repr(s)


def test_shards_of_one_device_and_scalar_tensors_are_jax_shards(mesh, jmesh):
    d = stablejit.devices()[2]
    x = stablejit.device_put(A, d)
    j = jax.device_put(A, jax.devices()[2])
    _same_shards(x, j)
    assert x.addressable_shards[0].data is x
    s = stablejit.device_put(np.float32(3), NamedSharding(mesh, P()))
    js = jax.device_put(np.float32(3), JNamed(jmesh, JP()))
    _same_shards(s, js)
    assert [sh.replica_id for sh in s.addressable_shards] == list(range(8))


def test_shards_without_jax_loaded_are_tensors():
    """jaxlib's arrays have no .shape until jax is imported: a program that never imports
    jax still gets Tensors with shape, dtype and device."""
    code = (
        "import sys, numpy as np, stablejit\n"
        "from stablejit.sharding import NamedSharding, P, make_mesh\n"
        "m = make_mesh((4, 2), ('x', 'y'))\n"
        "x = stablejit.device_put(np.arange(32.0, dtype=np.float32).reshape(8, 4),\n"
        "                         NamedSharding(m, P('x', 'y')))\n"
        "s = x.addressable_shards[5]\n"
        "assert 'jax' not in sys.modules\n"
        "print(type(s.data).__name__, s.data.shape, s.data.dtype, s.data.device == s.device,\n"
        "      s.index, s.replica_id, np.asarray(s.data).tolist())\n")
    # this module runs with 8 forced host devices (conftest.py): the child inherits them
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.split() == (
        "Tensor (2, 2) float32 True (slice(4, 6, None), slice(2, 4, None)) 0 "
        "[[18.0, 19.0], [22.0, 23.0]]").split()


def test_sharded_tensor_prints_its_global_value_and_sharding(mesh):
    x = stablejit.device_put(A[:4, :4], NamedSharding(mesh, P("x", "y")))
    assert str(x) == str(A[:4, :4])
    assert "spmd:host:8" in repr(x) and "PartitionSpec('x', 'y')" in repr(x)


def test_single_device_put_and_sharding():
    d = stablejit.devices()[3]
    x = stablejit.device_put(A, SingleDeviceSharding(d))
    assert x.device == d and x.sharding == SingleDeviceSharding(d)
    assert [s.device for s in x.addressable_shards] == [d]
    y = stablejit.device_put(A, d)
    assert y.device == d


def test_device_put_errors_say_what_to_do(mesh):
    with pytest.raises(ValueError, match="does not divide into 4 blocks"):
        stablejit.device_put(np.ones((6, 2)), NamedSharding(mesh, P("x")))
    with pytest.raises(ValueError, match="axis 'z'"):
        NamedSharding(mesh, P("z"))
    with pytest.raises(ValueError, match="needs 16 devices"):
        make_mesh((16,), ("i",))
    with pytest.raises(ValueError, match="one name per axis"):
        Mesh(np.array(stablejit.devices()), ("a", "b"))


DUPLICATED = [P("x", "x"), P(("x", "x")), P("x", None, "x"), P(("x", "y"), "y"),
              P(None, ("y", "x"), ("x",))]


@pytest.mark.parametrize("spec", DUPLICATED, ids=map(repr, DUPLICATED))
def test_a_spec_naming_a_mesh_axis_twice_is_refused_as_jax(mesh, jmesh, spec):
    """jax refuses the spec (DuplicateSpecError); it was accepted, device_put dropped two
    of the blocks, and jit failed with MLIR's "duplicate axis ref"."""
    import jax  # noqa: PLC0415 - the oracle, only where the test runs
    with pytest.raises(Exception, match="duplicate"):  # (jax's DuplicateSpecError)
        jax.sharding.NamedSharding(jmesh, jax.sharding.PartitionSpec(*spec))
    with pytest.raises(ValueError, match="more than once") as e:
        NamedSharding(mesh, spec)
    assert "test_sharding.py" in str(e.value)
    with pytest.raises(ValueError, match="more than once"):
        stablejit.shard_map(lambda v: v, mesh=mesh, in_specs=spec, out_specs=P())(
            np.ones((4, 4, 4), np.float32))


def test_jit_objects_of_one_sharded_program_compile_it_once(mesh, monkeypatch):
    """As single-device programs do (docs/caching.md): each jit object compiled its own."""
    from stablejit.runtime import spmd as rt  # noqa: PLC0415
    compiles = []
    real = rt.SpmdExecutable._compile.__func__
    monkeypatch.setattr(rt.SpmdExecutable, "_compile",
                        classmethod(lambda cls, *a: compiles.append(1) or real(cls, *a)))
    x = np.arange(8 * 4, dtype=np.float32).reshape(8, 4)
    for _ in range(3):
        f = stablejit.jit(lambda v: snp.tanh(v * 3.0).sum(0),
                          in_shardings=NamedSharding(mesh, P("x")))
        np.testing.assert_allclose(np.asarray(f(x)), np.tanh(x * 3.0).sum(0), rtol=1e-5)
    assert len(compiles) == 1


def test_export_refuses_a_function_over_several_devices(mesh):
    """An artifact holds one device's program: jit's shardings were dropped silently, and
    a shard_map failed with StableHLO's "unknown mesh" parse error."""
    from stablejit import export  # noqa: PLC0415
    x = np.ones((8, 4), np.float32)
    sharded = NamedSharding(mesh, P("x"))
    for f in (stablejit.jit(lambda v: v * 2, in_shardings=sharded),
              stablejit.jit(lambda v: v * 2, out_shardings=sharded),
              stablejit.jit(stablejit.shard_map(lambda b: b * 2, mesh=mesh, in_specs=P("x"),
                                                out_specs=P("x"))),
              stablejit.jit(lambda v: stablejit.lax.with_sharding_constraint(v * 2, sharded))):
        with pytest.raises(TypeError, match="spans several devices") as e:
            export.export(f)(x)
        assert "test_sharding.py" in str(e.value)


def test_eager_ops_on_sharded_tensors_keep_a_sharding(mesh):
    x = stablejit.device_put(A, NamedSharding(mesh, P("x", "y")))
    y = snp.sin(x) * 2 + 1
    np.testing.assert_allclose(np.asarray(y), np.sin(A) * 2 + 1, rtol=1e-5, atol=1e-6)
    assert y.sharding == NamedSharding(mesh, P("x", "y"))
    s = x.sum(axis=0)
    np.testing.assert_allclose(np.asarray(s), A.sum(axis=0), rtol=1e-6)


CASES = [  # (function, its jax twin, in specs, out spec)
    ("matmul", lambda a, b: a @ b.T, lambda a, b: a @ b.T, (P("x"), P()), P("x")),
    ("reduce", lambda a, b: (a * b).sum(), lambda a, b: (a * b).sum(), (P("x", "y"), P("y")),
     P()),
    ("elementwise", lambda a, b: snp.tanh(a) - b, lambda a, b: jnp.tanh(a) - b,
     (P(None, "y"), P("x")), P("x", "y")),
    ("transpose", lambda a, b: a.T + b.T, lambda a, b: a.T + b.T, (P("x"), P("x")),
     P(None, "x")),
]


@pytest.mark.parametrize("name,f,jf,ins,out", CASES, ids=[c[0] for c in CASES])
def test_jit_with_shardings_equals_one_device_and_jax(mesh, jmesh, name, f, jf, ins, out):
    b = np.cos(A)
    sharded = stablejit.jit(f, in_shardings=tuple(NamedSharding(mesh, s) for s in ins),
                            out_shardings=NamedSharding(mesh, out))
    got = sharded(A, b)
    assert got.sharding == NamedSharding(mesh, out)
    one = stablejit.jit(f)(A, b)
    jgot = jax.jit(jf, in_shardings=tuple(JNamed(jmesh, JP(*s)) for s in ins),
                   out_shardings=JNamed(jmesh, JP(*out)))(A, b)
    np.testing.assert_allclose(np.asarray(got), np.asarray(one), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(got), np.asarray(jgot), rtol=1e-5, atol=1e-5)


def test_jit_of_sharded_arguments_runs_over_their_devices(mesh):
    x = stablejit.device_put(A, NamedSharding(mesh, P("x")))
    f = stablejit.jit(lambda u: snp.exp(u) / u.sum())
    got = f(x)
    assert len(got.addressable_shards) == 8
    np.testing.assert_allclose(np.asarray(got), np.exp(A) / A.sum(), rtol=1e-5)
    assert got.sharding.mesh == mesh  # the partitioner's choice, read back over the mesh


def test_with_sharding_constraint_is_emitted_as_jax_does(mesh, jmesh):
    def f(a):
        return stablejit.lax.with_sharding_constraint(a * 2, NamedSharding(mesh, P(None, "y")))

    def jf(a):
        return jax.lax.with_sharding_constraint(a * 2, JNamed(jmesh, JP(None, "y")))

    g = stablejit.jit(f, in_shardings=NamedSharding(mesh, P("x")))
    got = g(A)
    np.testing.assert_allclose(np.asarray(got), A * 2)
    prog = g._cache.get(next(iter(g._cache.keys()))).prog
    text = prog.stablehlo(prog.shardings_for([stablejit.device_put(A, NamedSharding(
        mesh, P("x")))]))
    jtext = jax.jit(jf, in_shardings=JNamed(jmesh, JP("x"))).lower(A).as_text()
    for piece in ('sdy.mesh @mesh = <["x"=4, "y"=2]>', "mhlo.num_partitions = 8",
                  'sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>',
                  '@mesh, [{}, {"y"}]>'):
        assert piece in text and piece in jtext, piece
    assert "sdy.sharding_constraint" in text


def test_with_sharding_constraint_outside_jit_places_the_value(mesh):
    x = stablejit.lax.with_sharding_constraint(A, NamedSharding(mesh, P("y")))
    assert x.sharding == NamedSharding(mesh, P("y"))


def test_grad_through_a_sharded_jit(mesh):
    w = stablejit.device_put(A, NamedSharding(mesh, P("x")))

    def loss(w, b):
        return snp.sum(snp.tanh(w * b) ** 2)

    g = stablejit.jit(stablejit.grad(loss))(w, np.cos(A))
    jg = jax.grad(lambda w, b: jnp.sum(jnp.tanh(w * b) ** 2))(A, np.cos(A))
    np.testing.assert_allclose(np.asarray(g), np.asarray(jg), rtol=1e-5, atol=1e-6)


def test_dump_shows_the_shardings_and_the_collectives_xla_inserted(mesh, tmp_path,
                                                                  monkeypatch):
    monkeypatch.setenv("STABLEJIT_DUMP_TO", str(tmp_path))
    f = stablejit.jit(lambda a: (a * 3).sum(), in_shardings=NamedSharding(mesh, P("x")))
    np.testing.assert_allclose(float(f(A)), float((A * 3).sum()), rtol=1e-5)
    hlo = next(tmp_path.glob("*.hlo.txt")).read_text()
    assert "all-reduce" in hlo and "num_partitions=8" in hlo
    meta = next(tmp_path.glob("*.json")).read_text()
    assert "PartitionSpec('x')" in meta and "Mesh('x': 4, 'y': 2)" in meta
    assert 'sdy.sharding<@mesh, [{"x"}, {}]>' in next(tmp_path.glob("*.mlir")).read_text()
