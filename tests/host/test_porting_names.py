"""JAX names a port by import swap reaches for (issue 26), each against jax's behaviour:
Array, device_get, block_until_ready, eval_shape, make_jaxpr, clear_caches,
default_device, local_device_count, tree_util.Partial / register_static,
random.key_data / wrap_key_data, lax.reduce / erf_inv / population_count, and the module
imports stablejit.tree_util, stablejit.debug, stablejit.nn.initializers."""

import dataclasses
import importlib
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp
from stablejit import lax

# ---- module imports ----------------------------------------------------------------------


@pytest.mark.parametrize("name", ["stablejit.tree_util", "stablejit.debug",
                                  "stablejit.nn.initializers"])
def test_namespaces_import_as_modules_in_a_fresh_process(name):
    code = (f"import {name}\nimport {name} as m\nimport stablejit\n"
            f"assert m is stablejit.{name.partition('.')[2]}, m\nprint('ok')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


def test_module_namespaces_hold_jax_s_names():
    tu = importlib.import_module("stablejit.tree_util")
    for n in ("tree_map", "tree_flatten", "tree_unflatten", "tree_leaves", "Partial",
              "register_static", "register_pytree_node", "register_dataclass", "keystr"):
        assert callable(getattr(tu, n)), n
    dbg = importlib.import_module("stablejit.debug")
    assert callable(dbg.print) and callable(dbg.callback)
    init = importlib.import_module("stablejit.nn.initializers")
    w = init.glorot_uniform()(stablejit.random.key(0), (3, 4))
    jw = jax.nn.initializers.glorot_uniform()(jax.random.key(0), (3, 4))
    np.testing.assert_allclose(np.asarray(w), np.asarray(jw), rtol=1e-6)


# ---- Array, device_get, block_until_ready ----------------------------------------------


def test_array_is_the_tensor_type_for_isinstance_and_annotations():
    x = snp.ones((2, 3))
    assert isinstance(x, stablejit.Array) and not isinstance(np.ones(2), stablejit.Array)
    assert isinstance(jnp.ones(2), jax.Array) and not isinstance(np.ones(2), jax.Array)
    seen = []

    @stablejit.jit
    def f(a: stablejit.Array) -> stablejit.Array:
        seen.append(isinstance(a, stablejit.Array))
        return a * 2

    f(x)
    assert seen == [True]


def test_device_get_reads_a_pytree_back_to_numpy_as_jax_does():
    tree = {"a": snp.arange(3.0), "b": [snp.ones((2,)), "text", None, 1.5]}
    got = stablejit.device_get(tree)
    want = jax.device_get({"a": jnp.arange(3.0), "b": [jnp.ones((2,)), "text", None, 1.5]})
    assert type(got["a"]) is type(want["a"]) is np.ndarray
    np.testing.assert_array_equal(got["a"], want["a"])
    np.testing.assert_array_equal(got["b"][0], want["b"][0])
    assert got["b"][1:] == want["b"][1:] == ["text", None, 1.5]


def test_block_until_ready_returns_the_pytree_it_waited_for():
    tree = (snp.ones(3) * 2, {"k": snp.zeros(2)}, "not a tensor")
    out = stablejit.block_until_ready(tree)
    jout = jax.block_until_ready((jnp.ones(3) * 2, {"k": jnp.zeros(2)}, "not a tensor"))
    assert out is tree and jout[2] == out[2]
    np.testing.assert_array_equal(np.asarray(out[0]), np.asarray(jout[0]))


# ---- eval_shape and make_jaxpr --------------------------------------------------------


def _sds(tree):
    return jax.tree_util.tree_map(lambda s: (tuple(s.shape), np.dtype(s.dtype).name,
                                             getattr(s, "weak_type", False)), tree)


def test_eval_shape_matches_jax_and_runs_nothing():
    calls = []

    def f(x, y, scale):
        calls.append(1)
        return {"sum": (x @ y).sum(axis=0), "pair": (x.T, y * scale)}

    args = (stablejit.ShapeDtypeStruct((1000, 2000), np.float32),
            stablejit.ShapeDtypeStruct((2000, 30), np.float32))
    out = stablejit.eval_shape(f, *args, scale=2.0)
    jout = jax.eval_shape(f, jax.ShapeDtypeStruct((1000, 2000), jnp.float32),
                          jax.ShapeDtypeStruct((2000, 30), jnp.float32), scale=2.0)
    assert _sds(out) == _sds(jout)
    assert all(isinstance(s, stablejit.ShapeDtypeStruct) for s in stablejit.tree.leaves(out))
    assert len(calls) == 2  # traced once by each library; nothing compiled or run
    # concrete arguments give their types only; a Python scalar output is weak
    out = stablejit.eval_shape(lambda a: (a.astype(np.int32), 1.0), np.ones((2, 3)))
    jout = jax.eval_shape(lambda a: (a.astype(np.int32), 1.0), np.ones((2, 3), np.float32))
    assert _sds(out)[0] == _sds(jout)[0] and out[1].weak_type and jout[1].weak_type
    assert stablejit.ShapeDtypeStruct((2,), "float32") == stablejit.ShapeDtypeStruct(
        (2,), np.float32)


def test_make_jaxpr_gives_our_ir_text_and_jax_s_avals():
    def f(x, n):
        return snp.sin(x) * n, x.sum()

    def jf(x, n):
        return jnp.sin(x) * n, x.sum()

    x = np.ones((2, 3), np.float32)
    closed = stablejit.make_jaxpr(f, static_argnums=1)(x, 3)
    jclosed = jax.make_jaxpr(jf, static_argnums=1)(x, 3)
    text = str(closed)
    assert "sin(" in text and "reduce_sum" in text and "f32[2,3]" in text
    assert [(a.shape, a.dtype) for a in closed.in_avals] == [
        (a.shape, a.dtype) for a in jclosed.in_avals]
    assert [(a.shape, a.dtype) for a in closed.out_avals] == [
        (a.shape, a.dtype) for a in jclosed.out_avals]
    assert closed.eqns and str(closed.jaxpr) == text
    closed, shape = stablejit.make_jaxpr(f, static_argnums=1, return_shape=True)(x, 3)
    _, jshape = jax.make_jaxpr(jf, static_argnums=1, return_shape=True)(x, 3)
    assert _sds(shape) == _sds(jshape)


def test_clear_caches_makes_jit_trace_again():
    f = stablejit.jit(lambda a: a + 1)
    x = snp.ones(3)
    f(x)
    f(x)
    assert f.traces == 1
    stablejit.clear_caches()
    np.testing.assert_array_equal(np.asarray(f(x)), 2.0)
    assert f.traces == 2
    jax.clear_caches()  # jax's exists with the same (no-argument) signature


# ---- devices ---------------------------------------------------------------------------


def test_local_device_count_and_default_device():
    assert stablejit.local_device_count() == len(stablejit.local_devices())
    assert stablejit.local_device_count("host") == jax.local_device_count("cpu")
    dev = stablejit.devices("host")[0]
    with stablejit.default_device(dev):
        t = snp.ones(2)
        assert t._backend.device == dev
    with jax.default_device(jax.devices("cpu")[0]):
        assert jnp.ones(2).devices() == {jax.devices("cpu")[0]}
    with stablejit.default_device("cpu"):  # jax's platform name
        assert snp.zeros(1)._backend.platform == "host"
    with stablejit.default_device(None):
        snp.ones(1)
    with pytest.raises(TypeError, match="default_device: expected a device"):
        with stablejit.default_device(3.5):
            pass


# ---- tree_util -------------------------------------------------------------------------


def _scale(x, factor, *, shift):
    return x * factor + shift


def test_partial_is_a_pytree_as_in_jax():
    p = stablejit.tree_util.Partial(_scale, snp.asarray(2.0), shift=snp.asarray(1.0))
    jp = jax.tree_util.Partial(_scale, jnp.asarray(2.0), shift=jnp.asarray(1.0))
    leaves, td = stablejit.tree_util.tree_flatten(p)
    jleaves, _ = jax.tree_util.tree_flatten(jp)
    assert [float(v) for v in leaves] == [float(v) for v in jleaves] == [2.0, 1.0]
    q = stablejit.tree_util.tree_unflatten(td, [snp.asarray(3.0), snp.asarray(0.5)])
    assert isinstance(q, stablejit.tree_util.Partial) and float(q(2.0)) == 6.5

    @stablejit.jit
    def apply(fn, x):
        return fn(x)

    @jax.jit
    def japply(fn, x):
        return fn(x)

    np.testing.assert_allclose(np.asarray(apply(p, np.arange(3.0))),
                               np.asarray(japply(jp, jnp.arange(3.0))))
    # returned from jit: the function comes back as structure
    out = stablejit.jit(lambda s: stablejit.tree_util.Partial(_scale, s, shift=0.0))(2.0)
    assert float(out(5.0)) == 10.0


def test_register_static_makes_instances_structure():
    @stablejit.tree_util.register_static
    @dataclasses.dataclass(frozen=True)
    class Mode:
        name: str

    @jax.tree_util.register_static
    @dataclasses.dataclass(frozen=True)
    class JMode:
        name: str

    assert stablejit.tree_util.tree_leaves([Mode("a"), 1]) == [1]
    assert jax.tree_util.tree_leaves([JMode("a"), 1]) == [1]

    @stablejit.jit
    def f(x, mode):
        return x + 1 if mode.name == "add" else x - 1

    x = np.ones(2, np.float32)
    np.testing.assert_array_equal(np.asarray(f(x, Mode("add"))), 2.0)
    np.testing.assert_array_equal(np.asarray(f(x, Mode("sub"))), 0.0)
    assert f.traces == 2


# ---- random keys -----------------------------------------------------------------------


def test_key_data_and_wrap_key_data_round_trip_as_in_jax():
    k = stablejit.random.key(42)
    data = stablejit.random.key_data(k)
    jdata = jax.random.key_data(jax.random.key(42))
    np.testing.assert_array_equal(np.asarray(data), np.asarray(jdata))
    keys = stablejit.random.split(stablejit.random.wrap_key_data(data), 3)
    jkeys = jax.random.split(jax.random.wrap_key_data(jdata), 3)
    np.testing.assert_array_equal(np.asarray(stablejit.random.key_data(keys)),
                                  np.asarray(jax.random.key_data(jkeys)))
    u = stablejit.random.uniform(stablejit.random.wrap_key_data(np.asarray(jdata)), (4,))
    np.testing.assert_array_equal(np.asarray(u), np.asarray(
        jax.random.uniform(jax.random.wrap_key_data(jdata), (4,))))
    with pytest.raises(TypeError, match="wrap_key_data: expected keys"):
        stablejit.random.wrap_key_data(np.zeros(3, np.uint32))
    with pytest.raises(ValueError, match="impl="):
        stablejit.random.wrap_key_data(np.asarray(jdata), impl="rbg")


# ---- lax -------------------------------------------------------------------------------


def _reduce_cases():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4) / 7 - 1
    return [
        ("sum", x, 0.0, "add", (0, 2)),
        ("sum-init", x, 1.0, "add", (1,)),
        ("max", x, -np.inf, "max", (2, 0)),
        ("min-all", x, np.inf, "min", (0, 1, 2)),
        ("prod", x, 1.0, "mul", (1,)),
        ("no-axes", x, 0.0, "add", ()),
        ("int-max", np.arange(12, dtype=np.int32).reshape(3, 4) - 5, np.int32(-100), "max",
         (0,)),
    ]


