"""Eager calls of namespace functions made of several primitives run as one program.

`mean(x, axis=1)` is a reduction, a division and, with keepdims, a reshape: run op by
op on a device, that is three dispatches and three round trips through the executable
cache. JAX jits its jnp functions for this reason; `one_program` does the same for
ours: an eager call whose tensors all live on one XLA device is traced once per
signature (each tensor's type and weakness, every other argument's exact value),
compiled, and afterwards runs as one executable.

Anything else calls the function as written: inside a trace or a lazy() block (they
record the primitives anyway), with debug_nans/debug_infs (they check op by op), with
arguments that are neither tensors nor plain hashable settings, when the function
needs a value (a data-dependent shape) or closes over device data, and for new Python
float values once a function has compiled `_FLOAT_KEYS` of them (a float that changes
every call would otherwise compile every call).
"""

from __future__ import annotations

import functools
import struct
import threading

import numpy as np

from . import config, writes
from .backends import XlaBackend
from .compiler.dtypes import DType
from .context import stack, using_backend
from .errors import MustCompileError, TracerBoolConversionError, TracerConversionError
from .tensor import Tensor
from .tracing import Trace

_FLOAT_KEYS = 16  # signatures holding a Python float, per function
_KEPT = 256       # signatures per function
_NOT_CACHEABLE = object()
_F64 = struct.Struct("<d")
# settings passed through as the values they are (hashable, compared exactly)
_SETTINGS = (type(None), bool, int, str, DType, type)
_PLAIN = frozenset((type(None), bool, int, str))  # equal only if the same setting


def _setting_key(v):
    """An exact key for a non-tensor argument, or None if it cannot be one."""
    t = type(v)
    if t is float:  # by its bits: 0.0 is not -0.0, and a NaN equals itself
        return t, _F64.pack(v)
    if t in _SETTINGS:
        return t, v
    if t is tuple:
        keys = tuple(_setting_key(e) for e in v)
        return None if None in keys else (t, keys)
    if t is np.dtype:
        return t, v.str
    return None


class _Compiled:
    __slots__ = ("prog", "weak", "single")

    def __init__(self, prog, weak, single):
        self.prog, self.weak, self.single = prog, weak, single


def one_program(f):
    """f, run eagerly as one cached program per signature (see the module docstring)."""
    cache: dict = {}
    floats = [0]  # how many cached signatures hold a Python float
    lock = threading.Lock()

    @functools.wraps(f)
    def g(*args, **kwargs):
        if writes.live_traces or config.debug_checks():
            return f(*args, **kwargs)
        # the signature: two key entries per argument (the hot path: no helper calls
        # for tensors and plain settings)
        backend = None
        tensors = []
        key = []
        has_float = False
        for v in args if not kwargs else (*args, *kwargs.values()):
            t = type(v)
            if t is Tensor:
                if backend is None:
                    backend = v._backend
                elif v._backend is not backend:
                    return f(*args, **kwargs)
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
        if type(backend) is not XlaBackend:
            return f(*args, **kwargs)
        s = stack()
        if s and s[-1] is not backend:  # a default_backend or lazy() block decides
            return f(*args, **kwargs)
        if kwargs:
            key.append(tuple(kwargs))
        key = tuple(key)
        entry = cache.get(key)
        if entry is None:
            if has_float and floats[0] >= _FLOAT_KEYS or len(cache) >= _KEPT:
                return f(*args, **kwargs)
            entry = _compile(f, args, kwargs, tensors, backend)
            with lock:
                cache[key] = entry
                floats[0] += has_float
        if entry is _NOT_CACHEABLE:
            return f(*args, **kwargs)
        bufs = [t._data for t in tensors]
        for buf in bufs:
            if buf is None:
                bufs = [t._live() for t in tensors]  # raises the "deleted" error
        outs = entry.prog.run(bufs)
        results = [Tensor(o, backend, t, w) for o, t, w in
                   zip(outs, entry.prog.result_types, entry.weak, strict=True)]
        return results[0] if entry.single else tuple(results)

    g.eager = f  # the function as written (tests compare the two)
    return g


def _compile(f, args, kwargs, tensors, backend):
    """Trace f with its tensors as parameters; _NOT_CACHEABLE when it needs a value,
    closes over device data, or returns anything but a tensor or a tuple of them."""
    trace = Trace(f.__name__)
    try:
        swap = {id(t): trace.new_arg(t.type, t.weak) for t in tensors}
        a = [swap[id(v)] if type(v) is Tensor else v for v in args]
        kw = {k: swap[id(v)] if type(v) is Tensor else v for k, v in kwargs.items()}
        with using_backend(trace):
            try:
                out = f(*a, **kw)
            except (TracerBoolConversionError, TracerConversionError, MustCompileError):
                return _NOT_CACHEABLE
        single = type(out) is not tuple
        outs = (out,) if single else out
        if trace.captured or not all(type(o) is Tensor and o._backend is trace
                                     for o in outs):
            return _NOT_CACHEABLE
        # (a tensor passed twice has two params, the first unused: both get its buffer)
        fn = trace.builder.build([o._data for o in outs])
    finally:
        trace.finish()
    prog = backend.program(fn, name=f.__name__)
    return _Compiled(prog, tuple(o.weak for o in outs), single)
