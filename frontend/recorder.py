"""The recorder: ops appended to a tape instead of run, for lazy() and for grad.

Recording is the hot path (a training loop records every op of every step), so a graph
is a tape, not IR: each value is a slot number, each op a tuple of (primitive,
attributes, operand slots) appended to a list, and that list is also the graph's
structural key. `function_of` replays a tape into an IR Function; only a tape not seen
before needs that.

A Recorder never runs its tape by itself. LazyBackend (lazy_backend.py) runs it as one
compiled program when a value is needed; grad's GradTape (grad_tape.py) turns it into the
derivative. Shape rules run as each op is recorded, so an error names the user's line of
the op, not the line that read the value.
"""

from __future__ import annotations

import sys
import threading
import weakref
from sys import getrefcount

from . import config, native_build
from .backends import ProgramBackend, XlaBackend, constant_attrs, scalar_key
from .compiler import dtypes as dt
from .compiler.autodiff import inline
from .compiler.builder import Builder
from .compiler.errors import ShapeError
from .compiler.ir import EMPTY_ATTRS, Attrs, Function
from .compiler.primitives import shape_ops
from .errors import DeviceMismatchError, at_user_line, location_at, user_site
from .keys import key_value
from .runtime import buffers
from .tensor import Tensor

_INLINE = "inline"    # a tape entry that inlines a whole Function (a jitted call)
PARAM = "param"       # a tape entry for a device buffer the graph reads
_SCALAR = "scalar"    # an elementwise op of a slot and a Python number (apply_scalar)


class Pending:
    """A lazy tensor's data: its slot in the graph that computes it, and the device
    buffer once that graph has run. Tensors share it (an in-place update rebinds a
    tensor to another tensor's Pending), so the graph tracks Pendings, not tensors."""

    __slots__ = ("slot", "graph", "buffer", "__weakref__")

    def __init__(self, slot: int, graph: int):
        self.slot, self.graph = slot, graph
        self.buffer = None


_PythonPending = Pending


def _pending_class() -> type:
    """The native recorder's Pending (the same attributes, made and freed in C without
    the cyclic GC: every recorded op makes one) where it is built and STABLEJIT_NATIVE
    allows it; else the Python class. Chosen once, at import: modules compare types
    with `is`. Both recorder paths take either."""
    if config.native():
        ext, _ = native_build.load("_recorder", "recorder.c")
        if ext is not None and getattr(ext, "SUPPORTED", 0):
            return ext.Pending
    return _PythonPending


Pending = _pending_class()


# A recorder's lock: threading.RLock, or, while the native recorder is on, its RLock of the
# same behaviour, which C takes without a method call (recorder_native.install sets it)
new_lock = threading.RLock
_THREADING_RLOCK = type(threading.RLock())


