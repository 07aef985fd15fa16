"""Streams: run one compiled step over chunks that arrive one at a time, keeping the
state on the device between steps (EXLA's `stream`).

    def step(x, acc):                    # (chunk, state) -> (output, new state)
        return acc, x + acc

    s = stablejit.stream(step, "i64[]", 0)
    for i in range(1, 6):
        s.send(i)
        print(s.recv())                  # 0, 1, 3, 6, 10
    print(s.done())                      # 15

The step is compiled once (on the first send) and the state is donated to it, so each
step reuses the state's device memory; an initial state tensor already on the stream's
device is donated too (using it afterwards raises the "deleted" error). Back-pressure:
at most `max_pending` outputs may wait unreceived — a send from the thread that owns the
stream then raises (recv first), a send from another thread waits for the owner's recv —
and at most `max_inflight` steps are queued on the device ahead of the host.
"""

from __future__ import annotations

import threading
import weakref
from collections import deque

import numpy as np

from . import tree
from .api import resolve_backend
from .compiler import dtypes as dt
from .context import concrete_default
from .errors import StablejitError, at_user_line
from .explain import parse_arg
from .jit import jit
from .promotion import default_float
from .tensor import Tensor


class StreamError(StablejitError, RuntimeError):
    """A stream was used out of order (recv with nothing sent, send after done, ...)."""


_STEPS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # fn -> its jitted step


def _step_for(fn, backend):
    per_fn = _STEPS.setdefault(fn, {})
    key = getattr(backend, "name", None)
    j = per_fn.get(key)
    if j is None:
        j = per_fn[key] = jit(fn, donate_argnums=1, backend=backend)
    return j


def _template(spec):
    """(shape, DType) of a chunk template: a 'f32[3,4]' spec, an array or tensor, or a
    (shape, dtype) pair."""
    if isinstance(spec, str):
        a = parse_arg(spec)
        if not isinstance(a, np.ndarray):
            raise ValueError(f"chunk template {spec!r} is not a tensor type like 'f32[3]'")
        return tuple(a.shape), dt.dtype(a.dtype)
    if isinstance(spec, tuple) and len(spec) == 2 and isinstance(spec[0], tuple):
        return tuple(spec[0]), dt.dtype(spec[1])
    if isinstance(spec, Tensor):
        return spec.shape, spec.dtype
    a = np.asarray(spec)
    if isinstance(spec, int) and not isinstance(spec, bool):
        a = a.astype(np.int64)
    return tuple(a.shape), dt.dtype(a.dtype)


