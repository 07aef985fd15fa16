"""The native recorder's lock (stablejit._recorder.RLock) behaves as threading.RLock.

A recorder's `_lock` is this lock while the native path is on: C takes it without a
method call, and Python code (`with self._lock:`, a flush) takes it through the same
methods as threading.RLock's. Each behaviour below runs on both locks.
"""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
import stablejit as sj
import stablejit.numpy as snp
from stablejit import recorder, recorder_native

from tests.host.test_native_recorder import needs_native, path


def _locks():
    kinds = [pytest.param(threading.RLock, id="threading.RLock")]
    if recorder_native.available():
        kinds.append(pytest.param(recorder_native._recorder.RLock, id="native.RLock"))
    return kinds


def _in_thread(fn):
    """fn() run in another thread: what it returned or raised."""
    out = {}

    def run():
        try:
            out["value"] = fn()
        except BaseException as e:  # noqa: BLE001 - the caller compares it
            out["error"] = e
    t = threading.Thread(target=run)
    t.start()
    t.join(10)
    assert not t.is_alive(), "the other thread hung"
    return out


@pytest.fixture(params=[True, False], ids=["native", "python"])
def either_path(request):
    """The test runs on the native recorder path, then on the Python one."""
    if request.param and not recorder_native.available():
        pytest.skip(str(recorder_native.unavailable))
    with path(request.param):
        yield request.param


def _together(*fns):
    """Run each fn in its own thread, all at once; fail if one has not ended in 10 s."""
    ts = [threading.Thread(target=fn) for fn in fns]
    for t in ts:
        t.start()
    for t in ts:
        t.join(10)
    assert not any(t.is_alive() for t in ts), "a thread hung (on the recorder's lock?)"


def _reentrant(lock):
    return [lock.acquire(), lock.acquire(), lock._is_owned(), lock.release(),
            lock._is_owned(), lock.release(), lock._is_owned()]


def _release_unheld(lock):
    lock.release()


def _other_thread_cannot_take(lock):
    with lock:
        return [_in_thread(lambda: lock.acquire(blocking=False)),
                _in_thread(lambda: lock.acquire(False)),
                _in_thread(lambda: lock._is_owned())]


def _timeout_waits(lock):
    with lock:
        t0 = time.monotonic()
        got = _in_thread(lambda: lock.acquire(timeout=0.05))
        waited = time.monotonic() - t0
    return got, waited >= 0.04


def _other_thread_cannot_release(lock):
    with lock:
        err = _in_thread(lock.release)["error"]
    return type(err).__name__, str(err)


def _bad_arguments(lock):
    out = []
    for args, kwargs in [((False, 1.0), {}), ((), {"timeout": -2}),
                         ((), {"blocking": True, "timeout": "x"}), ((1, 2, 3), {}),
                         ((), {"timeout": 1e300})]:
        try:
            lock.acquire(*args, **kwargs)
            out.append("taken")
            lock.release()
        except (ValueError, TypeError, OverflowError) as e:
            out.append(type(e).__name__)
    return out


def _free_after_with(lock):
    with lock, lock:
        pass
    return _in_thread(lambda: (lock.acquire(False), lock.release()))


def _condition(lock):
    cond = threading.Condition(lock)
    box = []

    def waiter():
        with cond:
            cond.wait_for(lambda: box, timeout=5)
            return list(box)
    out = {}
    t = threading.Thread(target=lambda: out.setdefault("v", waiter()))
    t.start()
    time.sleep(0.02)
    with cond:
        box.append(1)
        cond.notify_all()
    t.join(10)
    return out


