"""Lazy eager mode (stablejit.lazy, STABLEJIT_LAZY=1, the "lazy" backend): ops record
until a value is needed, then run as one compiled program; values, dtypes and errors
are the eager ones. (Every stablejit.numpy function runs lazily in
tests/host/test_op_records.py's "lazy" path.)"""

import os
import subprocess
import sys
import tempfile

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import stablejit as sj
import stablejit.numpy as snp
from stablejit import compilation, fastcall, recorder_native
from stablejit.lazy_backend import LazyBackend, Pending

X = np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4)


def _pending(t) -> bool:
    """t waits for its graph to run."""
    return isinstance(t._data, Pending) and t._data.buffer is None


def _chain(x):
    for i in range(30):
        x = snp.tanh(x * 1.01 + 0.1 * i)
    return x


def test_ops_wait_until_the_block_ends_and_run_as_one_program():
    x = snp.asarray(X)
    with sj.lazy() as backend:
        before = backend.flushes
        y = _chain(x)
        s = snp.sum(y * y)
        assert _pending(y) and _pending(s)
        assert backend.flushes == before
    assert backend.flushes == before + 1
    np.testing.assert_allclose(np.asarray(s), np.asarray(snp.sum(_chain(x) ** 2)),
                               rtol=1e-6)


def test_reading_a_value_runs_the_graph_inside_the_block():
    with sj.lazy() as backend:
        y = snp.asarray(X) * 2.0
        n = backend.flushes
        assert float(y[0, 0]) == pytest.approx(-4.0)  # float() needs the value
        assert backend.flushes == n + 1
        if snp.sum(y) > 0:  # bool() too
            pass
        z = y + 1
        assert _pending(z)


def test_a_loop_compiles_its_graph_once():
    x = snp.asarray(X)
    with sj.lazy():
        _chain(x).block_until_ready()
    compiled = compilation.stats["compiled"] + compilation.stats["disk"]
    for _ in range(3):
        with sj.lazy():
            _chain(x).block_until_ready()
    assert compilation.stats["compiled"] + compilation.stats["disk"] == compiled


def test_an_error_names_the_line_of_the_op_not_of_the_read():
    with pytest.raises(ValueError, match=r"(?s)could not be broadcast.*test_lazy.py:\d+:\d+") as e:
        with sj.lazy():
            a = snp.ones((3,)) * 2.0
            b = a + snp.ones((4,))  # noqa: F841  (the error is raised here, at record time)
    line, col = map(int, e.value.args[0].rstrip(")").rsplit(":", 2)[1:])
    source = open(__file__).read().splitlines()[line - 1]
    assert source[col - 1:].startswith("a + snp.ones((4,))")  # the exact expression


def test_lazy_tensors_mix_with_eager_ones_and_dtypes_match():
    eager = snp.asarray(X)
    with sj.lazy():
        y = (eager * 2).astype(snp.float16) + snp.asarray(np.int8(3))
    want = (snp.asarray(X) * 2).astype(snp.float16) + snp.asarray(np.int8(3))
    assert y.dtype == want.dtype
    np.testing.assert_array_equal(np.asarray(y), np.asarray(want))
    assert np.asarray(eager + y).shape == (3, 4)  # a lazy tensor used after its block


def _updates():
    x = snp.zeros((3,))
    for i in range(3):
        x += 1.0
        x[i] = 10.0 * i
    return x


def test_in_place_updates_in_a_lazy_block():
    with sj.lazy():
        x = _updates()
        tmp = x * 2  # noqa: F841  (dropped: its graph value is not needed)
    assert np.asarray(x).tolist() == np.asarray(_updates()).tolist() == [2.0, 11.0, 20.0]


def test_grad_and_jit_inside_lazy():
    w = snp.asarray(X)
    loss = lambda w: snp.sum(snp.tanh(w) ** 2)
    want = sj.grad(loss)(w)
    with sj.lazy():
        g = sj.grad(loss)(w)
        assert _pending(g)  # the gradient program joined the graph: nothing ran yet
        j = sj.jit(loss)(g)
    np.testing.assert_allclose(np.asarray(g), np.asarray(want), rtol=1e-6)
    np.testing.assert_allclose(float(j), float(sj.jit(loss)(want)), rtol=1e-6)


