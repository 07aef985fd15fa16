"""Writes into tensors that a jit trace read.

A trace may bake a concrete tensor's value into its program: as an embedded constant,
or through an op computed eagerly while tracing, or a value read on the host
(`int(t)`, a boolean mask). Tensors are writable (x[i] = v rebinds x), so a write into
such a tensor bumps `epoch` (and `written`), and every jitted function retraces on its
next call instead of running a program that holds the old value.

A change of x64 mode (promotion.set_x64) bumps `epoch` alone: jitted calls then take the
Python path once, which forgets the fast table but keeps the traces (their keys hold the
mode). The native call (frontend/_native/fastcall.c) reads `epoch` only.
"""

from __future__ import annotations

import weakref

live_traces = 0  # traces being recorded (any thread); reads are noted only while > 0
epoch = 0  # bumped by every write into a tensor that a trace read, and by new_mode()
written = 0  # bumped by every write into a tensor that a trace read
_read = weakref.WeakValueDictionary()  # id -> Tensor (tensors are unhashable)


def note_read(t) -> None:
    _read[id(t)] = t


def note_write(t) -> None:
    global epoch, written
    if _read.get(id(t)) is t:
        del _read[id(t)]
        epoch += 1
        written += 1


def new_mode() -> None:
    """The default dtypes changed (x64 mode): jitted calls must look their key up again."""
    global epoch
    epoch += 1
