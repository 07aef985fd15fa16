"""x64 mode (jax's `jax_enable_x64`): every place a default float or complex dtype enters
(creation, Python floats, integer inputs to float functions, reductions, fft, linalg,
random samplers, initializers, scipy.special / stats, the namespace info) gives jax's
dtype and values in x64 mode (jax under `jax.enable_x64(True)`), eagerly, lazily and under
jit; with the mode off the inexact results are float32 / complex64 as jax's. Programs made
in one mode are never served in the other: jit (native and Python call), composites, the
lazy graph and Compiled."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import textwrap

import jax
import jax.numpy as jnp
import jax.scipy.linalg as jla
import jax.scipy.special as jsp
import jax.scipy.stats as jst
import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp
import stablejit.scipy.linalg as sla
import stablejit.scipy.special as ssp
import stablejit.scipy.stats as sst
from stablejit import config
from stablejit.experimental import disable_x64, enable_x64

from tests.host.test_native import needs_native, path


class NS:
    """One library's namespaces under the names the cases use."""

    def __init__(self, xp, special, stats, random, key, nn, linalg):
        self.xp, self.special, self.stats, self.random, self.nn = xp, special, stats, \
            random, nn
        self.key, self.linalg = key, linalg


SJ = NS(snp, ssp, sst, stablejit.random, lambda: stablejit.random.key(0), stablejit.nn,
        sla)
JX = NS(jnp, jsp, jst, jax.random, lambda: jax.random.key(0), jax.nn, jla)