def test_the_graph_runs_when_it_passes_the_size_bound(monkeypatch):
    monkeypatch.setenv("STABLEJIT_LAZY_MAX_OPS", "10")
    with sj.lazy() as backend:
        n = backend.flushes
        _chain(snp.asarray(X))  # 90 ops: runs every 10
        assert backend.flushes >= n + 8


@pytest.mark.host_default
def test_lazy_backend_by_name():
    backend = sj.resolve_backend("lazy")
    assert backend is sj.resolve_backend("lazy:host")
    with sj.default_backend("lazy"):
        y = snp.arange(4.0) * 3
        assert _pending(y)
    assert np.asarray(y).tolist() == [0.0, 3.0, 6.0, 9.0]


def test_environment_variable_makes_the_whole_program_lazy():
    code = ("import stablejit.numpy as snp; from stablejit.lazy_backend import Pending\n"
            "x = snp.arange(6.0).reshape(2, 3) * 2 + 1\n"
            "assert isinstance(x._data, Pending) and x._data.buffer is None\n"
            "m = snp.mean(x, axis=0)  # a composite: one tape entry\n"
            "assert isinstance(m._data, Pending) and m._data.buffer is None\n"
            "print(snp.sum(x), m.tolist())")
    env = dict(os.environ, STABLEJIT_LAZY="1")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "36.0 [4.0, 6.0, 8.0]"


def test_a_python_scalar_and_its_broadcast_record_with_the_op():
    with sj.lazy() as backend:
        x = snp.asarray(X)
        y = x * 2.0 + 2.0 - snp.ones((4,))  # scalars and a (4,) row broadcast to (3, 4)
        ops = backend.recorded()
    # 2.0 is one constant of the graph, broadcast once and used twice; no op runs or
    # records twice
    # (ones((4,)) is a constant broadcast to (4,), then to (3, 4))
    assert ops == ["constant", "broadcast_in_dim", "multiply", "add", "constant",
                   "broadcast_in_dim", "broadcast_in_dim", "subtract"], ops
    # one program, as under jit: XLA folds the constants (x*2 + 2 - 1 -> x*2 + 1), so the
    # last bit may differ from op-by-op execution, as jax.jit's does from jax's eager ops
    np.testing.assert_allclose(np.asarray(y), X * 2.0 + 2.0 - 1.0, rtol=1e-6)


def test_a_repeated_graph_is_found_by_its_structure_without_building_ir(monkeypatch):
    from stablejit import lazy_backend
    built = []
    real = lazy_backend.function_of
    monkeypatch.setattr(lazy_backend, "function_of",
                        lambda *a: built.append(1) or real(*a))
    x = snp.asarray(X)
    results = []
    for _ in range(3):
        with sj.lazy():
            results.append(np.asarray(_chain(x)))
    assert len(built) <= 1  # the first iteration may be new; the others hit by key
    for r in results[1:]:
        np.testing.assert_array_equal(r, results[0])



@pytest.mark.parametrize("native", [True, False], ids=["native", "python"])
def test_a_graph_equal_to_the_last_one_runs_from_c(native, monkeypatch):
    """On the native path a graph equal to the last one run is flushed in C
    (recorder.flush_last): Python's _program is not asked, the backend counts the run,
    and the values are the Python path's. Where it is not the last one, or a dump
    directory is set, Python's flush does it."""
    from stablejit import lazy_backend, recorder_native
    if native and not recorder_native.available():
        pytest.skip("the native recorder is not built")
    asked = []
    real = lazy_backend.LazyBackend._program
    monkeypatch.setattr(lazy_backend.LazyBackend, "_program",
                        lambda self, *a: asked.append(1) or real(self, *a))
    x = snp.asarray(np.linspace(-1, 1, 9, dtype=np.float32))
    graphs = {"a": lambda: snp.tanh(x * 1.75) - 0.25, "b": lambda: snp.tanh(x * 1.75) + 0.25}
    was = recorder_native.installed()
    recorder_native.install(native)
    try:
        got, counts = [], []
        for name in "aaaba":
            asked.clear()
            with sj.lazy() as b:
                y = graphs[name]()
                before = b.flushes
            got.append(np.asarray(y))
            counts.append((len(asked), b.flushes - before))
        with tempfile.TemporaryDirectory() as d:
            monkeypatch.setenv("STABLEJIT_DUMP_TO", d)
            asked.clear()
            with sj.lazy():
                y = graphs["a"]()
            np.testing.assert_array_equal(np.asarray(y), got[0])
            assert asked == [1]  # (a dump names the graph's lines: Python's flush)
    finally:
        recorder_native.install(was)
    for name, g in zip("aaaba", got, strict=True):
        np.testing.assert_array_equal(g, np.asarray(graphs[name]()))
    # each graph runs once; the repeats of the last graph skip _program on the native path
    assert counts == ([(1, 1), (0, 1), (0, 1), (1, 1), (1, 1)] if native
                      else [(1, 1)] * 5)


