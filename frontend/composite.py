"""Namespace functions made of several primitives, traced once per signature.

`mean(x, axis=1)` is a reduction, a division and, with keepdims, a reshape: run op by
op on a device, that is three dispatches and three trips through the executable cache.
JAX jits its jnp functions for this reason; `one_program` does the same for ours. A
call's signature is each tensor's type and weakness, every other argument's exact value
(a float by its bits) and x64 mode (the default float the body's Python floats and int
inputs take); the first call with a signature traces the function into
a Function, and every later one uses it:

- eager on one XLA device: one cached program, one dispatch;
- in a lazy() block: one tape entry holding the Function;
- inside a trace (jit, grad, a control-flow body): the Function's ops are copied into
  the trace, so tracing a loss that calls log_softmax or take_along_axis does not run
  their Python again. Operands from outside the trace are captured as op by op.
Copied or recorded ops carry the caller's line, as op by op.

The function runs as written instead with debug_nans/debug_infs (they check op by op),
with arguments that are neither tensors nor plain hashable settings, on the reference
backend or a mesh, when it needs a value (a data-dependent shape) or closes over device
data, and for new Python float values once it has `_FLOAT_KEYS` signatures holding one
(a float that changes every call would otherwise trace every call).
"""

from __future__ import annotations

import functools

from . import config, precision, promotion, recorder_native, tree, writes
from .backends import XlaBackend, live_buffers
from .context import stack
from .errors import (
    MustCompileError,
    TracerBoolConversionError,
    TracerConversionError,
    user_location,
    user_site,
)
from .keys import exact_key
from .runtime.cache import SingleFlightCache
from .staging import Spec, stage
from .tensor import Tensor
from .tracing import Trace

_FLOAT_KEYS = 16  # signatures holding a Python float, per function
_KEPT = 256       # signatures per function
_NOT_CACHEABLE = object()
_MISS = object()  # the native call's "Python decides"
# settings passed through as the values they are (hashable, compared exactly)
_PLAIN = frozenset((type(None), bool, int, str))  # equal only if the same setting


def _setting_key(v):
    """An exact key for a non-tensor argument, or None if it cannot be one."""
    return exact_key(v)


class _Traced:
    """One signature's traced Function, the weakness of its results, and its compiled
    Program per device backend (made at the first eager call there)."""

    __slots__ = ("fn", "weak", "single", "programs")

    def __init__(self, fn, weak, single):
        self.fn, self.weak, self.single = fn, weak, single
        self.programs: dict = {}


