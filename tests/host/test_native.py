"""The native cached jit call (stablejit._fastcall) against the Python one.

Every signature kind jit knows, every op record, the errors a user can hit, the cache
semantics (traces, fast-table keys, retracing after a write) and threads: the native
path (Jitted.__call__ in C) and the Python path (STABLEJIT_NATIVE=0) give the same
results bit for bit, the same tensors slot for slot and the same errors with the user's
line; and a cached call really runs in C, never entering the Python __call__.
"""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
import os
import shutil
import subprocess
import sys
import sysconfig
import threading
from typing import NamedTuple

import numpy as np
import pytest
import stablejit as sj
import stablejit.numpy as snp
from stablejit import config, fastcall, tree
from stablejit.jit import Jitted

from tests.host.test_op_records import RECORDS
from tests.support.threads import errors_while_evicting

needs_native = pytest.mark.skipif(
    not fastcall.available(), reason="stablejit._fastcall is not built (no C compiler)")


@contextlib.contextmanager
def path(native: bool, count: list | None = None):
    """Calls of jitted functions take the native or the Python path in the block; with
    `count`, count[0] counts the calls that entered the Python __call__."""
    python = fastcall.python_call(Jitted)
    was_native = Jitted.__dict__["__call__"] is not python
    if count is not None:
        def counted(self, *args, **kwargs):
            count[0] += 1
            return python(self, *args, **kwargs)
        Jitted.__call__ = fastcall._fastcall.FastCall(counted)
    else:
        fastcall.install(Jitted, native)
    try:
        yield
    finally:
        Jitted.__call__ = python
        fastcall.install(Jitted, was_native)


class Pair(NamedTuple):
    a: object
    b: object


@dataclasses.dataclass
class Layer:
    w: object
    b: object


sj.register_dataclass(Layer)


def _f32(*shape, seed=0):
    return np.random.default_rng(seed).uniform(-2, 2, shape).astype(np.float32)


def _write_first(x):
    x[0] = 7.0
    return x * 2


_CAPTURED = snp.asarray(_f32(4, seed=9))

# (id, function of a namespace m (snp or np), arguments as NumPy/Python values, how
# stablejit gets each argument: "t" a tensor, "raw" as it is, jit keywords)
SIGNATURES = [
    ("two tensors", lambda m: lambda a, b: a * b + 1, (_f32(4), _f32(4, seed=1)), "tt", {}),
    ("0-d tensor", lambda m: lambda a: m.sin(a), (np.float32(0.5),), "t", {}),
    ("no arguments", lambda m: lambda: m.ones(3, dtype=m.float32), (), "", {}),
    ("int32", lambda m: lambda a, b: a // (b * b + 1), (np.arange(-5, 5, dtype=np.int32),
                                                     np.arange(10, dtype=np.int32)), "tt", {}),
    ("bool", lambda m: lambda a: m.logical_not(a), (np.array([True, False]),), "t", {}),
    ("complex64", lambda m: lambda a: a * a.conj(), (_f32(3).astype(np.complex64),), "t", {}),
    ("float16", lambda m: lambda a: a + a, (_f32(5).astype(np.float16),), "t", {}),
    ("nan and -0.0", lambda m: lambda a: a * 1.0, (np.array([np.nan, -0.0, np.inf],
                                                           np.float32),), "t", {}),
    ("weak tensor", lambda m: lambda a, b: a * b, (_f32(4), 2.0), "tt", {}),
    ("python scalar", lambda m: lambda a, s: a * s, (_f32(4), 2.5), "t-", {}),
    ("numpy argument", lambda m: lambda a, b: a - b, (_f32(4), _f32(4, seed=2)), "t-", {}),
    ("dict", lambda m: lambda d: d["a"] @ d["b"], ({"a": _f32(2, 3), "b": _f32(3)},), "T", {}),
    ("nested list, tuple, None", lambda m: lambda p: p[0][1] - p[1][0],
     (([_f32(2), _f32(2, seed=3)], (_f32(2, seed=4), None)),), "T", {}),
    ("namedtuple", lambda m: lambda p: p.a / (p.b * p.b + 1), (Pair(_f32(3), _f32(3)),),
     "T", {}),
    ("dataclass", lambda m: lambda l: m.tanh(l.w @ l.b),
     (Layer(_f32(2, 2), _f32(2, seed=5)),), "T", {}),
    ("tuple output", lambda m: lambda a: (a + 1, a.sum()), (_f32(3),), "t", {}),
    ("dict output with a constant", lambda m: lambda a: {"y": a, "k": 3.0}, (_f32(3),), "t",
     {}),
    ("namedtuple and dataclass outputs", lambda m: lambda a: (Pair(a, -a), Layer(a * 2, a)),
     (_f32(3),), "t", {}),
    ("static argument", lambda m: lambda a, n: a ** n, (_f32(3), 3), "t-",
     {"static_argnums": 1}),
    ("keyword argument", lambda m: lambda a, b=None: a + b, (_f32(3), _f32(3, seed=6)),
     "tk", {}),
    ("view argument", lambda m: lambda a: a * 3, (_f32(6),), "v", {}),
    ("writes into its argument", lambda m: _write_first, (_f32(3),), "t", {}),
    ("captured tensor", lambda m: lambda a: a + (_CAPTURED if m is snp else
                                                   np.asarray(_CAPTURED)), (_f32(4),), "t", {}),
    ("donated argument", lambda m: lambda a: a + 1, (_f32(4),), "t", {"donate_argnums": 0}),
]