# name -> the computation, on one library's namespaces (ints in, a default dtype out)
CASES = {
    "zeros": lambda n: n.xp.zeros(3),
    "ones": lambda n: n.xp.ones((2, 2)),
    "eye": lambda n: n.xp.eye(3),
    "identity": lambda n: n.xp.identity(2),
    "full(1.5)": lambda n: n.xp.full(2, 1.5),
    "zeros(dtype=float)": lambda n: n.xp.zeros(2, dtype=float),
    "zeros(dtype=complex)": lambda n: n.xp.zeros(2, dtype=complex),
    "astype(float)": lambda n: n.xp.arange(3).astype(float),
    "asarray(1.0)": lambda n: n.xp.asarray(1.0),
    "asarray([1.0, 2.5])": lambda n: n.xp.asarray([1.0, 2.5]),
    "asarray(1j)": lambda n: n.xp.asarray(1 + 2j),
    "asarray([[1j]])": lambda n: n.xp.asarray([[1j, 2.0]]),
    "arange(0.0, 1.0, 0.25)": lambda n: n.xp.arange(0.0, 1.0, 0.25),
    "arange(3) / 2": lambda n: n.xp.arange(3) / 2,
    "ints / ints": lambda n: n.xp.asarray([1, 2]) / n.xp.asarray([3, 4]),
    "ints * 0.1": lambda n: n.xp.arange(3) * 0.1,
    "0.1 + ints": lambda n: 0.1 + n.xp.arange(3),
    "ints + 1j": lambda n: n.xp.arange(2) + 1j,
    "ints ** 0.5": lambda n: n.xp.arange(4) ** 0.5,
    "linspace(0, 1, 5)": lambda n: n.xp.linspace(0, 1, 5),
    "logspace(0, 2, 3)": lambda n: n.xp.logspace(0, 2, 3),
    "geomspace(1, 8, 4)": lambda n: n.xp.geomspace(1, 8, 4),
    "tri(3)": lambda n: n.xp.tri(3),
    "hanning(5)": lambda n: n.xp.hanning(5),
    "bartlett(5)": lambda n: n.xp.bartlett(5),
    "mgrid[0:1:3j]": lambda n: n.xp.mgrid[0:1:3j],
    "sqrt(ints)": lambda n: n.xp.sqrt(n.xp.arange(4)),
    "exp(int)": lambda n: n.xp.exp(n.xp.asarray(3)),
    "sin(3)": lambda n: n.xp.sin(3),
    "log1p(ints)": lambda n: n.xp.log1p(n.xp.arange(3)),
    "mean(ints)": lambda n: n.xp.mean(n.xp.arange(5)),
    "var(ints)": lambda n: n.xp.var(n.xp.arange(5)),
    "std(ints, axis=0)": lambda n: n.xp.std(n.xp.arange(6).reshape(3, 2), axis=0),
    "average(ints)": lambda n: n.xp.average(n.xp.arange(4)),
    "median(ints)": lambda n: n.xp.median(n.xp.arange(4)),
    "quantile(ints, 0.3)": lambda n: n.xp.quantile(n.xp.arange(5), 0.3),
    "cov(ints)": lambda n: n.xp.cov(n.xp.asarray([[1, 2, 4], [0, 3, 1]])),
    "sort_complex(ints)": lambda n: n.xp.sort_complex(n.xp.asarray([3, 1, 2])),
    "fft(ints)": lambda n: n.xp.fft.fft(n.xp.arange(4)),
    "rfft(ints)": lambda n: n.xp.fft.rfft(n.xp.arange(4)),
    "fftfreq(4)": lambda n: n.xp.fft.fftfreq(4),
    "linalg.inv(ints)": lambda n: n.xp.linalg.inv(n.xp.asarray([[2, 1], [1, 3]])),
    "linalg.norm(ints)": lambda n: n.xp.linalg.norm(n.xp.arange(3)),
    "special.expit(ints)": lambda n: n.special.expit(n.xp.arange(3)),
    "special.erf(ints)": lambda n: n.special.erf(n.xp.arange(3)),
    "special.gammaln(ints)": lambda n: n.special.gammaln(n.xp.arange(1, 4)),
    "special.logsumexp(ints)": lambda n: n.special.logsumexp(n.xp.arange(3)),
    "special.xlogy(ints, ints)": lambda n: n.special.xlogy(n.xp.arange(3), n.xp.arange(3)),
    "special.rel_entr(ints, ints)": lambda n: n.special.rel_entr(n.xp.arange(1, 3),
                                                                 n.xp.arange(2, 4)),
    "stats.norm.cdf(ints)": lambda n: n.stats.norm.cdf(n.xp.arange(3)),
    "stats.norm.logpdf(ints)": lambda n: n.stats.norm.logpdf(n.xp.arange(3)),
    "random.uniform": lambda n: n.random.uniform(n.key(), (3,)),
    "random.normal": lambda n: n.random.normal(n.key(), (3,)),
    "random.exponential": lambda n: n.random.exponential(n.key(), (3,)),
    "nn.initializers.zeros": lambda n: n.nn.initializers.zeros(n.key(), (2,)),
    "nn.one_hot": lambda n: n.nn.one_hot(n.xp.asarray([0, 2]), 3),
    "nn.logsumexp(ints)": lambda n: n.nn.logsumexp(n.xp.arange(3)),
    "scipy.linalg.solve(ints)": lambda n: n.linalg.solve(n.xp.asarray([[2, 1], [1, 3]]),
                                                         n.xp.asarray([1, 2])),
    "scipy.linalg.lu(ints)": lambda n: n.linalg.lu(n.xp.asarray([[1, 2], [3, 4]]))[2],
    "scipy.linalg.block_diag()": lambda n: n.linalg.block_diag(),
    "nn.initializers.glorot_uniform": lambda n: n.nn.initializers.glorot_uniform()(
        n.key(), (2, 3)),
}
# values that follow jax's only in distribution (different algorithms), dtype exact
DTYPE_ONLY = {"random.exponential"}
# where jax's default is not its default float, NumPy's in x64 mode (jax's tri is float32
# in both modes: a hard-coded default; ours is the default float, as NumPy's float64)
NUMPY_IN_X64 = {"tri(3)": lambda: np.tri(3)}


def _jax(name, x64: bool):
    if x64 and name in NUMPY_IN_X64:
        return NUMPY_IN_X64[name]()
    with jax.enable_x64(x64):
        return np.asarray(CASES[name](JX))


def _check(name, got, x64: bool) -> None:
    want = _jax(name, x64)
    got = np.asarray(got)
    if x64:
        assert got.dtype == want.dtype, (name, got.dtype, want.dtype)
    else:  # jax's ints are int32 with x64 off; its float and complex defaults are ours
        assert got.dtype.kind == want.dtype.kind and (
            got.dtype == want.dtype or want.dtype.kind not in "fc"), (name, got.dtype,
                                                                       want.dtype)
    if name not in DTYPE_ONLY:
        rtol = 1e-12 if x64 else 2e-6
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol, err_msg=name)


@pytest.fixture
def x64_off():
    """x64 mode off around the test, whatever a test before it left."""
    with disable_x64():
        yield


