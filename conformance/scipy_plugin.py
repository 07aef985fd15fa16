"""A pytest plugin that runs SciPy's own test suite with stablejit.numpy as one of its
array-API backends, without editing any SciPy file.

SciPy's conftest (scipy/conftest.py) builds its `xp` fixture from the backends it knows
(numpy, array_api_strict, torch, cupy, jax.numpy, dask.array) when SCIPY_ARRAY_API=1 is
set before SciPy is imported. This plugin adds `stablejit.numpy` to that fixture's
parameters once SciPy's conftest has registered it, and keeps only the backends named
by --xp (default: stablejit.numpy):

    SCIPY_ARRAY_API=1 PYTHONPATH=conformance python -m pytest -p scipy_plugin \\
        --pyargs scipy.special -m array_api_backends --xp stablejit.numpy

`make scipy-tests` runs the subpackages this way (conformance/scipy_tests.py).

SciPy's conftest turns on jax's x64 mode (`jax.config.update("jax_enable_x64", True)`)
when it runs jax.numpy, since SciPy's tests expect float64 from integer inputs and Python
floats on every backend but PyTorch. This plugin does the same for stablejit when
stablejit.numpy is among the backends run: `stablejit.config.update("jax_enable_x64",
True)`, so the default float is float64 there too (docs/numerics.md, "Integer inputs and
x64 mode"). docs/scipy_consumers.md keeps the counts.
"""

from __future__ import annotations

import os
import sys
import time

import pytest

BACKEND_ID = "stablejit.numpy"


# the marks SciPy registers in its own pytest.ini, which an installed SciPy lacks
_MARKS = ("array_api_backends", "thread_unsafe", "skip_xp_backends", "xfail_xp_backends",
          "skip_xp_invalid_arg", "slow", "xslow", "fail_slow", "parallel_threads",
          "timeout", "iterations", "fail_asan")


def pytest_addoption(parser):
    parser.addoption("--xp", action="append", default=None,
                     help="the array-API backends of SciPy's xp fixture to run (repeat; "
                          "default: stablejit.numpy; e.g. numpy, jax.numpy)")
    parser.addoption("--time-box", type=float, default=None,
                     help="stop starting new tests after this many seconds (the summary "
                          "counts the tests run so far)")


def pytest_configure(config):
    if os.environ.get("SCIPY_ARRAY_API") in (None, "", "0"):
        raise pytest.UsageError("set SCIPY_ARRAY_API=1 before running SciPy's tests with "
                                "the stablejit backend (SciPy reads it at import)")
    for mark in _MARKS:
        config.addinivalue_line("markers", f"{mark}: SciPy's mark")
    config._stablejit_start = time.monotonic()
    if BACKEND_ID in (config.getoption("xp") or [BACKEND_ID]):
        import stablejit

        stablejit.config.update("jax_enable_x64", True)  # as SciPy's conftest does for jax


def pytest_runtest_protocol(item, nextitem):
    box = item.config.getoption("time_box")
    if box is not None and time.monotonic() - item.config._stablejit_start > box:
        item.session.shouldstop = f"the time box of {box:g} s is spent"


def _stablejit_param():
    import stablejit.numpy as snp

    return pytest.param(snp, id=BACKEND_ID, marks=pytest.mark.array_api_backends)


@pytest.hookimpl(tryfirst=True)
def pytest_generate_tests(metafunc):
    """Before pytest parametrizes SciPy's `xp` fixture from its params, give it our
    backend and keep the ones asked for (once per fixture definition)."""
    if "xp" not in metafunc.fixturenames:
        return
    wanted = set(metafunc.config.getoption("xp") or [BACKEND_ID])
    for fixturedef in metafunc._arg2fixturedefs.get("xp", ()):
        if fixturedef.params is None or getattr(fixturedef, "_stablejit", False):
            continue
        # SciPy's skip/xfail marks (np_only=True ...) apply to the backends it knows
        known = getattr(sys.modules.get(fixturedef.func.__module__), "xp_known_backends",
                        None)
        if isinstance(known, set):
            known.add(BACKEND_ID)
        params = [p for p in fixturedef.params if p.id in wanted]
        if BACKEND_ID in wanted:
            params.append(_stablejit_param())
        fixturedef.params = tuple(params)
        fixturedef._stablejit = True
