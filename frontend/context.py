"""Which backend runs an op that has no tensor operands: the innermost backend of this
thread's stack (a trace while a function is traced, or a `default_backend` block), else
the process-wide default (the default platform's first device)."""

from __future__ import annotations

import contextlib
import threading

from . import config, platforms, recorder_native
from .backends import REFERENCE, XlaBackend
from .lazy_backend import LazyBackend

_state = threading.local()
# the recorder's hot path and Tensor's operators in C where they were built
recorder_native.connect(LazyBackend, _state)
recorder_native.install()
_global_default = None


def stack() -> list:
    s = getattr(_state, "stack", None)
    if s is None:
        s = _state.stack = []
    return s


def current_backend():
    s = stack()
    if s:
        return s[-1]
    return global_default()


def global_default():
    global _global_default
    if _global_default is None:
        device = XlaBackend.for_platform(platforms.default_platform())
        _global_default = LazyBackend.for_target(device) if config.lazy() else device
    return _global_default


def set_global_default(backend) -> None:
    global _global_default
    _global_default = backend


def user_default():
    """The backend the user made the default: the innermost `default_backend` block's,
    else the process-wide one (not a backend a namespace function runs on because its
    inputs are there: tracebacks.follow_boundary)."""
    d = getattr(_state, "defaults", None)
    return d[-1] if d else global_default()


@contextlib.contextmanager
def using_default(backend):
    """using_backend for a `default_backend` block: also what user_default answers."""
    d = getattr(_state, "defaults", None)
    if d is None:
        d = _state.defaults = []
    d.append(backend)
    try:
        with using_backend(backend):
            yield backend
    finally:
        d.pop()


def meeting_place(a, b):
    """Where data of two backends that hold it (neither deferred nor a trace) meets, in
    eager ops and jit calls alike: as jax's uncommitted arrays follow committed ones,
    data made where nothing was asked for (on the user's default backend) follows data
    placed elsewhere on purpose; else a device wins over the reference backend; two
    devices neither of which is the default: `a`, whose adopt raises a clear error."""
    default = user_default()
    if a is default or b is default:
        return b if a is default else a
    return b if a is REFERENCE else a


def arrive(t, backend):
    """t's data on `backend`, where meeting_place sent it: a default device's buffer is
    copied device to device; anything else is the backend's adopt."""
    if t._backend.device_buffers and backend.device_buffers and not backend.deferred \
            and t._backend is user_default():
        return backend.follow(t)
    return backend.adopt(t)


def concrete_default():
    """The innermost default backend that holds data (skipping traces)."""
    for b in reversed(stack()):
        if b.concrete:
            return b
    return global_default()


class using_backend:  # noqa: N801 - used as the context manager function it replaced
    """`with using_backend(b):` makes b the innermost backend of this thread's stack for
    the block. A class rather than a generator: grad enters one per call, and entering
    and leaving a generator's context costs 1.7 us against 0.4 here."""

    __slots__ = ("backend", "_stack")

    def __init__(self, backend):
        self.backend = backend

    def __enter__(self):
        s = self._stack = stack()
        s.append(self.backend)
        return self.backend

    def __exit__(self, *exc) -> None:
        self._stack.pop()


def set_default_platform(preference, *, verbose: bool = False) -> str:
    """Make the first available platform of `preference` (a name or a list of names,
    e.g. ["tpu", "cuda", "rocm", "host"]) the default for new tensors and jit; returns
    (and, with verbose=True, prints) the one chosen and why the ones before it were
    passed over. Call it at the top of a script, before creating tensors."""
    name = platforms.choose(preference, verbose=verbose)
    set_global_default(XlaBackend.for_platform(name))
    return name


# ---- named axes of the enclosing vmaps (for the collectives in stablejit.lax) --------

def axis_stack() -> list:
    s = getattr(_state, "axes", None)
    if s is None:
        s = _state.axes = []
    return s


@contextlib.contextmanager
def binding_axis(name, size: int):
    """While a vmapped function is traced: its axis name (None: unnamed) and size."""
    s = axis_stack()
    s.append((name, size))
    try:
        yield
    finally:
        s.pop()


def axis_size(name) -> int | None:
    """The size of the innermost enclosing vmap axis called `name`, or None."""
    for n, size in reversed(axis_stack()):
        if n is not None and n == name:
            return size
    return None