WAYS = {
    "eager": lambda f: f(),
    "jit": lambda f: stablejit.jit(f)(),
    "lazy": lambda f: _lazily(f),
}


def _lazily(f):
    with stablejit.lazy():
        out = f()
    return out


@pytest.mark.parametrize("way", WAYS)
@pytest.mark.parametrize("name", CASES)
def test_default_dtypes_follow_jax_in_both_modes(x64_off, name, way):
    run = WAYS[way]
    with enable_x64():
        _check(name, run(lambda: CASES[name](SJ)), x64=True)
    _check(name, run(lambda: CASES[name](SJ)), x64=False)


def test_the_namespace_info_and_result_type():
    for x64, (f, c) in ((False, ("float32", "complex64")), (True, ("float64", "complex128"))):
        with enable_x64(x64), jax.enable_x64(x64):
            d = snp.__array_namespace_info__().default_dtypes()
            assert (d["real floating"], d["complex floating"], d["integral"]) == (f, c,
                                                                                  "int64")
            for args in ((float,), (1.0,), ("int64", 1.0), ("int8", 1j), (1j,), (complex, 1),
                         ("float16", 1.0)):
                assert snp.result_type(*args) == jnp.result_type(*args), args
            assert stablejit.dtypes.dtype(float) == f


# ---- the setting ---------------------------------------------------------------------

@pytest.mark.parametrize("spelling", [
    lambda v: config.update("jax_enable_x64", v),
    lambda v: config.update("enable_x64", v),
    lambda v: config.update("stablejit_enable_x64", v),
    lambda v: setattr(config, "jax_enable_x64", v),
    lambda v: setattr(config, "enable_x64", v),
])
def test_every_spelling_sets_and_reads(x64_off, spelling):
    spelling(True)
    assert config.enable_x64 is config.jax_enable_x64 is config.x64_enabled is True
    assert snp.zeros(1).dtype == snp.float64
    spelling(False)
    assert config.enable_x64 is config.jax_enable_x64 is False
    assert snp.zeros(1).dtype == snp.float32


def test_the_context_managers_restore_the_mode(x64_off):
    with enable_x64():
        assert snp.asarray(1.0).dtype == snp.float64
        with disable_x64():
            assert snp.asarray(1.0).dtype == snp.float32
        assert snp.asarray(1.0).dtype == snp.float64
    assert config.enable_x64 is False
    with pytest.raises(RuntimeError), enable_x64():
        raise RuntimeError
    assert config.enable_x64 is False


@pytest.mark.parametrize("value", ["1", None, 2])
def test_the_setting_takes_a_bool(x64_off, value):
    with pytest.raises(TypeError, match="'jax_enable_x64' takes True or False"):
        config.update("jax_enable_x64", value)
    assert config.enable_x64 is False


