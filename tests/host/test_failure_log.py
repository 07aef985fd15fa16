"""benchmarks/failure_log.py: the failures of a time-boxed run (a GPU session's, which its
box may end before pytest's summary) are written as they happen, once each, with xdist
too."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_each_failure_is_written_once_with_its_error(tmp_path, workers):
    (tmp_path / "test_x.py").write_text(
        "def test_fails():\n    assert 1 == 2, 'one is not two'\n\n"
        "def test_passes():\n    pass\n")
    log = tmp_path / "failures.txt"
    r = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "benchmarks.failure_log", str(tmp_path),
         "-q", "-p", "no:cacheprovider", "-o", "addopts=", "--rootdir", str(tmp_path),
         *workers], cwd=ROOT, capture_output=True, text=True, timeout=120,
        env={**os.environ, "FAILURE_LOG": str(log), "PYTHONPATH": str(ROOT)})
    assert "1 failed, 1 passed" in r.stdout, r.stdout + r.stderr
    lines = log.read_text().splitlines()
    assert lines[0] == "test_x.py::test_fails (call)"
    assert any("one is not two" in ln for ln in lines)
    assert sum(ln.startswith("test_x.py") for ln in lines) == 1