class Recorder(ProgramBackend):
    """Records ops for the device of `target` (an XlaBackend) onto a tape."""

    # The per-graph state in slots, not the instance dict: the native recorder reads and
    # writes them at fixed offsets (slots.h; by name, the lookups cost ~1/6 of an op)
    __slots__ = ("target", "_lock", "_graph", "_tape", "_locs", "_types", "_inputs",
                 "_input_of", "_keep", "_pending", "_constants", "_broadcasts",
                 "_holds_functions", "_ops", "_max_ops")

    deferred = True
    # A Function of this many ops or more starts the graph at once (see LazyBackend);
    # a plain recorder never does
    _start_at = 1 << 62

    def __init__(self, target: XlaBackend, kind: str = "recorder"):
        # (not ProgramBackend.__init__: its one-op program table is for a backend that
        # runs ops one by one; a recorder never does, and grad makes one per call)
        self.target = target
        self.device = target.device
        self.name = f"{kind}:{target.name}"
        self.also_reads = (target,)  # _slot reads a device tensor's buffer as it is
        self._lock = lock = new_lock()
        if type(lock) is _THREADING_RLOCK:
            # (the native recorder takes a threading.RLock through these, and its own
            # RLock directly: recorder_native.py)
            self._lock_acquire, self._lock_release = lock.acquire, lock.release
        self._graph = 0
        self._new_graph()

    def _new_graph(self) -> None:
        self._graph += 1
        self._tape: list = []       # one entry per param or op: also the structural key
        self._locs: list = []       # the user's line of each entry (errors.user_site)
        self._types: list = []      # TensorType of each slot
        self._inputs: list = []     # what the graph's params are bound to (device
        #                             buffers; a grad tape's: the tensors it read)
        self._input_of: dict = {}   # id(buffer owner) -> its param slot
        self._keep: list = []       # what those ids belong to, alive until flush
        self._pending: list = []    # the graph's Pendings (live: held elsewhere too)
        self._constants: dict = {}  # scalar_key -> the constant's slot
        self._broadcasts: dict = {}  # (slot, shape) -> the broadcast's slot
        self._holds_functions = False  # an entry inlines a Function or has regions
        self._ops = 0
        self._max_ops = 1 << 62  # read at the graph's first op

    # ---- recording -------------------------------------------------------------------
    def _slot(self, t: Tensor) -> int:
        d = t._data
        if type(d) is Pending and d.buffer is None and d.graph == self._graph \
                and t._backend is self:
            return d.slot  # the hot case: a value of this graph
        if t._backend is not self and t._backend is not self.target:
            t = self.adopt(t)  # (a tensor of the target device is read as it is)
        d = t._live()
        if isinstance(d, Pending):
            if d.buffer is None:
                if d.graph != self._graph:
                    raise AssertionError("a pending lazy value outlived its graph")
                return d.slot
            key, buf = d, d.buffer
        else:
            key, buf = d, d
        return self._input(key, t.type, buf)

    def _input(self, key, type, value) -> int:
        """The slot of the graph parameter for `key` (what owns the data; one parameter
        per owner), made if new; `value` is what the graph is run with."""
        s = self._input_of.get(id(key))
        if s is None:
            s = self._input_of[id(key)] = self._param(type, value)
            self._keep.append(key)  # (alive until the graph ends: ids stay unique)
        return s

    def _param(self, type, value) -> int:
        """A new parameter of the graph, bound to `value` when it runs."""
        slot = len(self._types)
        self._tape.append((PARAM, type))
        self._locs.append(None)
        self._types.append(type)
        self._inputs.append(value)
        return slot

    def _pending_tensor(self, slot: int, weak: bool = False) -> Tensor:
        p = Pending(slot, self._graph)
        self._pending.append(p if _HOLDS else weakref.ref(p))
        return Tensor(p, self, self._types[slot], weak)

    def _tensors(self, first: int, types) -> list[Tensor]:
        """Tensors of the pending values at slots first, first + 1, ... (of `types`):
        _pending_tensor written out, for entries with dozens of results."""
        graph, pending, outs = self._graph, self._pending, []
        for i, t in enumerate(types, first):
            p = Pending(i, graph)
            pending.append(p if _HOLDS else weakref.ref(p))
            outs.append(Tensor(p, self, t))
        return outs

    def _add(self, prim, args: tuple, attrs: Attrs, site, regions=()) -> int:
        """Append one op to the tape (its shape rule runs now); its first result's slot."""
        types = self._types
        n = len(args)
        in_types = ((types[args[0]], types[args[1]]) if n == 2 else (types[args[0]],)
                    if n == 1 else tuple(types[a] for a in args))
        try:
            out = prim.infer(in_types, attrs, regions)  # memoised per (types, attrs)
        except ShapeError as e:
            raise ShapeError(at_user_line(str(e))) from None
        if regions:
            self._tape.append((prim, attrs, args, tuple(regions)))
            self._holds_functions = True
        else:
            self._tape.append((prim, attrs, args))
        self._locs.append(site)
        first = len(types)
        types.extend(out)
        return first

    def _broadcast(self, slot: int, shape: tuple[int, ...], site) -> int:
        key = (slot, shape)
        b = self._broadcasts.get(key)
        if b is None:
            attrs = shape_ops.trailing_broadcast(len(self._types[slot].shape), shape)
            b = self._broadcasts[key] = self._add(shape_ops.broadcast_in_dim, (slot,),
                                                  attrs, site)
        return b

    def _results(self, first: int, n: int) -> tuple[Tensor, ...]:
        if n == 1:  # (_pending_tensor written out: every recorded op comes here)
            p = Pending(first, self._graph)
            self._pending.append(p if _HOLDS else weakref.ref(p))
            outs = (Tensor(p, self, self._types[first]),)
        else:
            outs = tuple(self._tensors(first, self._types[first:first + n]))
        self._ops += 1
        if self._ops == 1:  # read once per graph: tests and scripts may change it
            self._max_ops = self._op_bound()
        if self._ops >= self._max_ops:
            self.flush()
        return outs

    def _op_bound(self) -> int:
        """After how many ops the graph runs by itself (never, for a plain recorder)."""
        return 1 << 62

    def apply(self, prim, tensors, attrs: Attrs, regions=()):
        with self._lock:
            slot = self._slot
            args = (slot(tensors[0]),) if len(tensors) == 1 else tuple([slot(t) for t in tensors])
            first = self._add(prim, args, attrs, user_site(2), regions)
            return self._results(first, len(self._types) - first)

    def apply_broadcast(self, prim, tensors, shape: tuple[int, ...]):
        """Elementwise `prim` on `tensors` broadcast to `shape`: the broadcasts and the op
        recorded together (one lock, one look for the user's line)."""
        with self._lock:
            site = user_site()
            args = tuple(self._slot(t) if t.type.shape == shape
                         else self._broadcast(self._slot(t), shape, site) for t in tensors)
            first = self._add(prim, args, EMPTY_ATTRS, site)
            return self._results(first, len(self._types) - first)

    def program(self, fn: Function, **_) -> Function:
        return fn

    def execute(self, fn: Function, tensors, site=None) -> list[Tensor]:
        """Record a whole Function (a jitted call on lazy tensors) into the graph; with
        `site` (errors.user_site), its ops are at that line rather than fn's own."""
        with self._lock:
            if self._ops == 0 and len(fn.ops) >= self._start_at:
                outs = self._run_now(fn, tensors)
                if outs is not None:
                    return outs
            slot = self._slot
            args = tuple([slot(t) for t in tensors])
            self._tape.append((_INLINE, fn, args))
            self._holds_functions = True
            self._locs.append(site)
            types = fn.result_types
            first = len(self._types)
            self._types.extend(types)
            self._ops += len(fn.ops)
            outs = self._tensors(first, types)
            if len(fn.ops) >= self._start_at:
                self.flush()
            return outs

    def _run_now(self, fn: Function, tensors) -> list[Tensor] | None:
        """A Function that starts the graph at once (_start_at), met with no op recorded:
        its results run now (LazyBackend), or None to record it (a plain recorder never
        starts a graph, so never gets here)."""
        return None

    def _constant(self, value, dtype: dt.DType, site) -> int:
        # one per distinct value per graph, keyed on the exact bits (0.0 is not -0.0)
        key = scalar_key(value, dtype)
        s = self._constants.get(key)
        if s is None:
            s = self._constants[key] = self._add(
                shape_ops.constant, (), constant_attrs(key, value, dtype), site)
        return s

    def scalar(self, value, dtype: dt.DType, weak: bool = False) -> Tensor:
        # a constant op of the graph, not a transfer: x + 1.0 stays one program
        with self._lock:
            return self._pending_tensor(self._constant(value, dtype, user_site()), weak)

    def runtime_scalar(self, value, dtype: dt.DType) -> Tensor:
        # a device buffer the graph reads as a parameter: its value is not in the key
        return self.target.scalar(value, dtype)

    def apply_scalar(self, prim, x: Tensor, value, scalar_first: bool):
        """Elementwise `prim` on `x` and a Python number in x's dtype: one tape entry
        (the replay makes the constant and its broadcast, each once per graph)."""
        with self._lock:
            xt = x.type
            a = self._slot(x)
            out = prim.infer((xt, xt), EMPTY_ATTRS)[0]  # memoised; raises only for bad dtypes
            types = self._types
            slot = len(types)
            self._tape.append((_SCALAR, prim, a, scalar_key(value, xt.dtype), scalar_first))
            self._locs.append(user_site(4))  # past this, bind_scalar and its caller
            types.append(out)
            return self._results(slot, 1)

    def copy(self, t: Tensor) -> Tensor:
        """A new tensor with t's value that owns its buffer: a pending value becomes a
        second result of the graph (XLA gives each result its own buffer), a computed
        one is copied on the device."""
        with self._lock:
            d = t._live()
            if isinstance(d, Pending) and d.buffer is None and d.graph == self._graph:
                return self._pending_tensor(d.slot, t.weak)
            return Tensor(buffers.copy(self.buffer(t)), self, t.type, t.weak)

    # ---- reading values: what the subclass does with its tape ------------------------
    def flush(self) -> None:
        """Run the tape (LazyBackend), or say it cannot be run (GradTape)."""
        raise NotImplementedError

    def buffer(self, t: Tensor):
        """t's device buffer (running the tape first if t is pending)."""
        raise NotImplementedError

    def to_numpy(self, t: Tensor):
        return buffers.to_numpy(self.buffer(t))

    def block_until_ready(self, t: Tensor) -> None:
        buffers.block_until_ready(self.buffer(t))

    def from_numpy(self, array, weak: bool = False) -> Tensor:
        t = self.target.from_numpy(array, weak)
        return Tensor(t._data, self, t.type, weak)

    def adopt(self, t: Tensor) -> Tensor:
        """A tensor of another backend as a materialised lazy tensor of this one."""
        if t._backend.deferred:
            if t._backend.device != self.device:
                raise DeviceMismatchError(at_user_line(
                    f"operands live on two devices, {t._backend.name} and {self.name}; "
                    f"move one explicitly with stablejit.backend_transfer"))
            return Tensor(t._backend.buffer(t), self, t.type, t.weak)
        if t._backend.device_buffers and t._backend.device == self.device:
            return Tensor(t._live(), self, t.type, t.weak)
        return Tensor(self.target.adopt(t)._data, self, t.type, t.weak)

    def recorded(self) -> list[str]:
        """The names of the pending graph's ops, as the replay builds them (for tests)."""
        return [op.prim.name for op in function_of(self._tape, self._locs, ()).ops]

    def device_of(self, t: Tensor):
        return self.device

    def describe(self, t: Tensor) -> str:
        d = t._data
        state = "pending" if isinstance(d, Pending) and d.buffer is None else "materialised"
        return f"{self.name}, {state}"

    def __repr__(self) -> str:
        return f"<backend {self.name}>"



