"""The native cached call of a composite (recorder.c's composite_call) against the Python
one (composite.one_program's g).

A namespace function made of several primitives (sum with an axis, mean,
take_along_axis, log_softmax ...) is one cached Function per signature. On the native
path, a call whose signature C can key (tensors of one backend; None, bool, int and str
settings) and has seen is recorded (lazy(), a grad tape) or run (a device) without g's
Python; every other call takes g's Python. Both paths must give the same values bit for
bit, the same weakness, the same tape entries at the same user lines, and the same
errors.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest
import stablejit as sj
import stablejit.numpy as snp
from stablejit import composite, config, recorder_native

from tests.host.test_native_recorder import _both, _same, needs_native, path
from tests.support.threads import errors_while_evicting

X = np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4)
IDX = np.array([[0], [3], [1]], dtype=np.int32)


def _x():
    return snp.asarray(X)


def _i():
    return snp.asarray(IDX)


# (name, f(x, i), differentiable): keyed in C (tensors and None/bool/int/str settings,
# positional or by keyword, in either order) and keyed by Python (a float, a tuple, a
# weak tensor, tensors of two backends)
CASES = [
    ("mean", lambda x, i: snp.mean(x), True),
    ("mean axis keepdims", lambda x, i: snp.mean(x, axis=1, keepdims=True), True),
    ("mean axis None", lambda x, i: snp.mean(x, axis=None), True),
    ("sum axis", lambda x, i: snp.sum(x, axis=0), True),
    ("sum keywords in the other order", lambda x, i: snp.sum(x, keepdims=True, axis=1), True),
    ("sum positional axis", lambda x, i: snp.sum(x, 1), True),
    ("sum of ints", lambda x, i: snp.sum(i, axis=0), False),
    ("take_along_axis", lambda x, i: snp.take_along_axis(x, i, axis=1), True),
    ("take_along_axis str mode", lambda x, i: snp.take_along_axis(x, i, 1, mode="clip"),
     True),
    ("var ddof", lambda x, i: snp.var(x, axis=0, ddof=1), True),
    ("argmax", lambda x, i: snp.argmax(x, axis=1), False),
    ("log_softmax", lambda x, i: sj.nn.log_softmax(x), True),
    ("cross_entropy", lambda x, i: sj.nn.cross_entropy(x, i[:, 0]), True),
    ("dtype setting", lambda x, i: x * sj.nn.one_hot(i[:, 0], 4, snp.float32), True),
    ("dtype setting by keyword",
     lambda x, i: x * sj.nn.one_hot(i[:, 0], 4, dtype=snp.float32, axis=-1), True),
    ("float setting (Python keys it)", lambda x, i: snp.max(x, axis=1, initial=0.5), True),
    ("tuple setting (Python keys it)", lambda x, i: snp.sum(x, axis=(0, 1)), True),
    ("weak tensor", lambda x, i: snp.mean(x) + snp.mean(snp.asarray(2.0)), True),
    ("a value of the graph and a device tensor",
     lambda x, i: snp.take_along_axis(x * 1.0, _i(), axis=1), True),
    ("a two-result composite", lambda x, i: sj.nn.logsumexp(x, axis=1, return_sign=True)[0],
     True),
]


def _call(fn, x, i, twice=True):
    if twice:  # the first call with a signature traces it: the second is the cached call
        fn(x, i)
    return fn(x, i)


@pytest.mark.parametrize("name, fn, diff", CASES, ids=[c[0] for c in CASES])
def test_lazy_records_the_same_entries_at_the_same_lines(name, fn, diff):
    _call(fn, _x(), _i())  # (signatures seen before, as in a training loop)
    _both(lambda x, i: _call(fn, x, i), _x, _i)


@pytest.mark.parametrize("name, fn, diff", CASES, ids=[c[0] for c in CASES])
def test_eager_gives_the_same_values(name, fn, diff):
    outs = []
    for native in (True, False):
        with path(native):
            outs.append(_call(fn, _x(), _i()))
    _same(*outs)


@pytest.mark.parametrize("name, fn, diff", [c for c in CASES if c[2]],
                         ids=[c[0] for c in CASES if c[2]])
@pytest.mark.parametrize("lazy", [False, True], ids=["eager grad", "grad in lazy"])
def test_grad_tape_gives_the_same_gradients(name, fn, diff, lazy):
    def run():
        g = sj.grad(lambda x: snp.sum(fn(x, _i())))
        if not lazy:
            return _call(lambda x, i: g(x), _x(), None)
        with sj.lazy():
            out = _call(lambda x, i: g(x), _x(), None)
        return out
    outs = []
    for native in (True, False):
        with path(native):
            outs.append(run())
    _same(*outs)
    np.testing.assert_allclose(np.asarray(outs[0]), np.asarray(
        sj.grad(lambda x: snp.sum(fn(x, _i())), )(sj.numpy.asarray(X))), rtol=1e-6)


def test_results_have_the_weakness_of_the_function_run_op_by_op():
    w = snp.asarray(2.0)
    assert w.weak
    for native in (True, False):
        with path(native):
            for f in (snp.mean, snp.max, snp.var, sj.nn.silu, sj.nn.elu, sj.nn.leaky_relu):
                f(w)
                assert f(w).weak == f.eager(w).weak
                with sj.lazy():
                    f(w * 1.0)
                    assert f(w * 1.0).weak == f.eager(w).weak


def test_errors_are_the_same_on_both_paths():
    """An error raised while recording (a tensor of an ended grad trace, a wrong axis)
    is the same on both paths, at the user's line."""
    messages = []
    for native in (True, False):
        with path(native):
            kept = []

            def keep(x, kept=kept):
                kept.append(x)
                return snp.sum(x)
            sj.grad(keep)(_x())
            snp.mean(_x(), axis=1)
            with sj.lazy(), pytest.raises(Exception) as e:
                snp.mean(kept[0], axis=1)
            with pytest.raises(Exception) as e2:
                snp.mean(_x(), axis=5)
            messages.append((type(e.value), str(e.value), type(e2.value), str(e2.value)))
    assert messages[0] == messages[1]
    assert "test_native_composite.py" in messages[0][3]