@pytest.mark.parametrize("label,x,init,op,dims", _reduce_cases(),
                         ids=[c[0] for c in _reduce_cases()])
def test_reduce_matches_jax(label, x, init, op, dims):
    want = jax.lax.reduce(x, x.dtype.type(init), getattr(jax.lax, op), dims)
    for fn in (lax.reduce, stablejit.jit(lax.reduce, static_argnums=(2, 3))):
        got = fn(x, x.dtype.type(init), getattr(lax, op), dims)
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)


def test_reduce_with_a_python_computation_and_pytrees_matches_jax():
    x = np.random.default_rng(0).uniform(0.5, 1.5, (5, 7)).astype(np.float32)

    def both(a, b):  # (product, sum) of a pair of operands
        return a[0] * b[0], a[1] + b[1]

    want = jax.lax.reduce((x, x), (np.float32(1), np.float32(0)), both, (1,))
    got = lax.reduce((x, x), (np.float32(1), np.float32(0)), both, (1,))
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5)

    def absmax(a, b):  # not a lax monoid: the generic path
        return jnp.maximum(jnp.abs(a), jnp.abs(b))

    def sabsmax(a, b):
        return snp.maximum(snp.abs(a), snp.abs(b))

    want = jax.lax.reduce(x - 1, np.float32(0), absmax, (0,))
    got = stablejit.jit(lambda v: lax.reduce(v, np.float32(0), sabsmax, (0,)))(x - 1)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want))
    with pytest.raises(TypeError, match="lax.reduce: computation returned"):
        lax.reduce(x, np.float32(0), lambda a, b: (a + b).astype(np.int32), (0,))