_JIT_TWICE, _JIT_THRICE = sj.jit(lambda v: v * 2.0), sj.jit(lambda v: v * 3.0)

# Pairs of graphs alike but for one thing their program depends on. A graph is run by
# the program of the last graph when its tape and results equal that graph's
# (LazyBackend._program): each pair, alternated, must still give each its own values.
_NEAR_GRAPHS = {
    "a constant": (lambda x: (x * 2.0 + 1.0,), lambda x: (x * 2.0 + 1.5,)),
    "a zero's sign": (lambda x: (x * 0.0,), lambda x: (x * -0.0,)),
    "a number's type": (lambda x: (x + 1.0,), lambda x: (x + np.float32(1.0),)),
    "an op": (lambda x: (snp.tanh(x) + 1.0,), lambda x: (snp.sin(x) + 1.0,)),
    "the operands' order": (lambda x: (x - x * 2.0,), lambda x: (x * 2.0 - x,)),
    "an operand's shape": (lambda x: (x + 1.0,), lambda x: (x[:2] + 1.0,)),
    "an operand's dtype": (lambda x: (x + 1.0,), lambda x: (snp.astype(x, snp.int32) + 1,)),
    "an attribute": (lambda x: (snp.sum(x, axis=0),), lambda x: (snp.sum(x, axis=1),)),
    "the result kept": (lambda x: _one_of(x, 0), lambda x: _one_of(x, 1)),
    "an inlined Function": (lambda x: (_JIT_TWICE(x) + 1.0,),
                            lambda x: (_JIT_THRICE(x) + 1.0,)),
    "a derivative": (lambda x: (sj.grad(lambda v: snp.sum(v * v))(x),),
                     lambda x: (sj.grad(lambda v: snp.sum(v * v * v))(x),)),
}



def _one_of(x, i: int) -> tuple:
    """One graph's tape, either of its two values kept (the other dropped unread)."""
    ys = [x * 2.0]
    ys.append(ys[0] + 1.0)
    return tuple(y if j == i else None for j, y in enumerate(ys))


@pytest.mark.parametrize("name", list(_NEAR_GRAPHS))
def test_graphs_alike_but_in_one_thing_run_their_own_programs(name):
    """Alternating two graphs that differ in one respect gives each graph the values it
    has eagerly, every time, on the native and the Python path; after the first round
    neither compiles again."""
    pair = _NEAR_GRAPHS[name]
    x = snp.asarray(X)
    expected = [[None if r is None else np.asarray(r) for r in f(x)] for f in pair]
    for native in (True, False):
        was = recorder_native.installed()
        recorder_native.install(native)
        try:
            compiled = None
            for round_ in range(3):
                for f, want in zip(pair, expected, strict=True):
                    with sj.lazy():
                        got = f(x)
                    for g, w in zip(got, want, strict=True):
                        assert (g is None) == (w is None)
                        if g is not None:
                            assert g.dtype == snp.asarray(w).dtype
                            np.testing.assert_array_equal(np.asarray(g), w)
                if round_ == 0:
                    compiled = compilation.stats["compiled"] + compilation.stats["disk"]
            assert compilation.stats["compiled"] + compilation.stats["disk"] == compiled
        finally:
            recorder_native.install(was)


