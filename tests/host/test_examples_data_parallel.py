"""examples/data_parallel.py on 8 host devices (a subprocess with 8 forced devices when
this run has fewer; see conftest.py): the same accuracy as on one device."""

from __future__ import annotations

import importlib.util
import pathlib

import pytest

pytestmark = pytest.mark.host_devices(8)

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "data_parallel.py"


def _load():
    spec = importlib.util.spec_from_file_location("data_parallel", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_data_parallel_training_matches_one_device(capsys):
    example = _load()
    eight = example.main(devices=8, epochs=4, hidden=(64,))
    out = capsys.readouterr().out
    assert "epoch   4" in out and "on 8 device(s) in 1 process(es)" in out
    one = example.main(devices=1, epochs=4, hidden=(64,), verbose=False)
    assert eight >= 0.9, f"test accuracy {eight:.3f} after 4 epochs on 8 devices"
    # the same updates up to float rounding: at most one test image may flip
    assert abs(eight - one) <= 1 / 359 + 1e-9, (eight, one)
