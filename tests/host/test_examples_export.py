"""examples/export_serve.py: the trained digits MLP, served from a second process that
has only the artifact, gives this process's logits bit for bit without compiling."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "export_serve.py"


def test_export_and_serve_from_a_second_process():
    pytest.importorskip("sklearn")
    env = {**os.environ, "STABLEJIT_CACHE_DIR": ""}
    r = subprocess.run([sys.executable, str(EXAMPLE)], capture_output=True, text=True,
                       env=env, timeout=120)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "server: served 359 images, compiled 0 programs" in r.stdout, r.stdout
    assert "served logits equal this process's bit for bit" in r.stdout
    accuracy = float(r.stdout.split("test accuracy ")[1].split(";")[0])
    assert accuracy >= 0.95, r.stdout
