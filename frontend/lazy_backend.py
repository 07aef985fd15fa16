"""The lazy backend: ops record into a pending graph that runs as one compiled program
when a value is needed (the user's side, `stablejit.lazy()`, is in lazy.py).

A lazy tensor's data is either a `Pending` value of the backend's current graph or a
device buffer. The graph runs (`flush`) when a value is read back (numpy(), print,
bool(), int(), item()), when a tensor goes to another backend or device, when the
graph passes STABLEJIT_LAZY_MAX_OPS ops, and when a `lazy()` block ends. Running it
builds one IR Function whose results are the pending values that live tensors still
hold; it goes through the compiler passes (the fusion pass marks its kernel clusters)
and the one executable cache, keyed by its structure, so the second iteration of a loop
compiles nothing. Results stay on the device.

Semantics do not change: shape rules run as each op is recorded, so an error names the
user's line of the op, not the line that read the value; values and dtypes are the eager
ones (the same primitives, compiled by the same XLA).
"""

from __future__ import annotations

import threading
import weakref

import numpy as np

from . import compilation, config
from .backends import Backend, XlaBackend, native
from .compiler import dtypes as dt
from .compiler.autodiff import inline
from .compiler.builder import Builder
from .compiler.errors import ShapeError
from .compiler.ir import EMPTY_ATTRS, Attrs, Function, Literal, Value
from .compiler.primitives import shape_ops
from .errors import DeviceMismatchError, at_user_line, user_location
from .runtime import buffers
from .tensor import Tensor


class Pending:
    """A lazy tensor's data: its value in the graph that computes it, and the device
    buffer once that graph has run. Tensors share it (an in-place update rebinds a
    tensor to another tensor's Pending), so the graph tracks Pendings, not tensors."""

    __slots__ = ("value", "graph", "buffer", "__weakref__")

    def __init__(self, value: Value, graph: int):
        self.value, self.graph = value, graph
        self.buffer = None


