"""Streams: EXLA's running sum, state kept on the device, compiled once, back-pressure,
10,000 chunks without memory growth, and clear errors when used out of order."""

from __future__ import annotations

import inspect
import threading

import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp
from stablejit import StreamError


def running_sum(x, acc):
    return acc, x + acc


def test_running_sum_like_exla():
    assert not stablejit.stream_is_cached(running_sum, "i64[]", 0)
    s = stablejit.stream(running_sum, "i64[]", 0)
    outs = []
    for i in range(1, 6):
        s.send(i)
        outs.append(s.recv())
    assert [int(o) for o in outs] == [0, 1, 3, 6, 10]
    assert all(o.dtype == stablejit.dtypes.int64 for o in outs)
    final = s.done()
    assert int(final) == 15 and isinstance(final.backend, stablejit.XlaBackend)
    assert s.is_cached() and stablejit.stream_is_cached(running_sum, "i64[]", 0)
    assert not stablejit.stream_is_cached(running_sum, "i64[3]", np.zeros(3, np.int64))
    # a second stream of the same function reuses the compiled step
    j = inspect.unwrap(stablejit.stream).__globals__["_STEPS"][running_sum]
    (step,) = j.values()
    traces = step.traces
    s2 = stablejit.stream(running_sum, "i64[]", 100)
    s2.send(1)
    assert int(s2.recv()) == 100 and int(s2.done()) == 101
    assert step.traces == traces


def test_sends_can_run_ahead_of_recv_and_pytree_state():
    def step(x, state):
        total, count = state["total"], state["count"]
        return snp.mean(x), {"total": total + snp.sum(x), "count": count + 1}

    chunks = [np.arange(4, dtype=np.float32) * k for k in range(5)]
    s = stablejit.stream(step, "f32[4]", {"total": np.float32(0), "count": 0})
    for c in chunks:
        s.send(c)
    got = [float(s.recv()) for _ in chunks]
    np.testing.assert_allclose(got, [c.mean() for c in chunks])
    final = s.done()
    assert float(final["total"]) == sum(c.sum() for c in chunks)
    assert int(final["count"]) == 5


def test_state_stays_on_device_and_memory_does_not_grow():
    client = stablejit.devices()[0].client
    s = stablejit.stream(lambda x, st: (snp.sum(x * st), st * 0.5 + x), "f32[64]",
                         np.zeros(64, np.float32))
    chunk = np.ones(64, np.float32)
    for _ in range(200):  # warm up
        s.send(chunk)
        s.recv()
    before = len(client.live_arrays())
    for _ in range(10_000):
        s.send(chunk)
        s.recv()
    after = len(client.live_arrays())
    assert after <= before + 2, (before, after)
    np.testing.assert_allclose(np.asarray(s.done()), np.full(64, 2.0), rtol=1e-6)


def test_back_pressure():
    s = stablejit.stream(running_sum, "i64[]", 0, max_pending=3)
    for i in range(3):
        s.send(i)
    with pytest.raises(StreamError, match="3 outputs are waiting.*recv"):
        s.send(3)
    # another thread's send waits until the owner receives
    sent = threading.Event()

    def producer():
        s.send(3)
        sent.set()

    t = threading.Thread(target=producer)
    t.start()
    assert not sent.wait(0.2)
    assert int(s.recv()) == 0
    t.join(10)
    assert sent.is_set()
    assert [int(s.recv()) for _ in range(3)] == [0, 1, 3]
    assert int(s.done()) == 6


def test_errors_out_of_order():
    s = stablejit.stream(running_sum, "f32[2]", np.zeros(2, np.float32))
    with pytest.raises(StreamError, match="send\\(\\) a chunk first"):
        s.recv()
    with pytest.raises(StreamError, match=r"shape \(3,\) does not match.*\(2,\)"):
        s.send(np.ones(3, np.float32))
    with pytest.raises(StreamError, match="cannot be safely converted"):
        s.send(np.array([1 + 2j, 0], np.complex64))
    s.send([1.0, 2.0])
    with pytest.raises(StreamError, match="1 output\\(s\\) not received"):
        s.done()
    s.recv()
    s.done()
    with pytest.raises(StreamError, match="after done"):
        s.send([1.0, 2.0])
    bad = stablejit.stream(lambda x, st: (x, st.astype("float64")), "f32[2]",
                           np.zeros(2, np.float32))
    with pytest.raises(StreamError, match="changed the state's types"):
        bad.send([1.0, 2.0])
    with pytest.raises(TypeError, match="reference backend"):
        stablejit.stream(running_sum, "f32[]", 0.0, backend="reference")
