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

SciPy computes a special function with NumPy, and hands back `xp.asarray(out)` on the
default device, for a backend it has no native `special` namespace for
(scipy/special/_support_alternative_backends.py: `_get_native_func` looks in
`scipy_namespace_for(xp).special`, which is jax.scipy for jax and None for stablejit).
This plugin monkeypatches that module's `_get_native_func` (no SciPy file is edited) so
that for stablejit.numpy it answers from `stablejit.scipy.special`, whose functions
follow their inputs' device, for the functions in NATIVE_SPECIAL only: those that agree
with SciPy's to a few ulps in float64. Any other function of SciPy's table, per
function, takes SciPy's NumPy fallback as before (SciPy's values), with its result put
on its inputs' device (`xp.asarray(out, device=...)`); other names go to SciPy's lookup.
"""

from __future__ import annotations

import functools
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
        _route_special_to_stablejit()


# stablejit.scipy.special's functions that SciPy may call natively: within ~1e-14
# relative of scipy.special in float64 (tests/host/test_scipy_special_x64.py). Left to
# SciPy's NumPy fallback, less accurate than SciPy's in float64: gammaln, loggamma and
# betaln near the zeros of log-gamma (to 3e-11 relative near x = 1, 2), gamma (3e-13),
# multigammaln (gammaln's), gammainc (2e-12 in the lower tail, a >> x), gammaincc
# (1e-11 for small a) and betainc (6e-12): XLA's algorithms, as jax's.
NATIVE_SPECIAL = frozenset({
    "erf", "erfc", "erfinv", "ndtr", "ndtri", "log_ndtr", "gammasgn",
    "i0", "i0e", "i1", "i1e", "xlogy", "xlog1py", "logit", "expit", "entr", "rel_entr",
    "kl_div"})


def _numpy_promoted(xp, func):
    """func with its array arguments promoted together by NumPy's rules first, as
    SciPy's NumPy fallback does (an intp with a float32 gives float64 there; by jax's
    lattice, which stablejit follows, float32)."""
    import numpy as np

    @functools.wraps(func)
    def promoted(*args, **kwargs):
        dtypes = {np.dtype(a.dtype) for a in args if hasattr(a, "dtype")}
        if len(dtypes) > 1:
            common = np.result_type(*dtypes)
            args = tuple(xp.astype(a, common) if hasattr(a, "dtype") else a for a in args)
        return func(*args, **kwargs)

    return promoted


def _numpy_on_inputs_device(xp, func):
    """SciPy's NumPy fallback (NumPy arrays in, SciPy's ufunc, xp.asarray out), with the
    result put on its inputs' device: SciPy's values, where it had put them on the
    default device."""
    import numpy as np

    @functools.wraps(func)
    def on_device(*args, **kwargs):
        device = next((a.device for a in args if hasattr(a, "device")), None)
        out = func(*[np.asarray(a) for a in args], **kwargs)
        return xp.asarray(out, device=device)

    return on_device


def _route_special_to_stablejit():
    """Make SciPy's special-function dispatch use stablejit.scipy.special for the
    stablejit backend, per function (NATIVE_SPECIAL), by wrapping
    scipy.special._support_alternative_backends._get_native_func."""
    from scipy.special import _support_alternative_backends as sab

    scipy_native = sab._get_native_func
    if getattr(scipy_native, "_stablejit", False):
        return

    numpy_funcs = {info.name: info.func for info in sab._special_funcs}

    def _get_native_func(xp, spx, f_name, *, alt_names_map=None):
        if getattr(xp, "__name__", None) == BACKEND_ID:
            if f_name in NATIVE_SPECIAL:
                import stablejit.scipy.special as sjs

                return _numpy_promoted(xp, getattr(sjs, f_name))
            if f_name in numpy_funcs:
                return _numpy_on_inputs_device(xp, numpy_funcs[f_name])
        return scipy_native(xp, spx, f_name, alt_names_map=alt_names_map)

    _get_native_func._stablejit = True
    sab._get_native_func = _get_native_func


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