_G = composite.one_program(lambda x: x).__code__  # every composite's g has this code


def _python_steps_run(program, native: bool) -> bool:
    """Whether g's Python after the native call runs (g calls a Python function other
    than _run, the device's program call) while program() makes its second call of a
    composite."""
    seen = []

    def watch(frame, event, arg):
        if event == "call" and frame.f_back is not None and frame.f_back.f_code is _G:
            seen.append(frame.f_code)
    with path(native):
        program()
        sys.setprofile(watch)
        try:
            program()
        finally:
            sys.setprofile(None)
    # (a key member's __hash__, such as a DType setting's, is the lookup, not g's steps)
    return any(c is not composite._run.__code__ and c.co_name != "__hash__" for c in seen)


@needs_native
@pytest.mark.parametrize("where", ["eager", "lazy", "lazy on device tensors", "grad tape",
                                   "grad tape on a device tensor"])
@pytest.mark.parametrize("call", ["mean", "one_hot with a dtype"])
def test_a_cached_call_skips_gs_python_on_the_native_path(where, call):
    x = _x()
    f = (lambda v: snp.mean(v, axis=1, keepdims=True)) if call == "mean" else \
        (lambda v: v * sj.nn.one_hot(_i()[:, 0], 4, snp.float32))

    def program():
        if where == "eager":
            return f(x)
        if where == "lazy":
            with sj.lazy():
                return f(x * 1.0)
        if where == "lazy on device tensors":  # (the graph's parameters, as g records)
            with sj.lazy():
                return f(x)
        if where == "grad tape":
            return sj.grad(lambda v: f(v)[0, 0])(x)
        return sj.grad(lambda v: snp.sum(v * f(x)))(x)
    assert not _python_steps_run(program, True)
    assert _python_steps_run(program, False)


def _runs_python_run(call) -> bool:
    """Whether composite._run (the device program's Python call) runs in call()."""
    seen = []

    def watch(frame, event, arg):
        if event == "call" and frame.f_code is composite._run.__code__:
            seen.append(frame)
    sys.setprofile(watch)
    try:
        call()
    finally:
        sys.setprofile(None)
    return bool(seen)


