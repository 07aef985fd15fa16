"""Binding primitives to tensors: choose the backend, bring operands to it, apply.

Backend choice for one op: a live trace wins (its operands from outside are captured);
otherwise a lazy backend wins (it records the op; the other tensor's data joins its
graph); of two backends holding data, the one that is not the default wins (data made
without asking for a device follows data placed on purpose, as jax's uncommitted arrays
follow committed ones), else an XLA device wins over the reference backend (whose data
moves to the device); two devices, neither the default, are an error (the rule is
context.meeting_place, which jit's arguments follow too). Ops with no tensor operands (iota,
constants) go to the current default backend (context.py): the trace while jit is
tracing, else the user's default (`stablejit.default_backend`). A control-flow body
being traced records every op made while it is current, whatever its operands.
"""

from __future__ import annotations

from . import config, debugging, recorder_native, writes
from .compiler import dtypes as dt
from .compiler.errors import ShapeError
from .compiler.ir import EMPTY_ATTRS, Attrs
from .compiler.primitives import shape_ops
from .context import arrive, current_backend, meeting_place, stack
from .errors import at_user_line, user_location
from .promotion import weak_result
from .tracing import escaped_error


def pick(tensors):
    """The backend that runs an op on `tensors` (see the module docstring)."""
    backend = None
    for t in tensors:
        b = t._backend
        if b is backend:
            continue
        backend = b if backend is None else _combine(backend, b)
    return backend


def _combine(a, b):
    if not a.concrete or not b.concrete:  # a trace (the one kind without values)
        traces = [x for x in (a, b) if not x.concrete]
        for t in traces:
            if not t.alive:
                raise escaped_error()
        if len(traces) == 2:  # nested traces: the current (innermost) one records
            cur = current_backend()
            return cur if cur in traces else traces[-1]
        return traces[0]
    if a.deferred and b.deferred:
        cur = current_backend()  # a grad tape and the lazy graph around it: the tape
        return cur if cur is b else a  # records (it reads the graph's values as inputs)
    if a.deferred or b.deferred:
        return a if a.deferred else b  # a lazy backend keeps recording
    return meeting_place(a, b)  # two backends holding data


def backend_for(tensors):
    """The backend an op on `tensors` runs on: `pick`, then what the backend stack asks
    (a control-flow body being traced, an open lazy() block)."""
    backend = pick(tensors) if tensors else current_backend()
    s = stack()
    if s and s[-1] is not backend:
        top = s[-1]
        if top.records_all:
            return top  # a control-flow body records every op made while traced
        if backend.device_buffers:
            # inside lazy(), ops on tensors of its device record too, also while grad or
            # jit traces a function there (an op on its concrete operands only, such as
            # one on a closed-over label array, joins the graph instead of running)
            for b in reversed(s):
                if b.concrete:
                    if b.deferred and b.device is backend.device:
                        return b
                    break
    return backend


def _arrive(backend, tensors):
    """The operands, all on `backend` (host data moves to a device)."""
    if writes.live_traces:  # computed while tracing: the result may be baked in
        for t in tensors:
            writes.note_read(t)
    also = backend.also_reads  # a lazy graph reads its device's tensors as they are
    for t in tensors:
        if t._backend is not backend and t._backend not in also:
            return [u if u._backend is backend or u._backend in also else _bring(backend, u)
                    for u in tensors]
    return tensors


def _finish(prim, tensors, outs):
    outs = _weak_types(prim, tensors, outs)
    if config.debug_checks():
        debugging.check_op(prim, tensors, outs, _at_user())
    return outs


def bind(prim, tensors=(), attrs: Attrs = EMPTY_ATTRS, backend=None, regions=()):
    """Apply `prim` to `tensors`; returns a tuple of result Tensors. This is the one
    path every op takes, eager or traced."""
    if type(attrs) is not Attrs:  # a dict from a caller: backends key on Attrs
        attrs = Attrs(attrs)
    if backend is None:
        backend = backend_for(tensors)
    if not backend.concrete:
        return _weak_types(prim, tensors, backend.apply(prim, tensors, attrs, regions))
    tensors = _arrive(backend, tensors)
    try:
        outs = backend.apply(prim, tensors, attrs, regions)
    except ShapeError as e:
        raise ShapeError(at_user_line(str(e))) from None
    return _finish(prim, tensors, outs)


def fast(backend) -> bool:
    """The one guard of the eager fast paths below: an op on tensors of `backend` runs
    there now (no backend on the stack asks for another: a lazy() block, a control-flow
    body), and nothing needs noting (a live trace may bake the value in) or checking
    (STABLEJIT_DEBUG_CHECKS). Otherwise the op takes bind's general path."""
    s = stack()
    return (not s or s[-1] is backend) and backend.concrete and not writes.live_traces \
        and not config.debug_checks()


