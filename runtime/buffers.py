"""Device buffers: place NumPy data on a device, read it back, copy, free.

A buffer is PJRT's single-device array (jaxlib's ArrayImpl), which is what
executables take and return; these functions are the only place that makes one
from host data.
"""

from __future__ import annotations

import functools
import os
import sys
import time

import numpy as np
from jaxlib import _hlo, _jax, xla_client

Buffer = _jax.ArrayImpl


class DeletedBufferError(RuntimeError):
    pass


class DeviceMemoryError(MemoryError):
    """An array does not fit in the memory of the device it is made on."""


def memory_limit(device) -> int | None:
    """The bytes `device` can hold at most, where the runtime can tell: an accelerator's
    PJRT memory limit; for the host CPU (device None, or a cpu device) its physical
    memory. None when unknown."""
    stats = None
    if device is not None:
        try:
            stats = device.memory_stats()
        except Exception:  # noqa: BLE001 - a plugin without memory statistics
            stats = None
    if stats and stats.get("bytes_limit"):
        return int(stats["bytes_limit"])
    if device is None or device.platform == "cpu":
        try:
            return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (ValueError, OSError, AttributeError):  # not a POSIX system
            return None
    return None


def size_text(nbytes: int) -> str:
    """1234567 -> '1.18 MiB'."""
    size, unit = float(nbytes), "bytes"
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"):
        if size < 1024 or unit == "EiB":
            break
        size /= 1024
    return f"{nbytes} bytes" if unit == "bytes" else f"{size:.2f} {unit}"


def out_of_memory(shape: tuple, np_dtype, device, limit: int | None = None,
                  what: str = "an array") -> DeviceMemoryError:
    """The error for an array of `shape` and `np_dtype` that `device` cannot hold."""
    nbytes = int(np.prod(shape, dtype=object)) * np.dtype(np_dtype).itemsize
    has = f"; {device} has {size_text(limit)} in all" if limit else ""
    return DeviceMemoryError(
        f"out of memory: {what} of shape {tuple(shape)} and dtype {np.dtype(np_dtype).name} "
        f"needs {size_text(nbytes)} ({nbytes} bytes) on {device}{has}. Make it smaller, "
        f"a smaller dtype, or work on it in pieces")


class ArrayMeta:
    """The metadata a PJRT array carries (its `aval`) when jax is not loaded: jaxlib only
    reads shape, dtype and weak_type. With jax loaded, arrays carry jax's ShapedArray so
    that jax can compute on them; an array made before jax was imported goes to jax
    through jax.device_put."""

    __slots__ = ("shape", "dtype", "weak_type")

    def __init__(self, shape: tuple, dtype):
        self.shape, self.dtype, self.weak_type = shape, dtype, False

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __repr__(self) -> str:
        return f"{self.dtype.name}[{','.join(map(str, self.shape))}]"


def aval(shape: tuple, np_dtype):
    """The metadata for new arrays of this shape and dtype (see ArrayMeta)."""
    return _aval(shape, np.dtype(np_dtype), "jax._src.core" in sys.modules)


@functools.lru_cache(maxsize=4096)
def _aval(shape: tuple, np_dtype, jax_loaded: bool):
    if jax_loaded:
        from jax._src.core import ShapedArray  # noqa: PLC0415 - only when jax is loaded

        return ShapedArray(shape, np_dtype)
    return ArrayMeta(shape, np_dtype)


_REPLICATED = _hlo.HloSharding.replicate()
if not hasattr(_jax.SingleDeviceSharding, "_to_xla_hlo_sharding"):
    # jaxlib's device_put asks the sharding for its HLO form through a method that jax
    # attaches when it loads (the same answer: a single device holds everything)
    _jax.SingleDeviceSharding._to_xla_hlo_sharding = lambda self, ndim: _REPLICATED


@functools.lru_cache(maxsize=256)
def _sharding(device):
    return _jax.SingleDeviceSharding(device)


# jaxlib's array_result_handler(aval, sharding, committed) took a fourth argument,
# _skip_checks, until its extension version 489 (jax 0.11) made skipping the only way
_SKIP_CHECKS = (True,) if xla_client._version < 489 else ()


def result_handler(shape: tuple, np_dtype, device):
    """What turns an executable's output on `device` into a buffer, in C++ (see
    Executable.run)."""
    return _jax.array_result_handler(aval(shape, np_dtype), _sharding(device), True,
                                     *_SKIP_CHECKS)