def one_program(f):
    """f, run eagerly as one cached program per signature (see the module docstring)."""
    cache = SingleFlightCache(max_entries=_KEPT)
    floats = [0]  # how many cached signatures hold a Python float

    done = cache.entries  # (what recorder.c's composite_call looks the key up in)

    @functools.wraps(f)
    def g(*args, **kwargs):
        out = _native_call(done, args, kwargs)
        if out is not _MISS:
            return out
        if config.debug_checks():
            return f(*args, **kwargs)
        # the signature: two key entries per argument (the hot path: no helper calls
        # for tensors and plain settings)
        backend = None
        tensors = []
        key = []
        has_float = mixed = False
        for v in args if not kwargs else (*args, *kwargs.values()):
            t = type(v)
            if t is Tensor:
                if backend is None:
                    backend = v._backend
                elif v._backend is not backend:
                    mixed = True
                tensors.append(v)
                key.append(v.type)
                key.append(v.weak)
            elif t in _PLAIN:
                key.append(t)
                key.append(v)
            else:
                k = _setting_key(v)
                if k is None:
                    return f(*args, **kwargs)
                has_float = has_float or t is float
                key.append(None)
                key.append(k)
        s = stack()
        if mixed or backend.stages:
            # its ops join the current trace, which captures operands from outside as
            # it would op by op (a control-flow body's too; a ValuedTrace also computes
            # their values); or the current lazy graph or grad tape, which reads its
            # device's tensors and (a tape) the values of the graph around it
            top = s[-1] if s else None
            if top is not None and top.deferred and \
                    not any(t._backend.stages for t in tensors):
                backend = top
            elif top is None or not top.stages or not top.alive or \
                    not any(t._backend is top for t in tensors):
                return f(*args, **kwargs)
            else:
                backend = top
        elif writes.live_traces:  # it may need to note reads of eager data (writes.py)
            return f(*args, **kwargs)
        elif s and s[-1] is not backend:  # a default_backend or lazy() block decides
            top = s[-1]
            if top.deferred and backend.device_buffers \
                    and top.device is backend.device:
                backend = top  # device tensors in a lazy() block: their ops record
            else:
                return f(*args, **kwargs)
        elif not (backend.device_buffers or backend.deferred):
            return f(*args, **kwargs)  # the reference backend, a mesh
        if kwargs:
            key.append(tuple(kwargs))
        key.append(promotion.x64)
        key.append(precision.default)  # the default precision of matrix products
        key = tuple(key)
        entry = cache.get(key)
        if entry is None:
            if has_float and floats[0] >= _FLOAT_KEYS:  # a float that takes many values
                return f(*args, **kwargs)
            floats[0] += has_float
            entry = cache.get_or_create(key, lambda: _trace(f, args, kwargs, tensors))
        if entry is _NOT_CACHEABLE:
            return f(*args, **kwargs)
        if backend.device_buffers:
            outs = _run(entry, backend, tensors)
        elif backend.deferred:  # one tape entry, at the caller's line
            outs = backend.execute(entry.fn, tensors, site=user_site())
            for o, w in zip(outs, entry.weak, strict=True):
                o.weak = w
        else:
            outs = backend.run(entry.fn, tensors, loc=user_location())
            for o, w in zip(outs, entry.weak, strict=True):
                o.weak = w
        return outs[0] if entry.single else tuple(outs)

    g.eager = f  # the function as written (tests compare the two)
    return recorder_native.composite_fn(g, done)


def _run(entry: _Traced, backend: XlaBackend, tensors) -> list[Tensor]:
    prog = entry.programs.get(backend)
    if prog is None:
        prog = entry.programs[backend] = backend.program(entry.fn, name=entry.fn.name)
    outs = prog.run(live_buffers(tensors))
    if entry.single:
        return (Tensor(outs[0], backend, prog.result_types[0], entry.weak[0]),)
    return [Tensor(o, backend, t, w) for o, t, w in
            zip(outs, prog.result_types, entry.weak, strict=True)]


def _python_call(done, args, kwargs):
    return _MISS


# a cached call keyed and recorded (or run) in C where the native recorder is built
# (recorder.c's composite_call: it answers _MISS for anything else, and while
# STABLEJIT_NATIVE=0 or recorder_native.install(False) has the Python path on)
_native_call = recorder_native.composite_call(_MISS, _Traced, _run) or _python_call


class _NotCacheable(Exception):
    """f's result is not a tensor or a tuple of tensors of its own trace."""


def _trace(f, args, kwargs, tensors):
    """Stage f with its tensors as parameters (in the order of `tensors`; a tensor passed
    twice has two params, the first unused: both get its buffer); _NOT_CACHEABLE when it
    needs a value, closes over device data, or returns anything but a tensor or a tuple
    of them."""
    where = {id(t): i for i, t in enumerate(tensors)}
    single = []

    def call(*xs):
        a = [xs[where[id(v)]] if type(v) is Tensor else v for v in args]
        kw = {k: xs[where[id(v)]] if type(v) is Tensor else v for k, v in kwargs.items()}
        return f(*a, **kw)

    def split(out):
        single.append(type(out) is not tuple)
        outs = (out,) if single[0] else out
        if not all(type(o) is Tensor for o in outs):
            raise _NotCacheable
        return outs

    def output(leaf, trace):
        if leaf._backend is not trace:
            raise _NotCacheable
        return leaf

    flat = tree.flatten(tuple(range(len(tensors))))[1]
    try:
        staged = stage(call, flat, [Spec(t.type, t.weak) for t in tensors],
                       Trace(f.__name__), split_output=split, output=output)
    except (TracerBoolConversionError, TracerConversionError, MustCompileError,
            _NotCacheable):
        return _NOT_CACHEABLE
    if staged.captured:
        return _NOT_CACHEABLE
    return _Traced(staged.fn, staged.out_weak, single[0])