class LazyBackend(Backend):
    """Records ops for the device of `target` (an XlaBackend) and runs them in batches."""

    def __init__(self, target: XlaBackend):
        super().__init__()
        self.target = target
        self.device = target.device
        self.name = f"lazy:{target.name}"
        self._lock = threading.RLock()
        self._graph = 0
        self.flushes = 0  # how many graphs ran (for tests and the benchmark)
        self._new_graph()

    _instances: dict = {}
    _instances_lock = threading.Lock()

    @classmethod
    def for_target(cls, target: XlaBackend) -> LazyBackend:
        b = cls._instances.get(target)
        if b is None:
            with cls._instances_lock:
                b = cls._instances.setdefault(target, cls(target))
        return b

    def _new_graph(self) -> None:
        self._graph += 1
        self._builder = Builder("lazy")
        self._inputs: list = []             # device buffers bound to the graph's params
        self._input_of: dict[int, Value] = {}
        self._keep: list = []               # what those ids belong to, alive until flush
        self._pending: list[weakref.ref] = []
        self._constants: dict = {}          # (dtype, bits) -> the graph's constant Value
        self._ops = 0
        self._max_ops = config.lazy_max_ops()

    # ---- recording -------------------------------------------------------------------
    def _value(self, t: Tensor) -> Value:
        if t._backend is not self:
            t = self.adopt(t)
        d = t._live()
        if isinstance(d, Pending):
            if d.buffer is None:
                if d.graph != self._graph:
                    raise AssertionError("a pending lazy value outlived its graph")
                return d.value
            key, buf = d, d.buffer
        else:
            key, buf = d, d
        v = self._input_of.get(id(key))
        if v is None:
            v = self._builder.param(t.type)
            self._inputs.append(buf)
            self._keep.append(key)
            self._input_of[id(key)] = v
        return v

    def _pending_tensor(self, v: Value, weak: bool = False) -> Tensor:
        p = Pending(v, self._graph)
        self._pending.append(weakref.ref(p))
        return Tensor(p, self, v.type, weak)

    def apply(self, prim, tensors, attrs: Attrs, regions=()):
        with self._lock:
            values = [self._value(t) for t in tensors]
            return self._record(prim, values, attrs, user_location(), regions)

    def apply_broadcast(self, prim, tensors, shape: tuple[int, ...]):
        """Elementwise `prim` on `tensors` broadcast to `shape`: the broadcasts and the op
        recorded together (one lock, one look for the user's line)."""
        with self._lock:
            loc = user_location()
            values = []
            for t in tensors:
                v = self._value(t)
                if t.shape != shape:
                    v, = self._builder.bind(shape_ops.broadcast_in_dim, [v],
                                            shape_ops.trailing_broadcast(t.ndim, shape), loc)
                values.append(v)
            return self._record(prim, values, EMPTY_ATTRS, loc)

    def _record(self, prim, values, attrs, loc, regions=()):
        try:
            results = self._builder.bind(prim, values, attrs, loc, regions)
        except ShapeError as e:
            raise ShapeError(at_user_line(str(e))) from None
        outs = tuple(self._pending_tensor(r) for r in results)
        self._ops += 1
        if self._ops == 1:  # read once per graph: tests and scripts may change it
            self._max_ops = config.lazy_max_ops()
        if self._ops >= self._max_ops:
            self.flush()
        return outs

    def program(self, fn: Function, **_) -> Function:
        return fn

    def execute(self, fn: Function, tensors) -> list[Tensor]:
        """Record a whole Function (a jitted call on lazy tensors) into the graph."""
        with self._lock:
            outs = inline(self._builder, fn, [self._value(t) for t in tensors])
            self._ops += len(fn.ops)
            return [self._pending_tensor(v) for v in outs]

    def scalar(self, value, dtype: dt.DType, weak: bool = False) -> Tensor:
        # a constant op of the graph, not a transfer: x + 1.0 stays one program
        # (one per distinct value per graph, keyed on the exact bits: 0.0 is not -0.0)
        with self._lock:
            a = native(np.asarray(value, dtype=dtype.np))
            key = (dtype, a.tobytes())
            v = self._constants.get(key)
            if v is None:
                v, = self._builder.bind(shape_ops.constant, (), Attrs({"value": Literal(a)}),
                                        user_location())
                self._constants[key] = v
            return self._pending_tensor(v, weak)

    def from_numpy(self, array, weak: bool = False) -> Tensor:
        t = self.target.from_numpy(array, weak)
        return Tensor(t._data, self, t.type, weak)

    def adopt(self, t: Tensor) -> Tensor:
        """A tensor of another backend as a materialised lazy tensor of this one."""
        if isinstance(t._backend, LazyBackend):
            if t._backend.device != self.device:
                raise DeviceMismatchError(at_user_line(
                    f"operands live on two devices, {t._backend.name} and {self.name}; "
                    f"move one explicitly with stablejit.backend_transfer"))
            return Tensor(t._backend.buffer(t), self, t.type, t.weak)
        if isinstance(t._backend, XlaBackend) and t._backend.device == self.device:
            return Tensor(t._live(), self, t.type, t.weak)
        return Tensor(self.target.adopt(t)._data, self, t.type, t.weak)

    # ---- running ---------------------------------------------------------------------
    def buffer(self, t: Tensor):
        """t's device buffer, running the pending graph first if t is in it."""
        d = t._live()
        if not isinstance(d, Pending):
            return d
        if d.buffer is None:
            self.flush()
        return d.buffer

    def flush(self) -> None:
        """Run the pending graph: one compiled program whose results are the pending
        values something still holds; each of them then holds its device buffer."""
        with self._lock:
            live = [p for p in (r() for r in self._pending)
                    if p is not None and p.buffer is None and p.graph == self._graph]
            inputs = self._inputs
            fn = self._builder.build([p.value for p in live]) if live else None
            self._new_graph()
            if fn is None:
                return
            prog = compilation.program(fn, self.device, name="lazy")
            outs = prog.run(inputs)
            self.flushes += 1
            for p, b in zip(live, outs, strict=True):
                p.buffer = b

    def to_numpy(self, t: Tensor):
        return buffers.to_numpy(self.buffer(t))

    def block_until_ready(self, t: Tensor) -> None:
        buffers.block_until_ready(self.buffer(t))

    def device_of(self, t: Tensor):
        return self.device

    def describe(self, t: Tensor) -> str:
        d = t._data
        state = "pending" if isinstance(d, Pending) and d.buffer is None else "materialised"
        return f"{self.name}, {state}"

    def __repr__(self) -> str:
        return f"<backend {self.name}>"