def bind_unary(prim, x, attrs: Attrs = EMPTY_ATTRS):
    """`prim` on the one tensor `x`, one result: bind's path without the checks a
    single operand does not need (the hot path of elementwise math and reductions)."""
    backend = x._backend
    if not fast(backend):
        return bind(prim, (x,), attrs)[0]
    out, = backend.apply(prim, (x,), attrs)
    if x.weak:
        _weak_types(prim, (x,), (out,))
    return out


def bind_binary(prim, x, y):
    """`prim` on two tensors of one backend and one type, one result: bind's path
    without the checks such operands do not need (x + y in a model's inner loop)."""
    backend = x._backend
    if y._backend is not backend or not fast(backend):
        return bind(prim, (x, y))[0]
    out, = backend.apply(prim, (x, y), EMPTY_ATTRS)
    if x.weak or y.weak:
        _weak_types(prim, (x, y), (out,))
    return out


def bind_scalar(prim, x, value, scalar_first: bool = False):
    """Elementwise `prim` on tensor `x` and the Python number `value`, which takes x's
    dtype and weakness (JAX's rule for a weak scalar; the caller checked it applies).
    The number becomes a 0-d operand on the backend that runs the op (a constant of a
    lazy graph or trace, a cached buffer on a device), so this is one dispatch."""
    backend = x._backend
    if not fast(backend):
        backend = backend_for((x,))  # the stack may ask another backend
        if not backend.concrete or config.debug_checks():
            c = backend.scalar(value, x.type.dtype, weak=x.weak)
            return bind_broadcast(prim, (c, x) if scalar_first else (x, c), x.type.shape,
                                  backend)
        x, = _arrive(backend, (x,))
    outs = backend.apply_scalar(prim, x, value, scalar_first)
    return _weak_types(prim, (x,), outs) if x.weak else outs


def bind_broadcast(prim, tensors, shape: tuple[int, ...], backend=None):
    """Elementwise `prim` on `tensors` (one dtype) broadcast to `shape`, trailing axes
    aligned. On an eager device the broadcasts and the op run as one cached program,
    so `x + 1.0` is one dispatch; a lazy backend records them together; a trace
    records each broadcast as an op of its own."""
    if backend is None:
        backend = backend_for(tensors)
    if not backend.concrete:
        return bind(prim, [t if t.shape == shape else _broadcast(t, shape, backend)
                           for t in tensors], backend=backend)
    tensors = _arrive(backend, tensors)
    return _finish(prim, tensors, backend.apply_broadcast(prim, tensors, shape))


def _broadcast(t, shape, backend):
    return bind(shape_ops.broadcast_in_dim, (t,), shape_ops.trailing_broadcast(t.ndim, shape),
                backend=backend)[0]


def _at_user() -> str:
    loc = user_location()
    return f" at {loc}" if loc.line else ""  # file:line:col


def _weak_types(prim, tensors, outs):
    """Results of ops on weak values stay weak (promotion.weak_result)."""
    for t in tensors:  # (a loop, not any(): this runs on every op)
        if t.weak:
            if weak_result(prim, tensors):
                for o in outs:
                    if o.dtype is not dt.bool_:
                        o.weak = True
            break
    return outs


def _bring(backend, t):
    # a live trace always wins pick, so a traced operand here is from an ended trace
    if not t._backend.concrete:
        raise escaped_error()
    return arrive(t, backend)


# the fast binds and bind in C where the extension is built: they record an op on a lazy
# backend or grad tape without entering Python, and call the functions above otherwise
bind_unary, bind_binary, bind_scalar, bind = recorder_native.binds(
    bind_unary, bind_binary, bind_scalar, bind)


_KEPT_ATTRS = 4096  # per memo of kept_attrs


def kept_attrs(memo: dict, name: str, shape: tuple) -> Attrs:
    """Attrs({name: shape}), made once per shape of ints and kept in `memo` (bounded):
    a training step reshapes and slices to the same few shapes on every call, and an
    Attrs costs ~1 us to build. Symbolic shapes (export) are made each time."""
    attrs = memo.get(shape)
    if attrs is None:
        attrs = Attrs({name: shape})
        if len(memo) < _KEPT_ATTRS and all(type(d) is int for d in shape):
            memo[shape] = attrs
    return attrs


def bind1(prim, *tensors, **attrs):
    """bind for single-result primitives with keyword attributes."""
    return bind(prim, tensors, Attrs(attrs) if attrs else EMPTY_ATTRS)[0]
