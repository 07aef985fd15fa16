"""The device backend (EXLA.Backend semantics): transfer moves and frees, copy keeps,
deallocate, same-device transfer is a no-op, async execution, host data moved
automatically, mixed devices are an error, to_batched; several host devices in a
subprocess (device ids, cross-device copies, jit on a chosen device)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp
from stablejit import DeletedTensorError, XlaBackend


def dev(x):
    return snp.asarray(np.asarray(x, dtype=np.float32))


def test_transfer_moves_and_frees_the_source():
    x = dev([1.0, 2.0, 3.0])
    buf = x._data
    y = stablejit.backend_transfer(x, "reference")
    assert y.backend is stablejit.REFERENCE and buf.is_deleted()
    np.testing.assert_array_equal(y.numpy(), [1, 2, 3])
    deleted = r"(?s)f32\[3\] tensor was deleted.*test_device_backend.py:33"
    with pytest.raises(DeletedTensorError, match=deleted):
        x + 1
    assert "deleted" in repr(x)
    z = stablejit.backend_transfer(y)  # back to the default device
    assert isinstance(z.backend, XlaBackend)
    np.testing.assert_array_equal(np.asarray(z * 2), [2, 4, 6])
    with pytest.raises(DeletedTensorError):
        y.numpy()


@pytest.mark.host_default
def test_copy_keeps_the_source_and_same_device_transfer_is_a_no_op():
    x = dev(np.arange(6).reshape(2, 3))
    c = stablejit.backend_copy(x)
    assert c is not x and c._data is not x._data
    np.testing.assert_array_equal(np.asarray(c + x), 2 * np.arange(6).reshape(2, 3))
    assert stablejit.backend_transfer(x, x.backend) is x
    assert stablejit.backend_transfer(x, f"xla:host:{x.device.id}") is x
    r = stablejit.backend_copy(x, "reference")
    np.testing.assert_array_equal(r.numpy(), np.asarray(x))
    assert x._data is not None


def test_deallocate():
    x = dev([5.0])
    buf = x._data
    stablejit.deallocate(x)
    assert buf.is_deleted()
    with pytest.raises(DeletedTensorError, match="deallocated"):
        np.asarray(x)
    stablejit.deallocate(x)  # twice is harmless


def test_async_execution_and_block_until_ready():
    a = dev(np.random.default_rng(0).standard_normal((256, 256)))
    f = stablejit.jit(lambda m: snp.tanh(m @ m) @ m)
    out = f(a)  # returns at once; the result is a future on the device
    assert out.block_until_ready() is out
    m = np.asarray(a)
    np.testing.assert_allclose(np.asarray(out), np.tanh(m @ m) @ m, rtol=2e-4, atol=2e-4)


def _slow_program():
    """A jitted program that outlasts the wait's poll (200 us): two 1024x1024 matmuls
    (milliseconds on a host CPU; programs run asynchronously there)."""
    return stablejit.jit(lambda m: (m @ m @ m)[0, :3] / 1024.0**2)


@pytest.mark.parametrize("wait", ["block_until_ready", "numpy", "float"])
def test_a_wait_polls_then_sleeps_and_a_long_program_turns_the_poll_off(wait, monkeypatch):
    from stablejit.runtime import buffers
    monkeypatch.setattr(buffers, "_sleep_next", 0)
    read = {"block_until_ready": lambda t: np.asarray(t.block_until_ready()),
            "numpy": np.asarray, "float": lambda t: float(t[0])}[wait]
    f = _slow_program()
    # on the host, where the program is long (a GPU runs it in microseconds); the poll is
    # the same code for every device
    host = stablejit.devices("host")[0]
    x = snp.asarray(np.ones((1024, 1024), np.float32), device=host)
    np.testing.assert_array_equal(np.atleast_1d(read(f(x)))[:1], [1.0])  # compiled: a miss
    monkeypatch.setattr(buffers, "_sleep_next", 0)
    out = f(x)
    assert not out._data.is_ready()  # still running
    np.testing.assert_array_equal(np.atleast_1d(read(out))[:1], [1.0])
    assert buffers._sleep_next == buffers._SLEEPS_AFTER_LONG  # the poll gave up
    for left in range(buffers._SLEEPS_AFTER_LONG - 1, -1, -1):  # these waits sleep at once
        np.testing.assert_array_equal(np.atleast_1d(read(f(x)))[:1], [1.0])
        assert buffers._sleep_next == left
    ready = snp.asarray(np.float32([4.0]), device=host)
    read(ready)  # a value already there costs no poll and leaves the hint alone
    assert buffers._sleep_next == 0


@pytest.mark.parametrize("wait", ["block_until_ready", "to_numpy"])
def test_waiting_on_a_deleted_buffer_raises_and_does_not_crash(wait):
    # jaxlib's is_ready crashes the process on a deleted buffer: the poll must not ask it
    from stablejit.runtime import buffers
    buf = dev([1.0])._data
    buf.delete()
    with pytest.raises(RuntimeError, match="deleted"):  # (jaxlib words it two ways)
        getattr(buffers, wait)(buf)


def test_host_and_reference_data_move_automatically():
    x = dev([1.0, 2.0])
    with stablejit.default_backend("reference"):
        r = snp.asarray(np.array([10.0, 20.0], np.float32))
    assert r.backend is stablejit.REFERENCE
    # x was made on the default device, r elsewhere on purpose: x's data follows r
    # (tests/host/test_device_following.py has the rule's table)
    s = x + r
    assert s.backend is stablejit.REFERENCE
    np.testing.assert_array_equal(np.asarray(s), [11, 22])
    np.testing.assert_array_equal(np.asarray(x * np.array([3.0], np.float32)), [3, 6])
    j = stablejit.jit(lambda a, b: a - b)(x, r)
    assert j.backend is stablejit.REFERENCE
    np.testing.assert_array_equal(np.asarray(j), [-9, -18])
    with stablejit.default_backend("reference"):  # inside, the device data is elsewhere
        assert isinstance((x + r).backend, XlaBackend)


@pytest.mark.parametrize("backend", ["xla", "reference"])
@pytest.mark.parametrize("n,size,leftover", [(10, 4, "repeat"), (10, 4, "discard"),
                                              (8, 4, "repeat"), (3, 5, "discard")])
def test_to_batched(backend, n, size, leftover):
    data = np.arange(n * 2, dtype=np.float32).reshape(n, 2)
    with stablejit.default_backend(backend):
        t = snp.asarray(data)
        batches = stablejit.to_batched(t, size, leftover=leftover)
        got = [np.asarray(b) for b in batches]
    full, rest = divmod(n, size)
    want = [data[i * size:(i + 1) * size] for i in range(full)]
    if rest and leftover == "repeat":
        want.append(np.concatenate([data[full * size:], data[:size - rest]]))
    assert len(batches) == len(want) == len(got)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)


def test_to_batched_errors():
    with pytest.raises(ValueError, match="leftover must be"):
        stablejit.to_batched(dev([1.0, 2.0]), 1, leftover="pad")
    with pytest.raises(ValueError, match="positive"):
        stablejit.to_batched(dev([1.0, 2.0]), 0)


MULTI = textwrap.dedent("""\
    import json
    import numpy as np
    import stablejit, stablejit.numpy as snp
    from stablejit import XlaBackend, DeviceMismatchError, DeletedTensorError

    out = {}
    out["devices"] = [d.id for d in stablejit.devices()]
    b = [XlaBackend.for_platform("host", i) for i in range(4)]
    with stablejit.default_backend(b[1]):
        x = snp.arange(6.0)                        # created on device 1
        y = x * 2                                  # eager op runs there
    out["x"], out["y"] = x.device.id, y.device.id
    c = stablejit.backend_copy(x, b[0])            # device 1 -> device 0, x stays
    out["copy"] = [c.device.id, np.asarray(c).tolist(), x._data is not None]
    t = stablejit.backend_transfer(y, "xla:host:2")   # moves, frees y
    out["transfer"] = [t.device.id, np.asarray(t).tolist()]
    try:
        y + 1
    except DeletedTensorError as e:
        out["deleted"] = str(e)
    try:
        stablejit.backend_copy(x, b[3]) + t        # devices 3 and 2, both on purpose
    except DeviceMismatchError as e:
        out["mixed"] = str(e)
    out["follows"] = (c + t).device.id             # c on the default device follows t
    f = stablejit.jit(lambda a: snp.sin(a) + 1.0, device_id=3)
    r = f(np.linspace(0, 1, 6, dtype=np.float32))  # host data goes to device 3
    out["jit3"] = [r.device.id, np.asarray(r).tolist()]
    g = stablejit.jit(lambda a, b: a * b)
    out["jit_follows"] = g(t, t).device.id         # runs where its arguments live
    out["jit_follows_too"] = g(c, t).device.id
    try:
        g(stablejit.backend_copy(x, b[3]), t)
    except DeviceMismatchError as e:
        out["jit_mixed"] = str(e)
    try:
        f(t)                                       # pinned to 3, argument on 2
    except DeviceMismatchError as e:
        out["jit_pinned"] = str(e)
    print(json.dumps(out))
    """)


@pytest.mark.host_default
def test_several_host_devices():
    r = subprocess.run([sys.executable, "-c", MULTI], capture_output=True, text=True,
                       timeout=120, env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "1",
                                         "XLA_FLAGS": "--xla_force_host_platform_device_count=4"})
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.splitlines()[-1])
    assert out["devices"] == [0, 1, 2, 3]
    assert out["x"] == 1 and out["y"] == 1
    assert out["copy"] == [0, [0, 1, 2, 3, 4, 5], True]
    assert out["transfer"] == [2, [0, 2, 4, 6, 8, 10]]
    assert "deleted" in out["deleted"]
    for k in ("mixed", "jit_mixed"):
        assert "xla:host:3" in out[k] and "xla:host:2" in out[k], out[k]
        assert "backend_transfer" in out[k]
    assert out["follows"] == out["jit_follows_too"] == 2
    assert "xla:host:2" in out["jit_pinned"] and "xla:host:3" in out["jit_pinned"]
    assert out["jit3"][0] == 3
    np.testing.assert_allclose(out["jit3"][1], np.sin(np.linspace(0, 1, 6)) + 1, rtol=1e-6)
    assert out["jit_follows"] == 2