def test_a_graph_seen_before_is_logged_as_a_hit_either_way(monkeypatch, caplog):
    """STABLEJIT_LOG_COMPILES=1 logs a lazy graph's reuse alike whether it was the last
    graph run (found by comparison, with no key made) or an earlier one (by its key)."""
    from stablejit import lazy_backend
    keyed = []
    real = lazy_backend.structural_key
    monkeypatch.setattr(lazy_backend, "structural_key", lambda *a: keyed.append(1) or real(*a))
    monkeypatch.setenv("STABLEJIT_LOG_COMPILES", "1")
    x = snp.asarray(np.linspace(-1, 1, 7, dtype=np.float32))  # (a shape no other test runs)
    graphs = {"a": lambda: x * 1.2345 + 6.789, "b": lambda: x * 1.2345 - 6.789}
    with caplog.at_level("WARNING", logger="stablejit"):
        for name in "aaaba":
            with sj.lazy():
                y = graphs[name]()
            np.testing.assert_array_equal(np.asarray(y), np.asarray(graphs[name]()))
    hits = [r for r in caplog.records if "seen before: no IR built" in r.getMessage()]
    assert len(hits) == 3  # the second and third "a" by comparison, the last by key
    assert len(keyed) == 3  # the first "a", "b" and the last "a": the others compared

def test_signed_zeros_and_number_types_stay_distinct_constants():
    x = snp.asarray(np.array([1.0, -2.0], np.float32))
    with sj.lazy():
        pos, neg = x * 0.0, x * -0.0
        i, f = snp.asarray(np.array([3], np.int32)) + 1, x + 1.0
        npz = x * np.float32(0.0) + x * np.float32(-0.0)
    np.testing.assert_array_equal(np.signbit(np.asarray(pos)), [False, True])
    np.testing.assert_array_equal(np.signbit(np.asarray(neg)), [True, False])
    assert i.dtype == snp.int32 and np.asarray(i).tolist() == [4]
    assert np.asarray(f).tolist() == [2.0, -1.0]
    eager = x * np.float32(0.0) + x * np.float32(-0.0)
    np.testing.assert_array_equal(np.signbit(np.asarray(npz)), np.signbit(np.asarray(eager)))


def test_grad_over_a_closed_over_array_in_lazy_runs_one_graph(monkeypatch):
    from stablejit import lazy_backend
    labels = snp.asarray(np.array([0, 2, 1], np.int32))
    w = snp.asarray(X)

    def loss(w):
        logp = w - snp.log(snp.sum(snp.exp(w), axis=1, keepdims=True))
        return -snp.mean(snp.take_along_axis(logp, labels[:, None], axis=1))

    want = sj.grad(loss)(w)
    with sj.lazy() as backend:
        n = backend.flushes
        g = sj.grad(loss)(w)  # ops on `labels` alone record too, nothing is read back
        assert _pending(g) and backend.flushes == n
    assert backend.flushes == n + 1
    np.testing.assert_allclose(np.asarray(g), np.asarray(want), rtol=1e-6)
    # grad makes a new Function every call; the graph is still found by its structure
    built = []
    real = lazy_backend.function_of
    monkeypatch.setattr(lazy_backend, "function_of", lambda *a: built.append(1) or real(*a))
    with sj.lazy():
        again = sj.grad(loss)(w)
    assert built == []
    np.testing.assert_array_equal(np.asarray(again), np.asarray(g))


