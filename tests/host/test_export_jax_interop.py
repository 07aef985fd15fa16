"""Interop with jax.export: artifacts jax.export wrote run on stablejit (from_jax), with
jax's calling convention (platform index, unused arguments dropped, symbolic dimensions
and shape assertions) handled, bit-exact with jax running them; and stablejit's
artifacts written for jax (to_jax) run in jax, bit-exact with stablejit."""

from __future__ import annotations

import importlib.util
import pathlib
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp
from jax import export as jex
from stablejit import export as E

pytest.importorskip("flatbuffers")  # jax.export's (de)serializer needs it

S = stablejit.ShapeDtypeStruct
EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"
RNG = np.random.default_rng(0)
W1, B1 = RNG.normal(size=(64, 32)).astype(np.float32), RNG.normal(size=32).astype(np.float32)
W2 = RNG.normal(size=(32, 10)).astype(np.float32)
K1 = RNG.normal(size=(3, 3, 1, 8)).astype(np.float32)
WD = RNG.normal(size=(4 * 4 * 8, 10)).astype(np.float32)


def jax_mlp(x):
    return jax.nn.relu(x @ W1 + B1) @ W2


def jax_cnn(x):
    y = jax.lax.conv_general_dilated(x, K1, (1, 1), "SAME",
                                     dimension_numbers=("NHWC", "HWIO", "NHWC"))
    y = jax.lax.reduce_window(jax.nn.relu(y), -jnp.inf, jax.lax.max, (1, 2, 2, 1),
                              (1, 2, 2, 1), "VALID")
    return jax.nn.log_softmax(y.reshape(y.shape[0], -1) @ WD)


JAX_MODELS = {"mlp": (jax_mlp, (64,)), "cnn": (jax_cnn, (8, 8, 1))}


def _bits(a):
    a = np.asarray(a)
    return a.view(f"u{a.dtype.itemsize}")


@pytest.mark.parametrize("platforms", [("cpu",), ("cpu", "cuda")], ids=["cpu", "cpu+cuda"])
@pytest.mark.parametrize("batch", ["b", 7], ids=["symbolic", "static"])
@pytest.mark.parametrize("model", JAX_MODELS)
@pytest.mark.host_default
def test_jax_exported_models_run_bit_exact(model, batch, platforms):
    f, features = JAX_MODELS[model]
    shape = jex.symbolic_shape(f"{batch}, " + ", ".join(map(str, features)))
    jexp = jex.export(jax.jit(f), platforms=platforms)(jax.ShapeDtypeStruct(shape, np.float32))
    exp = E.from_jax(jexp.serialize())
    assert exp.platforms == tuple("host" if p == "cpu" else p for p in platforms)
    assert str(exp.in_avals[0].shape[0]) == str(batch)
    for n in ((1, 7, 64) if batch == "b" else (7,)):
        x = np.random.default_rng(n).normal(size=(n, *features)).astype(np.float32)
        got, want = exp.call(x), jexp.call(x)
        assert np.array_equal(_bits(got), _bits(want)), n
    jitted = stablejit.jit(lambda x: exp.call(x) * 2)(x)
    np.testing.assert_array_equal(np.asarray(jitted), 2 * np.asarray(want))


def test_jax_calling_convention_pytrees_and_unused_arguments():
    def f(inputs, unused, scale):
        return {"y": inputs["x"] * scale, "n": jnp.sum(inputs["x"], axis=0)}
    jexp = jex.export(jax.jit(f))({"x": jax.ShapeDtypeStruct((5, 3), np.float32)},
                                 jax.ShapeDtypeStruct((2,), np.int32),
                                 jax.ShapeDtypeStruct((), np.float32))
    assert jexp.module_kept_var_idx == (0, 2)  # jax dropped the unused argument
    exp = E.from_jax(jexp.serialize())
    x = np.arange(15, dtype=np.float32).reshape(5, 3)
    got = exp.call({"x": x}, np.zeros(2, np.int32), np.float32(2.0))
    want = jexp.call({"x": x}, np.zeros(2, np.int32), np.float32(2.0))
    assert sorted(got) == ["n", "y"]
    for k in got:
        np.testing.assert_array_equal(np.asarray(got[k]), np.asarray(want[k]))
    batched = stablejit.vmap(lambda x: exp.call({"x": x}, np.zeros(2, np.int32),
                                                np.float32(3.0))["y"])(np.stack([x, x]))
    np.testing.assert_array_equal(np.asarray(batched)[1], 3 * x)