@pytest.mark.parametrize("env,want", [
    ({"JAX_ENABLE_X64": "1"}, "float64"),
    ({"STABLEJIT_ENABLE_X64": "true"}, "float64"),
    ({"JAX_ENABLE_X64": "1", "STABLEJIT_ENABLE_X64": "0"}, "float32"),  # ours wins
    ({"JAX_ENABLE_X64": "0"}, "float32"),
    ({}, "float32"),
])
def test_the_variables_are_read_at_start_up(env, want):
    code = textwrap.dedent("""
        import stablejit, stablejit.numpy as snp
        f = stablejit.jit(lambda x: x / 2)
        print(snp.zeros(1).dtype, snp.asarray(1.0).dtype, f(snp.arange(2)).dtype,
              stablejit.config.jax_enable_x64)
    """)
    base = {k: v for k, v in os.environ.items()
            if k not in ("JAX_ENABLE_X64", "STABLEJIT_ENABLE_X64")}
    out = subprocess.run([sys.executable, "-c", code], env={**base, **env},
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [want] * 3 + [str(want == "float64")]


# ---- no program of one mode serves the other ------------------------------------------

def _functions():
    """Functions whose program depends on the mode alone (same argument types)."""
    return {
        "tensor arg": (lambda x: x * 0.5 + snp.mean(x), lambda: (snp.arange(3),)),
        "no args": (lambda: snp.zeros(2) + 1.0, lambda: ()),
        "pytree arg": (lambda t: {"m": snp.mean(t["a"])}, lambda: ({"a": snp.arange(3)},)),
        "python float": (lambda x, y: x * y, lambda: (snp.arange(3), 0.5)),
    }


def _dtypes_over_modes(f, make_args):
    out = []
    for mode in (False, True, False, True):
        with enable_x64(mode):
            for _ in range(2):  # the second call takes the cached (fast) path
                r = f(*make_args())
            out.append(str(stablejit.tree.leaves(r)[0].dtype))
    return out


WANT = ["float32", "float64", "float32", "float64"]


@pytest.mark.parametrize("native", [
    pytest.param(True, marks=needs_native), False], ids=["native", "python"])
@pytest.mark.parametrize("name", list(_functions()))
def test_a_jitted_function_follows_the_mode(x64_off, name, native):
    f, make_args = _functions()[name]
    with path(native):
        j = stablejit.jit(f)
        assert _dtypes_over_modes(j, make_args) == WANT
        assert j.traces == 2  # one per mode: switching back reuses the first trace
        with stablejit.lazy():
            assert _dtypes_over_modes(j, make_args) == WANT


@pytest.mark.parametrize("name", list(_functions()))
def test_eager_and_lazy_calls_follow_the_mode(x64_off, name):
    f, make_args = _functions()[name]
    assert _dtypes_over_modes(f, make_args) == WANT
    with stablejit.lazy():
        assert _dtypes_over_modes(f, make_args) == WANT


def test_a_composite_keeps_a_program_per_mode(x64_off):
    x = snp.arange(4)
    assert [str(snp.mean(x).dtype) for _ in range(2)] == ["float32"] * 2
    with enable_x64():
        assert [str(snp.mean(x).dtype) for _ in range(2)] == ["float64"] * 2
    np.testing.assert_array_equal(snp.mean(x), np.float32(1.5))


def test_log_compiles_says_the_mode_changed(x64_off, caplog):
    f = stablejit.jit(lambda x: x / 2)
    with contextlib.ExitStack() as stack:
        stack.enter_context(caplog.at_level("WARNING", logger="stablejit"))
        os.environ["STABLEJIT_LOG_COMPILES"] = "1"
        stack.callback(os.environ.pop, "STABLEJIT_LOG_COMPILES")
        f(snp.arange(2))
        with enable_x64():
            f(snp.arange(2))
    assert "x64 mode changed from off to on (the default float is float64)" in caplog.text


def test_a_compiled_call_names_a_python_float_of_the_other_mode(x64_off):
    c = stablejit.jit(lambda x, y: x * y).lower(snp.arange(2), 0.5).compile()
    np.testing.assert_array_equal(c(snp.arange(2), 0.5), [0.0, 0.5])
    with enable_x64(), pytest.raises(TypeError, match="argument 'y' compiled with "
                                                      r"float32\[\] and called with float64"):
        c(snp.arange(2), 0.5)


# ---- lists holding NumPy scalars and arrays -------------------------------------------

LISTS = {
    "int32 scalars": lambda: [np.int32(1), np.int32(2)],
    "int32 and a Python int": lambda: [np.int32(1), 2],
    "float32 and a Python float": lambda: [np.float32(1), 2.5],
    "int32 and a Python float": lambda: [np.int32(1), 2.5],
    "nested float32": lambda: [[np.float32(1)], [2.0]],
    "a float32 array and floats": lambda: [np.zeros(2, np.float32), [1.0, 2.0]],
    "Python numbers": lambda: [1.0, 2],
    "bool and int8": lambda: [True, np.int8(3)],
    "float16 and a Python complex": lambda: (np.float16(1), 1j),
    "float64 scalars": lambda: [np.float64(0.1), 2.0],
}


@pytest.mark.parametrize("name", LISTS)
def test_lists_of_numpy_scalars_keep_their_dtypes(x64_off, name):
    """jax's rule: NumPy scalars and arrays in a list keep their dtypes, Python numbers
    among them are weak (SciPy's tests build expected values as [np.int32(s) ...])."""
    for x64 in (False, True):
        with enable_x64(x64), jax.enable_x64(x64):
            got, want = np.asarray(snp.asarray(LISTS[name]())), np.asarray(
                jnp.asarray(LISTS[name]()))
        if not x64 and want.dtype != got.dtype:  # jax without x64 narrows NumPy's float64
            assert (got.dtype, want.dtype) == (np.float64, np.float32)
            continue
        assert got.dtype == want.dtype, (x64, got.dtype, want.dtype)
        np.testing.assert_array_equal(got, want)