@pytest.mark.host_default
def test_the_digits_mlp_written_eagerly_trains_lazily_as_the_jitted_example():
    """The issue's case: examples/digits_mlp.py's step without jit, in lazy mode, takes
    the same steps as the jitted example (its graphs compiled once) and reaches
    the same test accuracy."""
    import importlib.util
    import pathlib

    from stablejit import nn
    path = pathlib.Path(__file__).resolve().parents[2] / "examples" / "digits_mlp.py"
    spec = importlib.util.spec_from_file_location("digits_mlp", path)
    digits = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(digits)
    x_train, y_train, x_test, y_test = digits.load()
    opt = nn.adam(2e-3)

    def eager_step(params, state, x, y):
        loss, grads = sj.value_and_grad(digits.loss_fn)(params, x, y)
        params, state = opt.update(grads, state, params)
        return params, state, loss

    def train(step, lazy: bool):
        rng = np.random.default_rng(0)
        params = digits.init_params(rng, (64, 32, 10))
        state = opt.init(params)
        for i in range(90):
            idx = rng.permutation(len(x_train))[:32]
            if lazy:
                with sj.lazy():
                    params, state, loss = step(params, state, x_train[idx], y_train[idx])
            else:
                params, state, loss = step(params, state, x_train[idx], y_train[idx])
            if i == 2:  # warmed up: from here the steps compile nothing
                compiled = compilation.stats["compiled"] + compilation.stats["disk"]
        compiled -= compilation.stats["compiled"] + compilation.stats["disk"]
        predictions = np.asarray(digits.predict(params, x_test))
        return params, float(np.mean(predictions == y_test)), compiled

    jit_params, jit_accuracy, _ = train(sj.jit(eager_step), lazy=False)
    with sj.lazy() as backend:
        flushes = backend.flushes
    lazy_params, lazy_accuracy, new_compiles = train(eager_step, lazy=True)
    assert new_compiles == 0
    # one program a step (the early start is off: LazyBackend._START_AT), run as the
    # block ends; then predict's, on the last step's lazy tensors
    assert backend.flushes - flushes == 90 + 1
    assert lazy_accuracy == jit_accuracy and lazy_accuracy > 0.75  # (90 small steps)
    for a, b in zip(sj.tree.leaves(lazy_params), sj.tree.leaves(jit_params), strict=True):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("early", [True, False], ids=["started early", "one graph (default)"])
@pytest.mark.host_default
def test_a_large_function_starts_the_graph(early, monkeypatch):
    """With the early start on (_start_at lowered to _START_AT), grad's derivative (or a
    jitted step) of _START_AT ops or more runs as soon as it is recorded, with the ops
    before it, so the device computes it while Python records the rest; a small jitted
    function stays pending. With the rule off (the default) every op waits for the read:
    one program. The values are the same either way."""
    def loss(w):
        h = snp.tanh(w)
        for _ in range(8):
            h = snp.sin(h * 1.5) + snp.cos(h)
        return snp.sum(h * h)

    w0 = snp.asarray(X)
    small = sj.jit(lambda v: v * 2.0 + 1.0)
    with sj.lazy() as backend:
        assert backend._start_at >= 1 << 62
        if early:
            monkeypatch.setattr(backend, "_start_at", LazyBackend._START_AT)
        n = backend.flushes
        w = w0 + 1.0
        g = sj.grad(loss)(w)
        assert backend.flushes == n + early and _pending(g) != early
        s = small(g)
        assert _pending(s) and backend.flushes == n + early
        after = s - g
    assert backend.flushes == n + 1 + early
    want = jax.grad(_jax_loss)(jnp.asarray(X) + 1.0)
    np.testing.assert_allclose(np.asarray(g), np.asarray(want), rtol=2e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(after), np.asarray(g) + 1.0, rtol=1e-6)


def _jax_loss(w):
    h = jnp.tanh(w)
    for _ in range(8):
        h = jnp.sin(h * 1.5) + jnp.cos(h)
    return jnp.sum(h * h)


def test_a_copy_of_a_lazy_tensor_runs_nothing_and_owns_its_buffer():
    x0 = snp.asarray(X)
    with sj.lazy() as backend:
        x = x0 * 2.0
        n = backend.flushes
        y = snp.astype(x, snp.float32)  # the array API's default copy=True
        z = sj.backend_copy(x)
        assert backend.flushes == n and _pending(y) and _pending(z)
        y[0, 0] = 100.0  # writes y only
    assert x.tolist() == (X * 2).tolist() and z.tolist() == (X * 2).tolist()
    assert y.tolist()[0][0] == 100.0
    c = sj.backend_copy(x)  # materialised: copied on the device
    sj.backend_transfer(x, "reference")  # frees x's buffer; the copy keeps its own
    assert c.tolist() == (X * 2).tolist()


def _mlp_loss(w, x):
    h = snp.tanh(x @ w)
    for _ in range(8):
        h = snp.sin(h * 1.5) + snp.cos(h)
    return snp.mean(h * h)