def _counts_under_contention(lock):
    n = [0]

    def work():
        for _ in range(2000):
            with lock:
                v = n[0]
                time.sleep(0) if v % 97 == 0 else None  # give the GIL away mid-update
                n[0] = v + 1
    ts = [threading.Thread(target=work) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(30)
    return n[0]


def _exclusive_with_timeouts_and_nesting(lock):
    """Waiters that time out, non-blocking tries and nested takes among threads that hold
    the lock across GIL switches: never two holders, and the lock free at the end (the
    native lock counts its waiters and wakes one per give)."""
    state = {"holders": 0, "most": 0, "taken": 0}

    def hold():
        state["holders"] += 1
        state["most"] = max(state["most"], state["holders"])
        time.sleep(0.0002)  # the GIL goes to the others while this thread holds it
        state["holders"] -= 1
        state["taken"] += 1

    def work(i):
        for k in range(150):
            how = (i + k) % 3
            got = (lock.acquire(timeout=0.0005) if how == 0 else
                   lock.acquire(blocking=False) if how == 1 else lock.acquire())
            if got:
                with lock:  # nested
                    hold()
                lock.release()
    ts = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(60)
    free = _in_thread(lambda: lock.acquire(blocking=False))["value"]
    return state["most"], state["taken"] >= 300, free


BEHAVIOURS = [_reentrant, _release_unheld, _other_thread_cannot_take, _timeout_waits,
              _other_thread_cannot_release, _bad_arguments, _free_after_with, _condition,
              _counts_under_contention, _exclusive_with_timeouts_and_nesting]


def _outcome(behaviour, make):
    try:
        return ("value", behaviour(make()))
    except Exception as e:  # noqa: BLE001 - compared across the two locks
        return ("error", type(e).__name__, str(e))


def _normal(v):
    # an exception from another thread compares by its type and message
    if isinstance(v, BaseException):
        return (type(v).__name__, str(v))
    if isinstance(v, dict):
        return {k: _normal(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return type(v)(_normal(x) for x in v)
    return v


@needs_native
@pytest.mark.parametrize("behaviour", BEHAVIOURS, ids=lambda f: f.__name__.strip("_"))
def test_the_native_lock_behaves_as_threading_rlock(behaviour):
    want = _normal(_outcome(behaviour, threading.RLock))
    got = _normal(_outcome(behaviour, recorder_native._recorder.RLock))
    assert got == want


def test_the_expected_outcomes_of_threading_rlock():
    # (what the table above compares against, pinned, so a change in either is seen)
    assert _outcome(_reentrant, threading.RLock) == \
        ("value", [True, True, True, None, True, None, False])
    assert _outcome(_release_unheld, threading.RLock)[:2] == ("error", "RuntimeError")
    assert _outcome(_counts_under_contention, threading.RLock) == ("value", 8000)
    assert _outcome(_exclusive_with_timeouts_and_nesting, threading.RLock) == \
        ("value", (1, True, True))
    assert _outcome(_timeout_waits, threading.RLock) == ("value", ({"value": False}, True))


def test_a_recorder_takes_the_lock_of_its_path(either_path):
    native = either_path
    b = recorder.Recorder(sj.lazy().backend.target)
    want = recorder_native._recorder.RLock if native else threading.RLock
    assert type(b._lock) is type(want())
    # grad's tape (a Recorder made per call) records with it, eagerly and in lazy()
    x = snp.asarray(np.arange(3, dtype=np.float32))
    g = sj.grad(lambda v: snp.sum(v * v * 3.0))
    np.testing.assert_array_equal(np.asarray(g(x)), 6.0 * np.arange(3))
    with sj.lazy():
        gl = g(x)
    np.testing.assert_array_equal(np.asarray(gl), 6.0 * np.arange(3))


def test_an_op_waits_while_another_thread_holds_the_recorder(either_path):
    # the C path waits for the lock with the GIL released: the holder can go on and
    # give it back (holding the GIL while waiting would hang here)
    x = snp.asarray(np.arange(4, dtype=np.float32))
    b = sj.lazy().backend
    held, done = threading.Event(), threading.Event()
    out = {}

    def holder():
        with b._lock:
            held.set()
            time.sleep(0.1)  # Python work while holding it (the GIL is given away)
            out["recorded while held"] = done.is_set()

    def recorder_thread():
        held.wait(5)
        with sj.lazy():
            y = x * 2.0 + 1.0
        out["y"] = np.asarray(y)
        done.set()
    _together(holder, recorder_thread)
    assert out["recorded while held"] is False
    np.testing.assert_array_equal(out["y"], np.arange(4, dtype=np.float32) * 2 + 1)


def test_each_thread_reads_its_own_backend_stack(either_path):
    # C reads a thread's backend stack from its thread-state dict: a lazy() block open in
    # one thread must not make another thread's ops lazy, before or after that thread
    # first records
    x = snp.asarray(np.arange(4, dtype=np.float32))
    inside, go, out = threading.Event(), threading.Event(), {}

    def lazy_thread():
        with sj.lazy():
            out["lazy before"] = type((x * 2.0)._backend).__name__
            inside.set()
            go.wait(5)
            out["lazy after"] = type((x + x)._backend).__name__

    def eager_thread():
        inside.wait(5)
        out["eager"] = type((x * 2.0)._backend).__name__
        out["eager value"] = np.asarray(x * 3.0 - x)
        go.set()
    _together(lazy_thread, eager_thread)
    assert out["lazy before"] == out["lazy after"] == "LazyBackend"
    assert out["eager"] == "XlaBackend"
    np.testing.assert_array_equal(out["eager value"], np.arange(4) * 2.0)