def structural_key(tape: list, results: tuple, structural: bool) -> tuple:
    """A graph's key: its tape and results. `structural`: an entry holds Functions (grad
    and control flow make new ones each call), keyed by their structure."""
    return structural_entries(tape) if structural else tuple(tape), results


def _python_structural_entries(tape: list) -> tuple:
    return tuple(map(_structural, tape))


# _structural over a tape: recorder_native puts the C one here while the native path is on
structural_entries = _python_structural_entries


def _python_live_pending(pending: list, graph: int) -> list[Pending]:
    """The Pendings of `pending` (a graph's list) that something besides the list still
    holds (a tensor), not yet computed and of `graph`: what a flush computes. (The
    list holds them strongly: a weak reference each cost ~400 instructions an op, made
    and cleared; "held besides the list" is "would still exist", a weak reference's
    own question, in CPython with the GIL. Without it counts are not exact, and the
    list holds weak references: _HOLDS.)"""
    if not _HOLDS:
        return [p for p in (r() for r in pending)
                if p is not None and p.buffer is None and p.graph == graph]
    return [p for p in pending
            if getrefcount(p) > _ONLY_LISTED and p.buffer is None and p.graph == graph]


def _only_listed() -> int:
    """getrefcount's answer, in the comprehension above, for an object only its list
    holds (the list, the comprehension's name, getrefcount's argument)."""
    probe = [object()]
    return [getrefcount(p) for p in probe][0]