def _adam_like(w, g, m):
    m = 0.9 * m + 0.1 * g
    for _ in range(12):
        m = m - 1e-3 * snp.tanh(m) * snp.exp(-m * m)
    return w - 0.01 * m / (snp.sqrt(m * m) + 1e-8), m


_LARGE_CALLS = {
    "grad": lambda w, x: sj.grad(_mlp_loss)(w, x),
    "value_and_grad": lambda w, x: sj.value_and_grad(_mlp_loss)(w, x),
    "jitted step": None,  # (_jitted_call: one jitted function for the whole test)
    "grad of argnums 1": lambda w, x: sj.grad(_mlp_loss, argnums=1)(w, x),
}


@pytest.mark.parametrize("native", [True, False], ids=["native", "python"])
@pytest.mark.parametrize("name", list(_LARGE_CALLS))
@pytest.mark.host_default
def test_a_large_function_on_an_empty_graph_runs_as_eager_runs_it(name, native):
    """A Function of _START_AT ops or more (grad's derivative, a jitted step) met with
    nothing recorded runs at once, with its own (eager) program: no tape entry, no graph
    key, the eager values bit for bit, results that are lazy tensors holding buffers;
    on both recorder paths."""
    from tests.host.test_native_recorder import path
    if native and not recorder_native.available():
        pytest.skip(f"stablejit._recorder is not usable: {recorder_native.unavailable}")
    call = _LARGE_CALLS[name] or _STEP
    rng = np.random.default_rng(3)
    w = snp.asarray(rng.standard_normal((4, 6)).astype(np.float32))
    x = snp.asarray(rng.standard_normal((5, 4)).astype(np.float32))
    want = sj.tree.leaves(call(w, x))
    with path(native):
        call(w, x)  # (both paths warm)
        with sj.lazy():  # lazy tensors that hold buffers, as a previous step leaves them
            wl, xl = w * 1.0, x * 1.0
        compiled = compilation.stats["compiled"] + compilation.stats["disk"]
        python_runs = []
        python_run_now = LazyBackend._run_now

        def run_now(self, fn, tensors):
            python_runs.append(fn)
            return python_run_now(self, fn, tensors)
        with sj.lazy() as backend, pytest.MonkeyPatch.context() as mp:
            mp.setattr(backend, "_start_at", LazyBackend._START_AT)  # (the early start)
            mp.setattr(backend, "_program", None)  # (no graph program is looked up)
            mp.setattr(LazyBackend, "_run_now", run_now)
            n = backend.flushes
            got = sj.tree.leaves(call(wl, xl))
            assert backend.flushes == n + 1 and not backend._tape
            assert all(t._backend is backend and not _pending(t) for t in got)
            # (eager's program, compiled by the warm-up call)
            assert compilation.stats["compiled"] + compilation.stats["disk"] == compiled
            # again: the program it ran is kept (LazyBackend._now), and the native
            # recorder runs it from C with no Python step; evicted, Python loads it again
            del python_runs[:]
            again = sj.tree.leaves(call(wl, xl))
            assert backend.flushes == n + 2 and not backend._tape
            if name != "jitted step":  # (a jitted call's is fastcall.c's: tested below)
                assert len(python_runs) == (0 if native else 1)
            compilation._EXECUTABLES.clear()
            evicted = sj.tree.leaves(call(wl, xl))
            assert backend.flushes == n + 3 and not backend._tape
            assert all(t._backend is backend and not _pending(t) and not t.weak
                       for t in again + evicted)
            after = got[0] * 2.0  # later ops record on an empty graph as before
            assert _pending(after)
    for a, b, c, d in zip(got, again, evicted, want, strict=True):
        assert np.asarray(a).tobytes() == np.asarray(d).tobytes()
        assert np.asarray(b).tobytes() == np.asarray(d).tobytes()
        assert np.asarray(c).tobytes() == np.asarray(d).tobytes()
    assert np.asarray(after).tobytes() == (np.asarray(want[0]) * np.float32(2)).tobytes()


_JITTED = sj.jit(_adam_like)


def _STEP(w, x):  # noqa: N802 - a table entry (operands computed: no op before it)
    return _JITTED(w, w, w)