def _args(kinds, values):
    """stablejit's arguments (and keyword arguments) for one call: fresh tensors."""
    args, kwargs = [], {}
    for k, v in zip(kinds, values, strict=True):
        if k == "t":
            args.append(snp.asarray(v))
        elif k == "T":
            args.append(tree.map(snp.asarray, v))
        elif k == "v":
            args.append(snp.asarray(v)[:])  # a view
        elif k == "k":
            kwargs["b"] = snp.asarray(v)
        else:
            args.append(v)
    return args, kwargs


def _same(a, b) -> None:
    """Bit for bit, and slot for slot for tensors."""
    assert tree.structure(a) == tree.structure(b)
    for x, y in zip(tree.leaves(a), tree.leaves(b), strict=True):
        assert type(x) is type(y)
        if isinstance(x, sj.Tensor):
            assert (x.type, x.weak, x._backend, x._view, x._aliases) == \
                   (y.type, y.weak, y._backend, y._view, y._aliases)
            x = np.asarray(x)
            y = np.asarray(y)
            assert x.dtype == y.dtype and x.tobytes() == y.tobytes()
        else:
            assert x == y


def _calls(name, make_fn, kinds, values, jit_kw, native):
    f = sj.jit(make_fn(snp), **jit_kw)
    count = [0]
    outs = []
    with path(native, count if native else None):
        for _ in range(3):
            args, kwargs = _args(kinds, values)
            outs.append(f(*args, **kwargs))
            if name == "writes into its argument":
                outs.append(args[0])  # the caller's tensor holds the written value
    return f, outs, count[0]


@needs_native
@pytest.mark.parametrize("case", SIGNATURES, ids=[c[0] for c in SIGNATURES])
def test_native_and_python_paths_agree_on_every_signature_kind(case):
    name, make_fn, values, kinds, jit_kw = case
    f_n, native, entered = _calls(name, make_fn, kinds, values, jit_kw, True)
    f_p, python, _ = _calls(name, make_fn, kinds, values, jit_kw, False)
    for a, b in zip(native, python, strict=True):
        _same(a, b)
    assert f_n.traces == f_p.traces == 1
    assert set(f_n._fast) == set(f_p._fast)
    # a call whose signature the fast table holds never enters the Python __call__
    assert entered == (1 if f_n._fast else 3), f"{name}: {entered} Python calls"
    want = make_fn(np)(*[v.copy() if isinstance(v, np.ndarray) else v for v in values])
    for g, w in zip(tree.leaves(native[0]), tree.leaves(want), strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6, atol=1e-6)


@needs_native
@pytest.mark.parametrize("case", SIGNATURES, ids=[c[0] for c in SIGNATURES])
def test_native_and_python_paths_agree_in_lazy(case):
    """Each signature kind called in lazy(): a cached call is one entry of the pending
    graph, recorded by fastcall.c's lazy_record on the native path and by Entry.record
    on the Python one: the same output trees, weakness and bits."""
    name, make_fn, values, kinds, jit_kw = case
    got = []
    for native in (True, False):
        with sj.lazy():
            f, outs, _ = _calls(name, make_fn, kinds, values, jit_kw, native)
        got.append(outs)
        assert f.traces == 1
    for a, b in zip(*got, strict=True):
        _same(a, b)


