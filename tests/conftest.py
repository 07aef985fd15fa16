import os

os.environ.setdefault("STABLEJIT_VERIFY", "1")  # verify IR after every pass in tests
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")

# A run with a GPU first (STABLEJIT_PLATFORM=cuda: benchmarks/device_check.sh) asks for
# full float32 precision in products, ours and jax's: a GPU's default is TF32 (~1e-3
# relative), which tests written against NumPy at float32 tolerances cannot tell from a
# wrong answer (tests/host/test_precision.py tests the default on its own). jax stays on
# the GPU, so that bit-for-bit comparisons with it (random distributions) meet the same
# device's functions; where jax's GPU answer is no oracle, a test asks the host's.


def another_default() -> str | None:
    """The first platform of STABLEJIT_PLATFORM when it is not the host (a GPU session's
    run of the suite)."""
    first = os.environ.get("STABLEJIT_PLATFORM", "").split(",")[0].strip()
    return first if first and first not in ("host", "cpu") else None


if another_default() is not None:
    os.environ.setdefault("STABLEJIT_DEFAULT_MATMUL_PRECISION", "highest")
    os.environ.setdefault("JAX_DEFAULT_MATMUL_PRECISION", "highest")

# Tests compile for real, with a private persistent cache per test run, never the
# user's ~/.cache/stablejit: made by the process that starts the run (xdist's workers and
# the tests' subprocesses inherit it), and removed when that process exits (a run leaves
# ~110 MB of programs behind otherwise).
if "STABLEJIT_CACHE_DIR" not in os.environ:
    import atexit
    import shutil
    import tempfile

    os.environ["STABLEJIT_CACHE_DIR"] = tempfile.mkdtemp(prefix="stablejit-test-cache-")
    os.chmod(os.environ["STABLEJIT_CACHE_DIR"], 0o700)
    atexit.register(shutil.rmtree, os.environ["STABLEJIT_CACHE_DIR"], ignore_errors=True)