@pytest.mark.parametrize("native", [True, False], ids=["native", "python"])
@pytest.mark.host_default
def test_a_large_function_with_a_pending_or_deleted_operand_is_recorded(native):
    """An operand still pending (or a deleted tensor) keeps the Function on the tape: it
    joins the graph with the ops before it, and a deleted operand raises at the user's
    line, as recording always did."""
    from stablejit.errors import DeletedTensorError

    from tests.host.test_native_recorder import path
    if native and not recorder_native.available():
        pytest.skip(f"stablejit._recorder is not usable: {recorder_native.unavailable}")
    rng = np.random.default_rng(4)
    w0 = snp.asarray(rng.standard_normal((4, 6)).astype(np.float32))
    x = snp.asarray(rng.standard_normal((5, 4)).astype(np.float32))
    want = sj.grad(_mlp_loss)(w0 + 1.0, x)
    with path(native):
        with sj.lazy() as backend, pytest.MonkeyPatch.context() as mp:
            mp.setattr(backend, "_start_at", 1 << 62)  # (so the graph waits for the read)
            w = w0 + 1.0
            g = sj.grad(_mlp_loss)(w, x)
            assert _pending(g) and backend._tape
        np.testing.assert_allclose(np.asarray(g), np.asarray(want), rtol=1e-6, atol=1e-7)
        gone = snp.asarray(np.ones((4, 6), np.float32))
        gone._data = None  # (as backend_transfer leaves the tensor it moved)
        with sj.lazy():
            with pytest.raises(DeletedTensorError, match="deleted") as e:
                _JITTED(gone, gone, gone)
        assert "test_lazy.py" in str(e.value)


@pytest.mark.host_default
def test_the_lazy_block_restores_the_backend_stack_and_runs_its_graph_on_any_exit():
    """lazy() (a class context manager): `as` gives the block's backend; the block's
    graph runs when it ends, also when it ends by an exception, and the backend stack is
    as before; blocks nest (the inner one is the same backend: one graph)."""
    from stablejit.context import current_backend
    before = current_backend()
    x0 = snp.asarray(X)
    with pytest.raises(ZeroDivisionError):
        with sj.lazy() as backend:
            assert current_backend() is backend
            y = x0 * 3.0
            assert _pending(y)
            raise ZeroDivisionError("the block fails")
    assert current_backend() is before and not _pending(y)
    assert y.tolist() == (X * 3).tolist()
    with sj.lazy() as outer:
        a = x0 + 1.0
        with sj.lazy() as inner:
            assert inner is outer
            b = a * 2.0
        assert not _pending(b) and not _pending(a)  # (the inner block's end ran the graph)
        c = b - 1.0
        assert _pending(c)
    assert current_backend() is before
    assert c.tolist() == ((X + 1) * 2 - 1).tolist()
    block = sj.lazy()  # a block object can be entered again, as a generator's could not
    for i in range(2):
        with block as backend:
            d = x0 + float(i)
        assert not _pending(d) and d.tolist() == (X + i).tolist()


