"""Binding primitives to tensors: choose the backend, bring operands to it, apply.

Backend choice for one op: a live trace wins (its operands from outside are captured);
otherwise an XLA device backend wins over the reference backend (whose data moves to
the device); two different devices are an error. Ops with no tensor operands (iota,
constants) go to the current default backend: the trace while jit is tracing, else
the user's default (`stablejit.default_backend`).
"""

from __future__ import annotations

import contextlib
import threading

from .backends import REFERENCE, XlaBackend
from .compiler.errors import ShapeError
from .compiler.ir import EMPTY_ATTRS, Attrs
from .errors import at_user_line
from .tracing import Trace, escaped_error

_state = threading.local()
_global_default = None


def _stack() -> list:
    s = getattr(_state, "stack", None)
    if s is None:
        s = _state.stack = []
    return s


def current_backend():
    s = _stack()
    if s:
        return s[-1]
    return global_default()


def global_default():
    global _global_default
    if _global_default is None:
        from .platforms import default_platform

        _global_default = XlaBackend.for_platform(default_platform())
    return _global_default


def set_global_default(backend) -> None:
    global _global_default
    _global_default = backend


def concrete_default():
    """The innermost default backend that holds data (skipping traces)."""
    for b in reversed(_stack()):
        if b.concrete:
            return b
    return global_default()


@contextlib.contextmanager
def using_backend(backend):
    s = _stack()
    s.append(backend)
    try:
        yield backend
    finally:
        s.pop()


def _pick(tensors):
    backend = None
    for t in tensors:
        b = t._backend
        if b is backend:
            continue
        if backend is None:
            backend = b
            continue
        backend = _combine(backend, b)
    return backend


def _combine(a, b):
    if isinstance(a, Trace) or isinstance(b, Trace):
        traces = [x for x in (a, b) if isinstance(x, Trace)]
        for t in traces:
            if not t.alive:
                raise escaped_error()
        if len(traces) == 2:  # nested traces: the current (innermost) one records
            cur = current_backend()
            return cur if cur in traces else traces[-1]
        return traces[0]
    if a is REFERENCE:
        return b
    if b is REFERENCE:
        return a
    return a  # two devices: a.adopt(b-tensor) raises a clear error


def bind(prim, tensors=(), attrs: Attrs = EMPTY_ATTRS, backend=None, regions=()):
    """Apply `prim` to `tensors`; returns a tuple of result Tensors."""
    if backend is None:
        backend = _pick(tensors) if tensors else current_backend()
        s = _stack()
        if s and s[-1] is not backend and getattr(s[-1], "records_all", False):
            backend = s[-1]  # a control-flow body records every op made while it is traced
    if isinstance(backend, Trace):
        return backend.apply(prim, tensors, attrs, regions)
    if any(t._backend is not backend for t in tensors):
        tensors = [t if t._backend is backend else _bring(backend, t) for t in tensors]
    if regions:  # control flow on a concrete backend: run the op with its bodies
        from .control_flow import apply_concrete

        return apply_concrete(backend, prim, tensors, attrs, regions)
    try:
        return backend.apply(prim, tensors, attrs)
    except ShapeError as e:
        raise ShapeError(at_user_line(str(e))) from None


def _bring(backend, t):
    # a live trace always wins _pick, so a traced operand here is from an ended trace
    if isinstance(t._backend, Trace):
        raise escaped_error()
    return backend.adopt(t)


def bind1(prim, *tensors, **attrs):
    """bind for single-result primitives with keyword attributes."""
    return bind(prim, tensors, Attrs(attrs) if attrs else EMPTY_ATTRS)[0]
