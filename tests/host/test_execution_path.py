"""The one execution path: one bounded executable cache shared by jit, eager ops,
autodiff and control flow; jit's argument numbers checked when jit is called; settings
from the environment validated in one place."""

import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp
from stablejit import compilation, config, recorder_native
from stablejit.runtime.cache import SingleFlightCache


def test_bounded_cache_evicts_least_recently_used():
    evicted = []
    c = SingleFlightCache(max_entries=2, on_evict=evicted.append)
    c.get_or_create("a", lambda: "A")
    c.get_or_create("b", lambda: "B")
    c.get_or_create("a", lambda: "A2")  # a hit refreshes a
    c.get_or_create("c", lambda: "C")
    assert sorted(c.keys()) == ["a", "c"] and evicted == ["B"]


def test_bounded_cache_by_bytes():
    c = SingleFlightCache(max_bytes=10, size=len)
    c.get_or_create(1, lambda: "x" * 6)
    c.get_or_create(2, lambda: "y" * 6)
    assert c.keys() == [2] and c.bytes == 6


def test_programs_evicted_from_the_cache_run_again(monkeypatch):
    monkeypatch.setattr(compilation._EXECUTABLES, "max_entries", 3)

    @stablejit.jit
    def f(x):
        return x * 3.0 + 1.0

    for n in range(1, 7):
        f(snp.ones(n))
    assert len(compilation._EXECUTABLES) <= 3
    # the first shape's program was evicted (its executable released); it comes back
    np.testing.assert_array_equal(f(snp.ones(1)), [4.0])
    np.testing.assert_array_equal(f(snp.ones(2)).numpy(), [4.0, 4.0])


def test_eight_jit_objects_of_one_program_compile_once():
    x = snp.ones(11)
    fns = [stablejit.jit(lambda a: snp.sin(a) * 7.25 - 0.5) for _ in range(8)]
    fns[0](x)
    before = compilation.stats["compiled"] + compilation.stats["disk"]
    for f in fns[1:]:
        np.testing.assert_allclose(f(x), np.sin(1.0) * 7.25 - 0.5, rtol=1e-6)
    assert compilation.stats["compiled"] + compilation.stats["disk"] == before


def test_every_way_of_running_shares_one_cache():
    x = snp.linspace(0.0, 1.0, 13)
    f = lambda a: snp.sum(snp.cos(a) * a)  # noqa: E731

    def run_each_way():
        stablejit.jit(f)(x)
        stablejit.grad(f)(x)
        stablejit.cond(x[0] > 0, snp.sin, snp.cos, x)

    compilation.clear_memory_cache()
    run_each_way()
    held = len(compilation._EXECUTABLES)
    assert held >= 3  # jit's, grad's and cond's programs (and the eager ops') are all here
    compilation.clear_memory_cache()  # emptying the one cache makes every way load again
    before = compilation.stats["compiled"] + compilation.stats["disk"]
    run_each_way()
    assert compilation.stats["compiled"] + compilation.stats["disk"] - before >= 3
    assert len(compilation._EXECUTABLES) == held
    assert not hasattr(stablejit.autodiff, "_EXECUTABLES")
    assert not hasattr(stablejit.control_flow, "_compiled")


# ---- jit's argument numbers ----------------------------------------------------------------

def test_negative_static_argnums_count_from_the_end():
    f = stablejit.jit(lambda x, n: x * n, static_argnums=-1)
    assert f.static_argnums == (1,)
    np.testing.assert_array_equal(f(snp.ones(2), 3), [3.0, 3.0])


@pytest.mark.parametrize("kw", [{"static_argnums": 5}, {"donate_argnums": 5},
                                {"static_argnums": -3}])
def test_out_of_range_argnums_raise_when_jit_is_called(kw):
    with pytest.raises(ValueError, match="takes 2 positional argument"):
        stablejit.jit(lambda x, n: x * n, **kw)


