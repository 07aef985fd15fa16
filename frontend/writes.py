"""Writes into tensors that a jit trace read.

A trace may bake a concrete tensor's value into its program: as an embedded constant,
or through an op computed eagerly while tracing, or a value read on the host
(`int(t)`, a boolean mask). Tensors are writable (x[i] = v rebinds x), so a write into
such a tensor bumps `epoch`, and every jitted function retraces on its next call
instead of running a program that holds the old value.
"""

from __future__ import annotations

import weakref

live_traces = 0  # traces being recorded (any thread); reads are noted only while > 0
epoch = 0  # bumped by every write into a tensor that a trace read
_read = weakref.WeakValueDictionary()  # id -> Tensor (tensors are unhashable)


def note_read(t) -> None:
    _read[id(t)] = t


def note_write(t) -> None:
    global epoch
    if _read.get(id(t)) is t:
        del _read[id(t)]
        epoch += 1