@pytest.mark.parametrize("native", [True, False], ids=["native", "python"])
@pytest.mark.host_default
def test_a_jitted_call_on_an_empty_graph_runs_from_the_cached_call(native, monkeypatch):
    """fastcall.c runs a jitted Function that the lazy backend has run at once before
    (LazyBackend._now) with no recording step: the same values bit for bit, run count
    and result slots as the Python path (Entry.record, then the backend's execute and
    _run_now). What takes the backend's execute on both paths: an op recorded first,
    an operand pending, _start_at raised, an evicted program."""
    from stablejit.lazy_backend import LazyBackend

    from tests.host.test_native import path as call_path
    from tests.host.test_native_recorder import path as record_path
    if native and not (fastcall.available() and recorder_native.available()):
        pytest.skip("the native extensions are not built")
    records = []

    def execute(self, fn, tensors, site=None):  # (Recorder's, C or Python, at call time)
        records.append(1)
        return super(LazyBackend, self).execute(fn, tensors, site)

    monkeypatch.setattr(LazyBackend, "execute", execute, raising=False)
    rng = np.random.default_rng(5)
    w0 = snp.asarray(rng.standard_normal((4, 6)).astype(np.float32))
    want = [np.asarray(t) for t in sj.tree.leaves(_JITTED(w0, w0, w0))]

    def check(got):
        for a, b in zip(sj.tree.leaves(got), want, strict=True):
            assert np.asarray(a).tobytes() == b.tobytes()

    with call_path(native), record_path(native):
        with sj.lazy() as backend:
            w = w0 * 1.0
        monkeypatch.setattr(backend, "_start_at", LazyBackend._START_AT)  # (early start)
        with sj.lazy():
            _JITTED(w, w, w)  # (the first run at once: Python's, which keeps the program)
        del records[:]
        with sj.lazy():
            n = backend.flushes
            got = _JITTED(w, w, w)
            assert backend.flushes == n + 1 and not backend._tape
            assert len(records) == (0 if native else 1)
            assert all(t._backend is backend and not _pending(t) and not t.weak
                       for t in sj.tree.leaves(got))
        check(got)
        # what Python decides: each call below takes Entry.record
        for case in ("an op first", "pending operand", "start_at raised", "evicted"):
            del records[:]
            with sj.lazy():
                if case == "an op first":
                    _ = w0 + 1.0
                    got = _JITTED(w, w, w)
                elif case == "pending operand":
                    p = w * 1.0
                    got = _JITTED(p, p, p)
                elif case == "start_at raised":
                    backend._start_at = 1 << 62
                    got = _JITTED(w, w, w)
                    assert _pending(sj.tree.leaves(got)[0])
                    backend._start_at = LazyBackend._START_AT
                else:
                    compilation._EXECUTABLES.clear()  # evicted: Program.run loads it again
                    got = _JITTED(w, w, w)
            assert len(records) == 1, case
            check(got)


def test_the_early_start_is_off_by_default():
    """One program per step by default: on an accelerator a launch is asynchronous
    already, and on the host one program measured faster too (LazyBackend._START_AT,
    docs/native.md); the early start is there for a backend whose _start_at is lowered."""
    from stablejit.lazy_backend import LazyBackend
    assert LazyBackend(sj.lazy().backend.target)._start_at >= 1 << 62
    assert sj.lazy().backend._start_at >= 1 << 62


_READS = {
    "numpy": lambda t: np.asarray(t).tobytes(),
    "block_until_ready then numpy": lambda t: np.asarray(t.block_until_ready()).tobytes(),
    "tolist": lambda t: t.tolist(),
    "item": lambda t: snp.sum(t).item(),
    "bool": lambda t: bool(snp.all(t > 0.5)),
}


@pytest.mark.parametrize("native", [True, False], ids=["native", "python"])
@pytest.mark.parametrize("read", list(_READS))
def test_threads_read_their_lazy_values_while_others_flush(native, read):
    """Threads share a device's lazy backend. A value read while another thread runs the
    graph that holds it waits for that run (the graph was already replaced by a new,
    maybe empty, one): it was read as a missing buffer (AttributeError on None). The
    threads meet inside each block, so that their values share one graph, and each
    step's graph is new to the process, so its run compiles while the others read."""
    import threading

    from tests.host.test_native import path as call_path
    from tests.host.test_native_recorder import path as record_path
    if native and not (fastcall.available() and recorder_native.available()):
        pytest.skip("the native extensions are not built")
    x = snp.asarray(np.linspace(-1, 1, 7, dtype=np.float32))
    # (constants no other test's graph has: every step's program is compiled here)
    base = 1000.0 + 100 * list(_READS).index(read) + 50 * native
    get = _READS[read]

    barriers = [threading.Barrier(4) for _ in range(6)]

    def step(k, together=False):
        with sj.lazy():
            out = snp.tanh(x * 1.0) + (base + k)
            if together:  # every thread's values are in the one graph the first exit runs
                barriers[k].wait(timeout=60)
        return get(out)

    results, errors = [], []

    def work():
        try:
            results.append([step(k, together=True) for k in range(6)])
        except Exception as e:  # pragma: no cover (reported below)
            errors.append(e)
            for b in barriers:
                b.abort()

    with call_path(native), record_path(native):
        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        want = [step(k) for k in range(6)]
    assert errors == []
    assert results == [want] * 4