@needs_native
@pytest.mark.parametrize("out", ["single", "tree"])
def test_a_cached_call_in_lazy_records_from_c(out, monkeypatch):
    """On the native path fastcall.c records the entry itself (lazy_record), without
    Entry.record; the Python path calls Entry.record. Same values, weakness and tree."""
    from stablejit.signature import Entry

    calls = []
    python_record = Entry.record
    monkeypatch.setattr(Entry, "record",
                        lambda self, leaves: calls.append(1) or python_record(self, leaves))
    fn = (lambda a, b: a * b + 2.0) if out == "single" else \
        (lambda a, b: {"s": a * b, "d": (a - b, 2.0 * a)})
    x, y = snp.asarray(_f32(5)), snp.asarray(_f32(5, seed=1))
    got = []
    for native in (True, False):
        f = sj.jit(fn)
        with sj.lazy():
            f(x * 1.0, y)  # (traced, and its lazy entry put in the fast table)
        del calls[:]
        with path(native), sj.lazy():
            got.append(f(x * 1.0, y))
        assert calls == ([] if native else [1])
    _same(*got)


@needs_native
def test_a_cached_call_in_lazy_records_on_both_paths():
    """In lazy(), a cached call is one entry of the pending graph (Entry.record)."""
    results, entered = [], [0]
    for native in (True, False):
        f = sj.jit(lambda a, b: (a * b, a - b))
        x, y = _f32(5), _f32(5, seed=1)
        with path(native, entered if native else None), sj.lazy():
            tx, ty = snp.asarray(x), snp.asarray(y)
            outs = [f(tx, ty) for _ in range(3)]
            outs.append(f(outs[-1][0], ty)[1])
        results.append(outs)
        assert f.traces == 1
    assert entered[0] == 1  # the first call; the others recorded from C
    for a, b in zip(*results, strict=True):
        _same(a, b)
    np.testing.assert_allclose(np.asarray(results[0][-1]), x * y - y, rtol=1e-6)


_RECORDS = [r for r in RECORDS if r.jit == "ok"]


@needs_native
@pytest.mark.parametrize("rec", _RECORDS[::3], ids=[r.name for r in _RECORDS[::3]])
def test_op_records_cached_calls_agree_bit_for_bit(rec):
    """A third of the op records (all of them run natively in test_op_records.py),
    called three times: the first call traces, the others are cached calls."""
    arrays = rec.inputs(rec.dtypes[0])
    results = []
    for native in (True, False):
        f = sj.jit(rec.fn)
        tensors = [snp.asarray(a) for a in arrays]
        with path(native):
            results.append([f(*tensors) for _ in range(3)])
        assert f.traces == 1
    for a in results[0] + results[1]:
        _same(a, results[0][0])


def _error(f, args):
    with pytest.raises(Exception) as e:
        f(*args)
    return e.value


def _deleted():
    x = snp.arange(3.0)
    sj.deallocate(x)
    return (x,)


@needs_native
@pytest.mark.parametrize("bad", [
    ("deleted tensor", _deleted),
    ("a string", lambda: (snp.arange(3.0), "s")),
    ("an object in a pytree", lambda: ({"a": snp.arange(3.0), "b": object()},)),
    ("a tensor of another shape that the function rejects",
     lambda: (snp.ones((2, 2)),)),
], ids=lambda b: b[0])
def test_the_same_errors_at_the_users_line(bad):
    name, make_args = bad
    errors = []
    for native in (True, False):
        f = sj.jit(lambda *a: a[0] @ snp.ones(3) if a[0].ndim == 2 else a[0] + 1)
        f(snp.arange(3.0))  # the signature is cached: the fast path sees the bad call
        with path(native):
            errors.append(_error(f, make_args()))
    a, b = errors
    assert type(a) is type(b) and str(a) == str(b)
    assert __file__ in str(a), str(a)  # the user's line


@needs_native
def test_a_write_into_a_read_tensor_retraces_on_both_paths():
    for native in (True, False):
        c = snp.asarray([2.0])
        f = sj.jit(lambda x, c=c: x * float(c[0]))  # the value is baked into the program
        x = snp.arange(3.0)
        with path(native):
            assert np.asarray(f(x)).tolist() == [0, 2, 4] == np.asarray(f(x)).tolist()
            c[0] = 5.0
            assert np.asarray(f(x)).tolist() == [0, 5, 10]
        assert f.traces == 2


@needs_native
@pytest.mark.parametrize("mode", ["disable_jit", "debug_nans"])
def test_debug_modes_take_the_python_path(mode):
    for native in (True, False):
        runs = [0]

        def fn(x, runs=runs):
            runs[0] += 1
            return snp.log(x)

        f = sj.jit(fn)
        x = snp.asarray([1.0, 2.0])
        f(x)
        with path(native):
            if mode == "disable_jit":
                with sj.disable_jit():
                    f(x), f(x)
                assert runs[0] == 3  # the Python ran each time
                f(x)
                assert runs[0] == 3
            else:
                with config_setting("debug_nans", True):
                    with pytest.raises(FloatingPointError, match="log"):
                        f(snp.asarray([-1.0, 2.0]))
                    f(x)