def test_reduce_is_differentiable_through_the_computation():
    x = np.random.default_rng(1).standard_normal((4, 3)).astype(np.float32)

    def f(v, red, m):
        return red(v * v, np.float32(0), lambda a, b: a + b * m, (0,)).sum()

    g = stablejit.grad(lambda v: f(v, lax.reduce, 1.0))(x)
    jg = jax.grad(lambda v: f(v, jax.lax.reduce, 1.0))(x)
    np.testing.assert_allclose(np.asarray(g), np.asarray(jg), rtol=1e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_erf_inv_matches_jax(dtype):
    x = np.array([-1.0, -0.999, -0.5, 0.0, 1e-4, 0.3, 0.9, 0.99999, 1.0, 1.5], dtype)
    with jax.enable_x64(True):
        want = np.asarray(jax.lax.erf_inv(x))
    got = np.asarray(lax.erf_inv(x))
    assert got.dtype == dtype
    np.testing.assert_allclose(got, want, rtol=2e-6 if dtype == np.float32 else 1e-12)
    np.testing.assert_allclose(np.asarray(stablejit.jit(lax.erf_inv)(x)), want,
                               rtol=2e-6 if dtype == np.float32 else 1e-12)
    with pytest.raises(TypeError, match="erf_inv needs a floating-point"):
        lax.erf_inv(np.arange(3))


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.int32, np.uint32,
                                   np.int64, np.uint64])
def test_population_count_matches_jax(dtype):
    info = np.iinfo(dtype)
    x = np.array([0, 1, 7, info.max, info.min, 12345 % int(info.max)], dtype)
    if info.min < 0:
        x = np.concatenate([x, np.array([-1, -2, -128 % int(info.max) * -1], dtype)])
    with jax.enable_x64(True):
        want = np.asarray(jax.lax.population_count(x))
    for fn in (lax.population_count, stablejit.jit(lax.population_count)):
        got = np.asarray(fn(x))
        assert got.dtype == want.dtype == dtype
        np.testing.assert_array_equal(got, want)
    with pytest.raises(TypeError, match="population_count needs an integer"):
        lax.population_count(np.ones(2, np.float32))