# whether a graph's list holds its Pendings (with the GIL) or weak references to them (a
# free-threaded interpreter, which runs this Python path: the C recorder is not built)
_HOLDS = getattr(sys, "_is_gil_enabled", lambda: True)()
_ONLY_LISTED = _only_listed()


# (the C one while the native path is on, as structural_entries)
live_pending = _python_live_pending


def _python_same_tape(a: list, b: list) -> bool:
    """Whether two tapes are equal, entry by entry (the C one compares faster)."""
    return a == b


# (the C one while the native path is on, as structural_entries)
same_tape = _python_same_tape


def _python_tape_leaves(tape: Recorder, ts: list) -> list[Tensor]:
    """For each tensor of `ts`, a parameter of `tape` bound to that tensor (not to its
    buffer: a grad tape's inputs are tensors) and a pending tensor of it with the
    tensor's weak flag (grad's differentiated leaves: GradTape.leaves)."""
    return [tape._pending_tensor(tape._param(t.type, t), t.weak) for t in ts]


# (the C one while the native path is on, as structural_entries; it answers None where
# it leaves the work to this one)
tape_leaves = _python_tape_leaves


def _python_flush_last(backend) -> bool:
    """Whether a flush was done here: never on the Python path, whose LazyBackend.flush
    does all of it (the C one runs a graph equal to the last one run)."""
    return False