@contextlib.contextmanager
def config_setting(name, value):
    config.update(name, value)
    try:
        yield
    finally:
        config.update(name, False)


@needs_native
def test_threads_share_a_function_while_its_table_is_cleared():
    f = sj.jit(lambda a, b: a * b - a)
    data = [(_f32(8, seed=i), _f32(8, seed=100 + i)) for i in range(4)]
    errors = []
    with path(True):
        f(snp.asarray(data[0][0]), snp.asarray(data[0][1]))

        def work(a, b):
            ta, tb = snp.asarray(a), snp.asarray(b)
            try:
                want = np.asarray(f(ta, tb))
                np.testing.assert_allclose(want, a * b - a, rtol=1e-6)
                for _ in range(300):  # bit for bit what the first call gave
                    np.testing.assert_array_equal(np.asarray(f(ta, tb)), want)
            except Exception as e:  # reported below
                errors.append(e)

        def blocked():
            with sj.disable_jit():  # another thread's debug mode: this one's only
                for _ in range(50):
                    f(snp.asarray(data[0][0]), snp.asarray(data[0][1]))

        threads = [threading.Thread(target=work, args=d) for d in data]
        threads.append(threading.Thread(target=blocked))
        for t in threads:
            t.start()
        for _ in range(20):
            f.clear_cache()
        for t in threads:
            t.join()
    assert not errors, errors[0]


@needs_native
def test_the_native_call_introspects_as_the_python_one():
    python = fastcall.python_call(Jitted)
    with path(True):
        call, f = Jitted.__call__, sj.jit(lambda a: a)
        assert (call.__name__, call.__qualname__, call.__doc__) == \
               (python.__name__, python.__qualname__, python.__doc__)
        assert inspect.signature(call) == inspect.signature(python)
        assert repr(f.__call__).startswith("<bound method Jitted.__call__ of <stablejit.jit")
        assert f.__call__(snp.arange(2.0)).tolist() == [0.0, 1.0]


def test_the_extension_is_built_where_a_compiler_is():
    cc = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(cc) is None:
        pytest.skip(f"no C compiler ({cc}): the Python path is the only one")
    assert fastcall.available(), (
        f"{fastcall.unavailable}, although a C compiler is present: rebuild it with "
        f"`pip install -e .` (or fix the slot its init names)")


@pytest.mark.parametrize("env,built,want", [
    ("0", True, "function"), ("1", True, "FastCall"),
    ("1", False, "function"),  # an install where the extension could not be built
])
def test_stablejit_native_selects_the_path_at_import(env, built, want):
    if want == "FastCall" and not fastcall.available():
        want = "function"  # no extension: the Python path whatever the variable says
    block = "" if built else "import sys; sys.modules['stablejit._fastcall'] = None; "
    code = (block + "import stablejit, stablejit.numpy as snp; "
            "from stablejit.jit import Jitted; "
            "f = stablejit.jit(lambda a: a * 2); x = snp.arange(3.0); f(x); "
            "print(type(Jitted.__dict__['__call__']).__name__, f(x).tolist(), "
            "stablejit.fastcall.unavailable)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ, "STABLEJIT_NATIVE": env}, check=True)
    kind, rest = out.stdout.strip().split(" ", 1)
    assert kind == want
    assert rest.startswith("[0.0, 2.0, 4.0]")
    if not built:
        assert "stablejit._fastcall was not built" in rest


@needs_native
def test_threads_record_cached_calls_in_lazy_safely():
    """Four threads record a cached call in lazy() blocks from C (lazy_record) while
    another evicts every program: each block's values are the jitted function's."""
    f = sj.jit(lambda a, b: {"s": a * b, "d": (a - b, 2.0 * a)})
    x, y = snp.asarray(_f32(5)), snp.asarray(_f32(5, seed=1))
    want = tree.map(np.asarray, f(x, y))

    def step():
        with sj.lazy():
            out = f(x * 1.0, y)
        for g, w in zip(tree.leaves(out), tree.leaves(want), strict=True):
            np.testing.assert_array_equal(np.asarray(g), w)
        assert not out["d"][1].weak
    with path(True):
        assert errors_while_evicting(step, 100) == []