# the composites C keys (tensors of one device, settings C keys), eagerly on a device
C_KEYED = [c for c in CASES if c[0] in (
    "mean", "mean axis keepdims", "sum keywords in the other order", "sum of ints",
    "take_along_axis", "take_along_axis str mode", "var ddof", "argmax", "log_softmax",
    "cross_entropy", "dtype setting by keyword", "a two-result composite")]


@needs_native
@pytest.mark.parametrize("name, fn, diff", C_KEYED, ids=[c[0] for c in C_KEYED])
def test_an_eager_cached_call_runs_its_program_from_c(name, fn, diff):
    """Once a signature's program exists on a device, its eager call runs it from C
    (recorder.c's composite_eager) with _run's results; the Python path calls _run."""
    x, i = _x(), _i()
    got = {}
    for native in (True, False):
        with path(native):
            fn(x, i)  # (the first call traces the signature and makes its program)
            assert _runs_python_run(lambda: fn(x, i)) is not native
            got[native] = fn(x, i)
    _same(got[True], got[False])


@needs_native
def test_an_eager_composite_leaves_evicted_programs_and_deleted_operands_to_python():
    """An evicted program is loaded again by _run, and a deleted operand raises _run's
    error at the user's line, as on the Python path."""
    from stablejit import compilation
    from stablejit.errors import DeletedTensorError

    x, i = _x(), _i()
    want = np.asarray(snp.take_along_axis(x, i, axis=1))
    errors = []
    for native in (True, False):
        with path(native):
            snp.take_along_axis(x, i, axis=1)
            compilation._EXECUTABLES.clear()  # evicted: _run's Program.run loads it again
            assert _runs_python_run(lambda: snp.take_along_axis(x, i, axis=1))
            np.testing.assert_array_equal(np.asarray(snp.take_along_axis(x, i, axis=1)),
                                          want)
            gone = _x()
            snp.mean(gone, axis=1)
            sj.jit(lambda t: t * 2, donate_argnums=0)(gone)
            with pytest.raises(DeletedTensorError) as e:
                snp.mean(gone, axis=1)
            errors.append(str(e.value))
    assert errors[0] == errors[1] and "test_native_composite.py" in errors[0]


@needs_native
def test_a_composite_a_lazy_graph_starts_at_once_is_pythons():
    """On device tensors with nothing recorded, a Function as long as the lazy backend's
    _start_at runs at once (Recorder.execute): C leaves that call to g's Python, and the
    values are the same."""
    x = _x()
    with sj.lazy() as b:
        was = b._start_at
        b._start_at = 1
        try:
            assert _python_steps_run(lambda: snp.mean(x, axis=1), True)
            out = snp.mean(x, axis=1)
        finally:
            b._start_at = was
    np.testing.assert_array_equal(np.asarray(out), X.mean(axis=1))


@needs_native
def test_python_keys_what_c_does_not():
    """A float setting and a debug-checks run take g's Python on the native path too."""
    x = _x()
    assert _python_steps_run(lambda: snp.max(x, axis=1, initial=0.5), True)
    config.update("debug_nans", True)
    try:
        assert _python_steps_run(lambda: snp.mean(x, axis=1), True)
    finally:
        config.update("debug_nans", False)


def test_the_fallback_is_the_python_call_without_the_extension(monkeypatch):
    assert (composite._native_call is composite._python_call) == \
        (not recorder_native.available())
    monkeypatch.setattr(composite, "_native_call", composite._python_call)
    np.testing.assert_array_equal(np.asarray(snp.mean(_x(), axis=1)), np.mean(X, axis=1))
    assert composite._python_call({}, (), {}) is composite._MISS


@needs_native
def test_threads_run_eager_composites_safely():
    """Four threads run cached composites eagerly from C while another evicts every
    program: each call runs its program or has _run load it again."""
    x, i = _x(), _i()
    calls = [lambda: snp.take_along_axis(x, i, axis=1), lambda: snp.mean(x, axis=1),
             lambda: sj.nn.logsumexp(x, axis=1, return_sign=True)[0]]
    want = [np.asarray(c()) for c in calls]

    def step():
        for c, w in zip(calls, want, strict=True):
            np.testing.assert_array_equal(np.asarray(c()), w)
    with path(True):
        assert errors_while_evicting(step, 100) == []