def to_device(array: np.ndarray, device) -> Buffer:
    """Copy host data to `device` (asynchronously; the array must stay alive, so it is
    copied when it is not already an owned contiguous array)."""
    a = np.asarray(array)
    try:
        return _jax.batched_device_put(
            _aval(a.shape, a.dtype, "jax._src.core" in sys.modules), _sharding(device), [a],
            [device], True, False, _jax.HostBufferSemantics.IMMUTABLE_UNTIL_TRANSFER_COMPLETES,
            True)
    except _jax.JaxRuntimeError as e:
        if "RESOURCE_EXHAUSTED" not in str(e):
            raise
        raise out_of_memory(a.shape, a.dtype, device, memory_limit(device)) from e


def to_numpy(buf: Buffer) -> np.ndarray:
    """Read a buffer back (blocks until it is ready), read-only."""
    _spin_until_ready(buf)
    a = np.asarray(buf)
    if a.dtype == object:  # no buffer-protocol format for bfloat16: jaxlib's own copy
        a = buf._single_device_array_to_np_array_did_copy()[0]
        a.flags.writeable = False
    return a


def copy_to(buf: Buffer, device) -> Buffer:
    """Copy a buffer to another device (device to device where PJRT allows it)."""
    if device_of(buf) == device:
        return buf
    return _jax.batched_device_put(buf.aval, _sharding(device), [buf], [device], True, True,
                                   _jax.HostBufferSemantics.ZERO_COPY, True)


def copy(buf: Buffer) -> Buffer:
    """A second buffer with the same contents on the same device."""
    return _jax.batched_device_put(buf.aval, _sharding(device_of(buf)), [buf],
                                   [device_of(buf)], True, True,
                                   _jax.HostBufferSemantics.ZERO_COPY, True)


def device_of(buf: Buffer):
    # jaxlib's own attribute: `devices()` is a method jax adds when it loads
    return buf._sharding._internal_device_list[0]


def on_host(buf: Buffer) -> bool:
    """Whether the buffer is in host memory (a CPU device's)."""
    return device_of(buf).platform == "cpu"


def to_dlpack(buf: Buffer):
    """A DLPack capsule sharing the buffer's memory (no copy). jaxlib's own function:
    jax's Array.__dlpack__ is a method jax adds when it loads."""
    return _jax.buffer_to_dlpack_managed_tensor(buf, stream=None)


def delete(buf: Buffer) -> None:
    buf.delete()


def is_deleted(buf: Buffer) -> bool:
    return buf.is_deleted()


def block_until_ready(buf: Buffer) -> Buffer:
    _spin_until_ready(buf)
    buf.block_until_ready()  # (ready by now, or the spin gave up: this raises its error)
    return buf


# A waiting thread polls for a while before it sleeps. PJRT's own wait sleeps at once,
# and a sleeping thread is woken by the thread that finished the program: on a virtual
# machine an idle virtual CPU takes tens of microseconds to wake, which is most of a
# small program's time (host CPU, 2 cores: a jitted 64x64 matmul and tanh waited for at
# once, 22 us blocking, 7.5 us polling). But a polling thread takes a core from a
# program that runs on all of them (a 1024x1024 matmul: 4.45 -> 4.67 ms), so after a
# program outlasts the poll, the next waits sleep at once; the poll is tried again later.
WAIT_SPIN_SECONDS = 200e-6
_SLEEPS_AFTER_LONG = 16  # waits that sleep at once after a program outlasted the poll
_sleep_next = 0  # (a hint, not an invariant: threads racing on it only move the guess)


_yield_cpu = getattr(os, "sched_yield", lambda: None)


def _spin_until_ready(buf: Buffer) -> None:
    # is_deleted first: jaxlib's is_ready crashes the process on a deleted buffer (the
    # wait after the poll raises jaxlib's error for it, as it always did)
    global _sleep_next
    if buf.is_deleted() or buf.is_ready():
        return
    if _sleep_next:
        _sleep_next -= 1
        return
    clock, yield_cpu = time.perf_counter, _yield_cpu
    end = clock() + WAIT_SPIN_SECONDS
    while not (buf.is_deleted() or buf.is_ready()):
        yield_cpu()
        if clock() > end:
            _sleep_next = _SLEEPS_AFTER_LONG
            return