def test_jit_of_a_non_function_raises_at_once():
    with pytest.raises(TypeError, match="jit expects a function, got int"):
        stablejit.jit(5)


def test_static_argnames_bind_by_position_too():
    def f(x, n):
        return x * n

    g = stablejit.jit(f, static_argnames="n")
    assert g.static_argnums == (1,)
    np.testing.assert_array_equal(g(snp.ones(2), 4), [4.0, 4.0])  # positional: static
    np.testing.assert_array_equal(g(snp.ones(2), n=5), [5.0, 5.0])
    with pytest.raises(ValueError, match="no parameter 'm'"):
        stablejit.jit(f, static_argnames="m")


def test_static_and_donated_at_once_is_an_error():
    with pytest.raises(ValueError, match="both static and donated"):
        stablejit.jit(lambda x, n: x, static_argnums=1, donate_argnums=1)


# ---- settings from the environment ------------------------------------------------------------

def test_bad_setting_warns_once_and_uses_the_default(monkeypatch):
    monkeypatch.setenv("STABLEJIT_CACHE_MAX_BYTES", "abc")
    with pytest.warns(config.ConfigWarning, match="STABLEJIT_CACHE_MAX_BYTES='abc'"):
        assert config.cache_max_bytes() == config.DEFAULT_CACHE_MAX_BYTES
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert config.cache_max_bytes() == config.DEFAULT_CACHE_MAX_BYTES  # no second warning


def test_bad_setting_does_not_break_jit():
    code = textwrap.dedent("""
        import warnings
        import stablejit, stablejit.numpy as snp
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            f = stablejit.jit(lambda x: x + 1)
            print(f(snp.ones(2)), f(snp.ones(2)))
        print(sum("STABLEJIT_CACHE_MAX_BYTES='abc' is not valid" in str(x.message) for x in w),
              sum("STABLEJIT_LOG_COMPILES='maybe' is not valid" in str(x.message) for x in w))
    """)
    env = {**os.environ, "STABLEJIT_CACHE_MAX_BYTES": "abc", "STABLEJIT_LOG_COMPILES": "maybe"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[:2] == ["[2. 2.] [2. 2.]", "1 1"]


# ---- pytrees ----------------------------------------------------------------------------------

@pytest.mark.parametrize("a, b", [({"a": 1}, {"b": 2}), ([1, 2], (1, 2)), ([1, 2], [1, 2, 3])])
def test_tree_map_refuses_trees_of_another_structure(a, b):
    with pytest.raises(ValueError, match="different pytree structure"):
        stablejit.tree_map(lambda x, y: x + y, a, b)


@pytest.mark.parametrize("op, runs", [
    (lambda x: x + 1.0, 1), (lambda x: 2 * x, 1), (lambda x: x > 0, 1),
    (lambda x: x - snp.ones((1, 5)), 2),  # ones, then the broadcast subtraction
    (lambda x: x @ snp.ones(5), 2),       # ones, then one dot_general (no reshapes)
    (lambda x: snp.where(x > 0, x, 0.0), 2)])
def test_common_eager_ops_dispatch_once(op, runs, monkeypatch):
    """A Python scalar or a broadcast operand is part of the op's own program, not a
    dispatch of its own (x + 1.0 is one executable run, as in JAX)."""
    x = snp.asarray(np.arange(10, dtype=np.float32).reshape(2, 5))
    want = op(np.asarray(x))
    ran = []
    run = compilation.Program.run
    # (counted on the Python path: the native one runs the same op-table programs from C,
    # without Program.run; tests/host/test_native_eager.py compares the two)
    was = recorder_native.installed()
    recorder_native.install(False)
    monkeypatch.setattr(compilation.Program, "run",
                        lambda self, bufs: ran.append(self.name) or run(self, bufs))
    try:
        out = op(x)
    finally:
        recorder_native.install(was)
    assert len(ran) == runs, ran
    np.testing.assert_array_equal(np.asarray(out), want)
