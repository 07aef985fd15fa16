"""examples/per_example_gradients.py: differentially private SGD with vmap(grad) learns
the digits, and its per-example gradients equal a loop of grad over the examples."""

from __future__ import annotations

import importlib.util
import pathlib

import numpy as np
import stablejit
import stablejit.numpy as snp

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "per_example_gradients.py"


def _load():
    spec = importlib.util.spec_from_file_location("per_example_gradients", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_private_training_learns_the_digits(capsys):
    accuracy = _load().main()
    assert "test accuracy" in capsys.readouterr().out
    assert accuracy >= 0.8, f"test accuracy {accuracy:.3f}"


def test_per_example_gradients_equal_a_loop_of_grad():
    ex = _load()
    params = ex.init_params(np.random.default_rng(1), [64, 16, 10])
    x = np.random.default_rng(2).random((5, 64)).astype(np.float32)
    y = np.arange(5, dtype=np.int32)
    batched = stablejit.vmap(stablejit.grad(ex.loss), in_axes=(None, 0, 0))(params, x, y)
    for i in range(5):
        one = stablejit.grad(ex.loss)(params, snp.asarray(x[i]), snp.asarray(y[i]))
        for layer_b, layer_1 in zip(batched, one, strict=True):
            for k in ("w", "b"):
                np.testing.assert_allclose(np.asarray(layer_b[k])[i], np.asarray(layer_1[k]),
                                           rtol=2e-5, atol=1e-6)
