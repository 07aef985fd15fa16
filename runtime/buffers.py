"""Device buffers: place NumPy data on a device, read it back, copy, free.

A buffer is PJRT's single-device array (jaxlib's ArrayImpl), which is what
executables take and return; these functions are the only place that makes one
from host data.
"""

from __future__ import annotations

import functools

import numpy as np
from jaxlib import _jax

Buffer = _jax.ArrayImpl


class DeletedBufferError(RuntimeError):
    pass


@functools.lru_cache(maxsize=4096)
def _aval(shape: tuple, np_dtype):
    from jax._src.core import ShapedArray  # the array metadata PJRT arrays carry

    return ShapedArray(shape, np_dtype)


@functools.lru_cache(maxsize=256)
def _sharding(device):
    return _jax.SingleDeviceSharding(device)


def to_device(array: np.ndarray, device) -> Buffer:
    """Copy host data to `device` (asynchronously; the array must stay alive, so it is
    copied when it is not already an owned contiguous array)."""
    a = np.asarray(array)
    return _jax.batched_device_put(
        _aval(a.shape, a.dtype), _sharding(device), [a], [device], True, False,
        _jax.HostBufferSemantics.IMMUTABLE_UNTIL_TRANSFER_COMPLETES, True)


def to_numpy(buf: Buffer) -> np.ndarray:
    """Read a buffer back (blocks until it is ready)."""
    return np.asarray(buf)


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
    return next(iter(buf.devices()))


def delete(buf: Buffer) -> None:
    buf.delete()


def is_deleted(buf: Buffer) -> bool:
    return buf.is_deleted()


def block_until_ready(buf: Buffer) -> Buffer:
    buf.block_until_ready()
    return buf