class Stream:
    """A compiled step run over a stream of chunks, with its state kept on the device
    (EXLA.stream); made by `stablejit.stream(fn, chunk_template, initial_state)`.

    `send(chunk)` queues a chunk (at most `max_pending` waiting; `max_inflight` steps run
    at once), `recv()` returns the next step's output in order, and `done()` ends the
    stream and returns the final state. Misuse (recv with nothing sent, send after done)
    raises StreamError."""

    def __init__(self, fn, chunk_template, initial_state, *, backend=None,
                 max_pending: int = 16, max_inflight: int = 2):
        self.backend = resolve_backend(backend) if backend is not None else None
        if self.backend is None:
            self.backend = concrete_default()
        if not self.backend.device_buffers:
            raise TypeError("stablejit.stream runs on an XLA device backend; the reference "
                            "backend has no device to keep the state on")
        for name, v in (("max_pending", max_pending), ("max_inflight", max_inflight)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(at_user_line(f"stream: {name} must be a positive integer, "
                                              f"got {v!r}"))
        self.shape, self.dtype = _template(chunk_template)
        self._step = _step_for(fn, self.backend)
        self._state = self._take_state(initial_state)
        self._state_types = [t.type for t in tree.tree_leaves(self._state)]
        self._outputs: deque = deque()
        self._inflight: deque = deque()
        self.max_pending, self.max_inflight = max_pending, max_inflight
        self._owner = threading.get_ident()
        self._cond = threading.Condition()
        self._done = False
        self.steps = 0

    def _take_state(self, initial_state):
        """The initial state on the device. A tensor already there is donated to the
        stream (its buffer becomes the first step's state): the caller's is deleted."""
        taken: set = set()

        def take(x):
            if id(x) in taken:
                raise ValueError(at_user_line(
                    "stream: the same tensor appears twice in the initial state; each step "
                    "donates the state's buffers, so pass a copy (stablejit.numpy.array(x)) "
                    "for one of them"))
            t = self._to_device(x)
            if isinstance(x, Tensor) and t._data is x._data:
                taken.add(id(x))
                x._data = None
            return t

        return tree.tree_map(take, initial_state)

    def _to_device(self, x):
        if isinstance(x, Tensor):
            return self.backend.adopt(x) if x._backend is not self.backend else \
                Tensor(x._live(), self.backend, x.type)  # strong type, same buffer
        a = np.asarray(x)
        if isinstance(x, int) and not isinstance(x, bool):
            a = a.astype(np.int64)
        elif isinstance(x, float):
            a = a.astype(default_float().np)
        return self.backend.from_numpy(a)

    # ---- the protocol ---------------------------------------------------------
    def send(self, chunk) -> None:
        """Run one step on `chunk` (asynchronously); its output waits for recv()."""
        if self._done:
            raise StreamError(at_user_line("send() after done(): this stream has finished"))
        x = self._chunk(chunk)
        with self._cond:
            while len(self._outputs) >= self.max_pending:
                if threading.get_ident() == self._owner:
                    raise StreamError(at_user_line(
                        f"{len(self._outputs)} outputs are waiting to be received; call "
                        f"recv() before sending more (or create the stream with a larger "
                        f"max_pending)"))
                self._cond.wait()
            if len(self._inflight) >= self.max_inflight:  # keep the device queue short
                self._inflight.popleft().block_until_ready()
            result = self._step(x, self._state)
            if not (isinstance(result, tuple) and len(result) == 2):
                raise StreamError(at_user_line(
                    "a stream step must return a pair (output, new_state); this one "
                    f"returned {type(result).__name__}"))
            out, state = result
            types = [t.type for t in tree.tree_leaves(state)]
            if types != self._state_types:
                raise StreamError(at_user_line(
                    f"the step changed the state's types from {self._state_types} to "
                    f"{types}; the state must keep its shapes and dtypes from step to step"))
            self._state = state
            leaves = tree.tree_leaves(out)
            if leaves:
                self._inflight.append(leaves[0])
            self._outputs.append(out)
            self.steps += 1
            self._cond.notify_all()

    def recv(self, timeout: float | None = None):
        """The oldest output not yet received. With nothing waiting it raises, or with a
        timeout waits that long for another thread's send."""
        with self._cond:
            if not self._outputs and timeout is not None:
                self._cond.wait_for(lambda: self._outputs, timeout)
            if not self._outputs:
                raise StreamError(at_user_line(
                    "recv() with no output waiting: send() a chunk first"))
            out = self._outputs.popleft()
            self._cond.notify_all()
        return out

    def done(self):
        """Finish the stream and return the final state (after every step ran)."""
        with self._cond:
            if self._outputs:
                raise StreamError(at_user_line(
                    f"done() with {len(self._outputs)} output(s) not received; recv() them "
                    f"first"))
            self._done = True
            state = self._state
        for leaf in tree.tree_leaves(state):
            leaf.block_until_ready()
        return state

    def is_cached(self) -> bool:
        """Whether the step is already compiled for this chunk template and state."""
        return self._step.is_cached(self._template_array(), self._state)

    # ---- helpers --------------------------------------------------------------
    def _template_array(self):
        return np.broadcast_to(np.zeros((), self.dtype.np), self.shape)

    def _chunk(self, chunk):
        if isinstance(chunk, Tensor):
            if chunk.shape != self.shape or chunk.dtype is not self.dtype:
                raise StreamError(at_user_line(
                    f"chunk {chunk.type} does not match the stream's template "
                    f"{self.dtype.short}[{','.join(map(str, self.shape))}]"))
            return self._to_device(chunk)
        a = np.asarray(chunk)
        if a.shape != self.shape:
            raise StreamError(at_user_line(
                f"chunk of shape {a.shape} does not match the stream's template shape "
                f"{self.shape}"))
        if a.dtype != self.dtype.np and not np.can_cast(a.dtype, self.dtype.np, "same_kind"):
            raise StreamError(at_user_line(
                f"chunk of dtype {a.dtype} cannot be safely converted to the stream's "
                f"{self.dtype}"))
        return self.backend.from_numpy(a.astype(self.dtype.np, copy=False))

    def __repr__(self) -> str:
        return (f"<stablejit.Stream {getattr(self._step, '__name__', 'step')}: {self.steps} "
                f"steps, {len(self._outputs)} waiting>")


def stream(fn, chunk_template, initial_state, *, backend=None, max_pending: int = 16,
           max_inflight: int = 2) -> Stream:
    """Start streaming `fn(chunk, state) -> (output, new_state)` over chunks shaped like
    `chunk_template` ('f32[128]', an array, or (shape, dtype)), from `initial_state`."""
    return Stream(fn, chunk_template, initial_state, backend=backend,
                  max_pending=max_pending, max_inflight=max_inflight)


def stream_is_cached(fn, chunk_template, initial_state, *, backend=None) -> bool:
    """Whether a stream of `fn` with this template and state would reuse a compiled step."""
    b = resolve_backend(backend) if backend is not None else concrete_default()
    per_fn = _STEPS.get(fn, {})
    j = per_fn.get(getattr(b, "name", None))
    if j is None:
        return False
    shape, dtype = _template(chunk_template)
    template = np.broadcast_to(np.zeros((), dtype.np), shape)

    def strong(x):
        if isinstance(x, Tensor):
            return np.broadcast_to(np.zeros((), x.dtype.np), x.shape)
        a = np.asarray(x)
        if isinstance(x, int) and not isinstance(x, bool):
            a = a.astype(np.int64)
        elif isinstance(x, float):
            a = a.astype(default_float().np)
        return a

    return j.is_cached(template, tree.tree_map(strong, initial_state))
