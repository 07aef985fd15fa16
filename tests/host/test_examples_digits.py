"""examples/digits_mlp.py: a reduced run still learns the digits, and the jitted train
step is one compiled program that is traced once."""

from __future__ import annotations

import importlib.util
import pathlib

import numpy as np

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "digits_mlp.py"


def _load():
    spec = importlib.util.spec_from_file_location("digits_mlp", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_reduced_training_reaches_high_accuracy(capsys):
    digits = _load()
    accuracy = digits.main(epochs=8, hidden=(64,), verbose=True)
    out = capsys.readouterr().out
    assert "epoch   8" in out and "test accuracy" in out
    assert accuracy >= 0.95, f"test accuracy {accuracy:.3f} after 8 epochs"


def test_train_step_traces_once_and_lowers_loss():
    from stablejit import nn

    digits = _load()
    x, y, _, _ = digits.load()
    params = digits.init_params(np.random.default_rng(0), (64, 32, 10))
    opt = nn.adam(1e-2)
    state = opt.init(params)
    step = digits.make_train_step(opt)
    losses = []
    for _ in range(20):
        params, state, loss = step(params, state, x[:128], y[:128])
        losses.append(float(loss))
    assert step.traces == 1
    assert losses[-1] < 0.5 * losses[0]
