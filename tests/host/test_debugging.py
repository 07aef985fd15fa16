"""Debug modes: NaN/Inf checks that name the primitive and the user's line and column
(jitted and eager), and disable_jit."""

import numpy as np
import pytest
import stablejit as sj
import stablejit.numpy as snp


@pytest.fixture
def nans():
    sj.config.update("debug_nans", True)
    yield
    sj.config.update("debug_nans", False)


def _line(marker: str) -> tuple[int, str]:
    for i, text in enumerate(open(__file__).read().splitlines(), 1):
        if text.rstrip().endswith(marker):
            return i, text
    raise AssertionError(marker)


def test_a_nan_in_a_jitted_function_names_the_first_op_and_its_column(nans):
    @sj.jit
    def f(x):
        y = x * 2
        return snp.sqrt(y) + snp.log(y - 1.0)  # NAN HERE

    ok = f(np.array([1.0, 2.0], np.float32))  # no NaN: no error
    assert np.isfinite(np.asarray(ok)).all()
    line, text = _line("# NAN HERE")
    with pytest.raises(FloatingPointError,
                       match=rf"\(nan\) encountered in log at .*test_debugging.py:{line}:"
                             rf"{text.index('snp.log') + 1}, inside jitted function f"):
        f(np.array([1.0, 0.1], np.float32))


def test_an_eager_op_that_makes_a_nan_raises_at_its_line(nans):
    line, _ = _line("# EAGER NAN")
    with pytest.raises(FloatingPointError, match=rf"nan\) encountered in sqrt at "
                                                 rf".*test_debugging.py:{line}:"):
        snp.sqrt(snp.asarray([-1.0, 4.0]))  # EAGER NAN
    snp.sqrt(snp.asarray([np.nan]))  # a NaN that came in is not reported


def test_infs_are_checked_when_asked():
    sj.config.update("jax_debug_infs", True)
    try:
        with pytest.raises(FloatingPointError, match=r"\(inf\) encountered in divide"):
            sj.jit(lambda x: 1.0 / x)(np.array([0.0], np.float32))
    finally:
        sj.config.update("debug_infs", False)


def test_unknown_settings_are_refused():
    with pytest.raises(ValueError, match="unknown setting 'debug_nan'"):
        sj.config.update("debug_nan", True)


def test_disable_jit_runs_the_python_eagerly():
    seen = []

    @sj.jit
    def f(x):
        seen.append(float(x.sum()))  # a concrete value: only possible without jit
        return x + 1 if float(x.sum()) > 0 else x - 1

    with sj.disable_jit():
        assert np.asarray(f(snp.asarray([1.0]))).tolist() == [2.0]
        assert np.asarray(f(snp.asarray([-1.0]))).tolist() == [-2.0]
    assert seen == [1.0, -1.0]
    with pytest.raises(sj.TracerConversionError):
        f(snp.asarray([1.0]))
