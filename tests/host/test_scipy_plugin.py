"""conformance/scipy_plugin.py puts stablejit.numpy among the backends of SciPy's own
array-API tests (make scipy-tests runs whole subpackages; docs/scipy_consumers.md has
the counts). Here, a few of SciPy's tests through it in a subprocess: they run on our
backend only, device propagation and dtype rules hold, and SciPy's `np_only` marks skip
us as they skip every non-NumPy backend."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytest.importorskip("scipy")


def _run(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "SCIPY_ARRAY_API": "1",
           "PYTHONPATH": str(ROOT / "conformance")}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "scipy_plugin", "-m", "array_api_backends",
         "-p", "no:cacheprovider", "-o", "addopts=", "-W", "ignore", "-rA", "-q",
         "--pyargs", *args], capture_output=True, text=True, env=env, cwd="/", timeout=300)


def test_scipy_s_tests_run_on_stablejit_numpy():
    out = _run("scipy.special.tests.test_logsumexp", "scipy.fft.tests.test_real_transforms",
               "-k", "test_device or (test_dtypes_a and not test_dtypes_ab) or test_array_like "
               "or test_b_zero")
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]
    passed = re.findall(r"^PASSED \S*\[(.*?)\]", out.stdout, re.M)
    # test_device over every device (the reference backend among them), test_dtypes_a
    # over float32 ... complex128: only on our backend
    assert len(passed) >= 8 and all(i.startswith("stablejit.numpy") for i in passed)
    # test_array_like is np_only: skipped for us as for every non-NumPy backend (SciPy
    # 1.17's; 1.18, which Python 3.12 installs, has no test of that name here)
    assert not re.search(r"^PASSED \S*test_array_like", out.stdout, re.M)  # (any SciPy)
    if re.search(r"\d+ skipped", out.stdout):
        assert re.search(r"SKIPPED .*only supported for NumPy backend", out.stdout)


def test_the_plugin_refuses_to_run_without_scipy_array_api():
    env = {k: v for k, v in os.environ.items() if k != "SCIPY_ARRAY_API"}
    out = subprocess.run([sys.executable, "-m", "pytest", "-p", "scipy_plugin",
                          "--pyargs", "scipy.cluster", "--co", "-q"], capture_output=True,
                         text=True, cwd="/", timeout=120,
                         env={**env, "PYTHONPATH": str(ROOT / "conformance")})
    assert out.returncode != 0
    assert "set SCIPY_ARRAY_API=1" in out.stdout + out.stderr


def test_scipy_s_tests_that_need_x64_mode_pass():
    """The plugin turns stablejit's x64 mode on, as SciPy's conftest turns on jax's: its
    tests that expect float64 from integer inputs pass (logsumexp of two integer
    dtypes), with lists of np.int32 as expected values (differentiate) and deepcopied
    tensors (find_root); each failed before."""
    out = _run("scipy.special.tests.test_logsumexp",
               "scipy.differentiate.tests.test_differentiate",
               "scipy.optimize.tests.test_chandrupatla",
               "-k", "test_dtypes_ab or (TestDerivative and test_vectorization) or "
               "(TestFindRoot and test_convergence)")
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]
    passed = re.findall(r"^PASSED \S*::(\w+)\[(.*?)\]", out.stdout, re.M)
    assert ("test_dtypes_ab", "stablejit.numpy-int32-int64") in passed
    assert sum(name == "test_vectorization" for name, _ in passed) == 8
    assert ("test_convergence", "stablejit.numpy") in passed


def test_a_stats_p_value_of_a_reference_backend_sample_stays_on_the_reference_backend():
    """SciPy's special functions leave a backend without a native `special` namespace
    through NumPy and come back on the default device; through the plugin they come
    back on their inputs' device, computed by stablejit.scipy.special (stouffer: ndtr,
    ndtri) or by SciPy's NumPy fallback placed there (fisher: chdtrc; ttest_1samp and
    pearsonr: stdtr by betainc). Each of these failed on the reference backend before."""
    out = _run("scipy.stats.tests.test_device_dtype", "-k",
               "test_combine_pvalues or (test_hypothesis_tests and (ttest_1samp or "
               "pearsonr or normaltest))")
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]
    passed = re.findall(r"^PASSED \S*::(\w+)\[(.*?)\]", out.stdout, re.M)
    # test_device_dtype's `devices` fixture runs each over every device, "reference" too
    for dtype in ("float32", "float64"):
        for method in ("fisher", "pearson", "tippett", "stouffer", "mudholkar_george"):
            assert ("test_combine_pvalues", f"stablejit.numpy-{dtype}-{method}") in passed
        for name in ("ttest_1samp", "pearsonr", "normaltest"):
            assert ("test_hypothesis_tests", f"stablejit.numpy-{dtype}-{name}") in passed