def test_jax_shape_assertions_are_checked_when_a_call_specialises():
    b = jex.symbolic_shape("b, 4", constraints=["b >= 2"])
    jexp = jex.export(jax.jit(lambda x: x * 2))(jax.ShapeDtypeStruct(b, np.float32))
    exp = E.from_jax(jexp.serialize())
    np.testing.assert_array_equal(np.asarray(exp.call(np.ones((2, 4), np.float32))), 2.0)
    with pytest.raises(ValueError, match=r"b = 1: .*symbolic shape constraint b >= 2"):
        exp.call(np.ones((1, 4), np.float32))
    with pytest.raises(ValueError, match=r"has size 5 in axis 1, where the function was "
                                         r"exported for 4"):
        exp.call(np.ones((3, 5), np.float32))


@pytest.mark.parametrize("data, match", [
    (b"\x00" * 64, r"not a jax.export artifact"),
    (b"SJEXPORT" + b"\x00" * 64, r"a stablejit artifact, not a jax.export one; load it "
                                 r"with stablejit.export.deserialize"),
])
def test_bytes_that_are_not_a_jax_artifact_are_clear_errors(data, match):
    with pytest.raises(E.ArtifactError, match=match):
        E.from_jax(data)


def _example(name: str):
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("batch", ["b", "7"])
@pytest.mark.parametrize("model", ["digits_mlp", "digits_cnn"])
def test_stablejit_artifacts_for_jax_run_in_jax_bit_exact(model, batch):
    m = _example(model)
    params = m.init_params(np.random.default_rng(0), *([[64, 32, 10]] if model ==
                                                         "digits_mlp" else []))
    features = (64,) if model == "digits_mlp" else (8, 8, 1)
    f = stablejit.jit(lambda x: m.forward(params, x))
    exp = E.export(f)(S(E.symbolic_shape(f"{batch}, " + ", ".join(map(str, features))),
                        "float32"))
    jexp = jex.deserialize(E.to_jax(exp))
    # exported for the default platform, as jax's export is: jax names the host "cpu"
    assert exp.platforms == (stablejit.default_platform(),)
    assert str(jexp.in_avals[0].shape[0]) == batch and jexp.platforms == tuple(
        {"host": "cpu"}.get(p, p) for p in exp.platforms)
    for n in ((1, 7, 64) if batch == "b" else (7,)):
        x = np.random.default_rng(n).normal(size=(n, *features)).astype(np.float32)
        want = np.asarray(exp.call(x))
        assert np.array_equal(_bits(jexp.call(x)), _bits(want))
        assert np.array_equal(_bits(jax.jit(jexp.call)(x)), _bits(want))


def test_to_jax_keeps_pytrees_and_dimension_expressions():
    f = stablejit.jit(lambda x, y: {"a": snp.tanh(x), "b": snp.concatenate([y, y])})
    b = E.symbolic_shape("b, 3")
    c = E.symbolic_shape("c", scope=b[0].scope)
    jexp = jex.deserialize(E.to_jax(E.export(f)(S(b, "float32"), S(c, "float32"))))
    assert [str(a.shape) for a in jexp.out_avals] == ["(b, 3)", "(2*c,)"]
    x, y = np.ones((4, 3), np.float32), np.arange(5, dtype=np.float32)
    out = jexp.call(x, y)
    np.testing.assert_array_equal(np.asarray(out["b"]), np.concatenate([y, y]))
    np.testing.assert_array_equal(np.asarray(out["a"]), np.tanh(x))


@pytest.mark.parametrize("rows, match", [(3, r"breaks the constraint 'b % 2 == 0'"),
                                         (10, r"breaks the constraint 'b <= 8'")])
def test_shape_assertions_in_stablejit_modules_hold_in_jax(rows, match):
    """The module checks its constraints itself (shape_assertion custom calls, as
    jax.export writes them): jax, which never runs stablejit's Python checks and keeps
    no constraints in its format, refuses a bad call with stablejit's message."""
    b = E.symbolic_shape("b, 4", constraints=["b % 2 == 0", "b <= 8"])
    f = stablejit.jit(lambda x, y: x * 2 + y[:, None])
    exp = E.export(f)(S(b, "float32"), S(E.symbolic_shape("b", scope=b[0].scope), "float32"))
    jexp = jex.deserialize(E.to_jax(exp))
    np.testing.assert_array_equal(np.asarray(jexp.call(np.ones((2, 4), np.float32),
                                                       np.ones(2, np.float32))), 3.0)
    with pytest.raises(ValueError) as info:
        jexp.call(np.ones((rows, 4), np.float32), np.ones(rows, np.float32))
    assert re.search(match, str(info.value.__cause__)), info.value.__cause__