# (the C one while the native path is on, as structural_entries)
flush_last = _python_flush_last


def _structural(entry: tuple) -> tuple:
    """A tape entry with its Functions replaced by their structural keys."""
    head = entry[0]
    if head is _INLINE:
        return _INLINE, entry[1].key(), entry[2]
    if head is PARAM or head is _SCALAR or len(entry) == 3:
        return entry
    return entry[:3] + (tuple(f.key() for f in entry[3]),)  # an op with regions


def function_of(tape: list, locs: list, results: tuple) -> Function:
    """Replay a graph's tape into an IR Function returning the values in `results`."""
    b = Builder("lazy")
    values: list = []
    constants: dict = {}  # (scalar_key, shape) -> the constant broadcast to that shape
    for entry, site in zip(tape, locs, strict=True):
        head = entry[0]
        if head is PARAM:
            values.append(b.param(entry[1]))
        elif head is _INLINE:
            values.extend(inline(b, entry[1], [values[a] for a in entry[2]],
                                 loc=None if site is None else location_at(site)))
        elif head is _SCALAR:
            _, prim, a, key, scalar_first = entry
            x = values[a]
            c = constants.get((key, x.type.shape))
            if c is None:
                c = _scalar_constant(b, key, x.type, location_at(site))
                constants[key, x.type.shape] = c
            values.extend(b.bind(prim, [c, x] if scalar_first else [x, c], EMPTY_ATTRS,
                                 location_at(site)))
        else:
            regions = entry[3] if len(entry) > 3 else ()
            values.extend(b.bind(head, [values[a] for a in entry[2]], entry[1],
                                 location_at(site), regions))
    return b.build([values[s] for s in results])


def _scalar_constant(b: Builder, key, type, loc):
    """The number that `key` (backends.scalar_key) stands for, broadcast to `type`."""
    dtype, value = key[0], key_value(key[1])
    c, = b.bind(shape_ops.constant, [], constant_attrs(key, value, dtype), loc)
    if type.shape:
        c, = b.bind(shape_ops.broadcast_in_dim, [c],
                    shape_ops.trailing_broadcast(0, type.shape), loc)
    return c
