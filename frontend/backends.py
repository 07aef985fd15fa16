"""The concrete backends: eager XLA on a device, and the NumPy reference.

Every backend has the same two entry points (tracing.py's Trace is the third backend,
which records instead of computing):

    apply(prim, tensors, attrs, regions=())  one op           -> tuple of Tensors
    run(fn, tensors)                         an IR Function   -> list of Tensors

`run` is `execute(program(fn), tensors)`: `program` prepares a Function once (XLA:
compiled behind the one executable cache; reference: optimised IR to interpret) and
`execute` runs it, so callers that run one Function many times (jit) keep the program.
`apply` is `run` of a one-op Function, whose program is kept per (primitive,
attributes, operand types, region structure): an eager op compiles once per signature.
"""

from __future__ import annotations

import threading

import numpy as np

from . import compilation
from .compiler import dtypes as dt
from .compiler import passes
from .compiler.builder import Builder
from .compiler.interpreter import interpret
from .compiler.ir import EMPTY_ATTRS, Attrs, Function, Literal, TensorType
from .compiler.primitives import shape_ops
from .errors import DeviceMismatchError, at_user_line
from .keys import exact_key
from .runtime import buffers
from .runtime import client as rt_client
from .runtime.cache import SingleFlightCache
from .tensor import Tensor

# Per backend, the programs of eager ops by signature. Each holds its executable through
# the bounded executable cache, so a long-lived table costs little; the bound keeps a
# program that makes ever-new shapes from growing it without end.
_OP_TABLE_SIZE = 8192


def native(array) -> np.ndarray:
    """`array` as a NumPy array in this machine's byte order (big-endian data is swapped,
    never refused: devices hold native data)."""
    a = np.asarray(array)
    return a if a.dtype.isnative else a.astype(a.dtype.newbyteorder("="))


def _one_op(prim, attrs: Attrs, in_types, regions) -> Function:
    b = Builder(prim.name)
    params = [b.param(t) for t in in_types]
    return b.build(b.bind(prim, params, attrs, regions=regions))


_BROADCAST = "broadcast"  # marks op-table keys of apply_broadcast's programs


def _broadcast_op(prim, in_types, shape) -> Function:
    """`prim` on operands broadcast to `shape` (trailing axes aligned), as one Function."""
    b = Builder(prim.name)
    operands = []
    for t in in_types:
        v = b.param(t)
        if t.shape != shape:
            v, = b.bind(shape_ops.broadcast_in_dim, [v],
                        shape_ops.trailing_broadcast(len(t.shape), shape))
        operands.append(v)
    return b.build(b.bind(prim, operands))


def _op_key(prim, attrs, tensors, regions):
    key = (prim, attrs, *[t.type for t in tensors])
    return key + tuple(f.key() for f in regions) if regions else key


# a dtype's name -> the 0-d TensorType of that dtype. Kept here rather than in
# TensorType.__new__: what costs is the call into that Python constructor and its
# key's DType hash (Python too); the same cache inside __new__ saved 700 of the 2,600
# instructions this one saves a scalar
_SCALAR_TYPES: dict = {}


def scalar_key(value, dtype: dt.DType):
    """A dict key for a number made a constant of `dtype` (see keys.exact_key)."""
    return dtype, exact_key(value)


# scalar_key -> the Attrs of that constant: graphs and traces share them, so a loop that
# records `x * 2.0` every iteration makes the Literal once
_CONSTANT_ATTRS: dict = {}
_CONSTANT_ATTRS_KEPT = 4096


def constant_attrs(key, value, dtype: dt.DType) -> Attrs:
    """The attributes of a constant op for `value` as `dtype`; `key` is
    scalar_key(value, dtype)."""
    attrs = _CONSTANT_ATTRS.get(key)
    if attrs is None:
        attrs = Attrs({"value": Literal(native(np.asarray(value, dtype=dtype.np)))})
        if len(_CONSTANT_ATTRS) < _CONSTANT_ATTRS_KEPT:
            _CONSTANT_ATTRS[key] = attrs
    return attrs


def live_buffers(tensors) -> list:
    """The device buffers of tensors about to be run on; a deleted (donated, freed)
    tensor raises its clear error. The one place programs get their buffers."""
    bufs = [t._data for t in tensors]
    for b in bufs:  # (not `None in bufs`: that would call each buffer's __eq__)
        if b is None:
            return [t._live() for t in tensors]  # raises the "deleted" error
    return bufs


class Backend:
    """What every backend answers: a place where tensors live and ops run (the reference
    backend, one XLA device, a mesh), are recorded to run later (lazy(), grad's tape) or
    are recorded into a function being staged (a Trace). Code asks these capabilities
    and calls these methods; it does not test a backend's class."""

    name = "backend"
    # -- capabilities ----------------------------------------------------------------
    concrete = True        # its tensors have values (now or, if deferred, later)
    deferred = False       # values may be pending: lazy() graphs and grad's tape
    batches_ops = False    # records ops and runs them later as one program (lazy())
    stages = False         # records ops into a function being staged (a Trace)
    records_all = False    # a control-flow body's trace: records even outside operands
    device_buffers = False  # tensors are PJRT buffers on one device, ops run at once
    sharded = False        # tensors are sharded over a mesh of devices
    inlines_calls = False  # a jitted call made on it is recorded op by op, not as a call
    platform: str | None = None  # the XLA platform it runs on (None: the reference)

    # -- the interface (each backend implements these) ----------------------------------
    def apply(self, prim, tensors, attrs: Attrs, regions=()) -> tuple:
        """Run (or record) one primitive on tensors: its result tensors."""
        raise NotImplementedError

    def run(self, fn: Function, tensors, **options) -> list:
        """Run (or record) a whole IR Function on tensors."""
        raise NotImplementedError

    def scalar(self, value, dtype: dt.DType, weak: bool = False) -> Tensor:
        raise NotImplementedError

    def from_numpy(self, array: np.ndarray, weak: bool = False) -> Tensor:
        raise NotImplementedError

    def to_numpy(self, t: Tensor) -> np.ndarray:
        raise NotImplementedError

    def check_concrete(self, t: Tensor, what: str) -> None:
        """Raise if t's value cannot be read here (`what` says who wants it)."""

    def block_until_ready(self, t: Tensor) -> None:
        """Wait until t's value is computed."""

    def device_of(self, t: Tensor):
        return None

    def describe(self, t: Tensor) -> str:
        return f"Tensor({t.type}, {self.name})"

    def needs_staging(self, what: str) -> None:
        """Called before something only a staged function can express (a custom
        derivative rule, shard_map): a recorder that cannot record it raises (grad's
        tape raises NeedsTrace, and grad stages the function instead)."""


class ProgramBackend(Backend):
    """The shared implementation of backends that run programs: one cached Program per
    op signature (apply), a whole Function (run) through `program` and `execute`."""

    def __init__(self):
        # (primitive, attributes, input types ...) -> the Program of that one op
        self._ops = SingleFlightCache(max_entries=_OP_TABLE_SIZE)
        # other backends whose tensors this one's apply takes as they are (dispatch._arrive
        # adopts the rest); never `self`, which would make every backend a reference cycle
        self.also_reads: tuple = ()

    def apply(self, prim, tensors, attrs: Attrs, regions=()):
        key = _op_key(prim, attrs, tensors, regions)
        prog = self._ops.get(key)
        if prog is None:
            prog = self._op_program(key, prim, attrs, [t.type for t in tensors], regions)
        return self.execute(prog, tensors)

    def apply_broadcast(self, prim, tensors, shape: tuple[int, ...]):
        """Elementwise `prim` on `tensors` broadcast to `shape` (trailing axes aligned);
        backends that can run the two as one program override this."""
        ops = []
        for t in tensors:
            if t.shape != shape:
                t, = self.apply(shape_ops.broadcast_in_dim, (t,),
                                shape_ops.trailing_broadcast(t.ndim, shape))
            ops.append(t)
        return self.apply(prim, ops, EMPTY_ATTRS)

    def apply_scalar(self, prim, x: Tensor, value, scalar_first: bool):
        """Elementwise `prim` on `x` and the Python number `value` in x's dtype and
        weakness; backends that record the constant with the op override this."""
        s = self.scalar(value, x.type.dtype, weak=x.weak)
        return self.apply_broadcast(prim, (s, x) if scalar_first else (x, s), x.type.shape)

    def _op_program(self, key, prim, attrs, in_types, regions):
        return self._ops.get_or_create(key, lambda: self.program(
            _one_op(prim, attrs, in_types, regions),  # runs the shape rule: may raise
            name=prim.name, optimize=bool(regions)))

    def run(self, fn: Function, tensors, **options) -> list[Tensor]:
        return self.execute(self.program(fn, **options), tensors)

    def check_concrete(self, t: Tensor, what: str) -> None:
        pass

    def block_until_ready(self, t: Tensor) -> None:
        pass

    def device_of(self, t: Tensor):
        return None

    def scalar(self, value, dtype: dt.DType, weak: bool = False) -> Tensor:
        return self.from_numpy(np.asarray(value, dtype=dtype.np), weak=weak)

    def runtime_scalar(self, value, dtype: dt.DType) -> Tensor | None:
        """`value` as a program input rather than a constant (x[i] on a device: one
        compiled program for every i), or None where a constant is better."""
        return None


class ReferenceProgram:
    """A Function prepared for the reference backend: its optimised IR."""

    __slots__ = ("fn", "result_types")

    def __init__(self, fn: Function):
        self.fn = fn
        self.result_types = fn.result_types


class ReferenceBackend(ProgramBackend):
    """NumPy arrays, computed by each primitive's reference rule: the test oracle."""

    name = "reference"

    def program(self, fn: Function, *, optimize: bool = True, **_) -> ReferenceProgram:
        return ReferenceProgram(passes.optimize(fn) if optimize else fn)

    def execute(self, prog: ReferenceProgram, tensors) -> list[Tensor]:
        outs = interpret(prog.fn, [t.numpy() for t in tensors])
        return [Tensor(o, self, t) for o, t in zip(outs, prog.result_types, strict=True)]

    def from_numpy(self, array: np.ndarray, weak: bool = False) -> Tensor:
        a = native(array)
        if a.flags.writeable:  # the caller's array may change later; a tensor may not
            a = a.copy()
        return Tensor(a, self, TensorType(a.shape, dt.dtype(a.dtype)), weak)

    def to_numpy(self, t: Tensor) -> np.ndarray:
        a = t._live().view()  # read-only, as a device tensor's: a write would change t
        a.flags.writeable = False
        return a

    def describe(self, t: Tensor) -> str:
        return "reference"

    def adopt(self, t: Tensor) -> Tensor:
        return self.from_numpy(t.numpy(), t.weak)

    def __repr__(self) -> str:
        return "<backend reference>"


REFERENCE = ReferenceBackend()


class XlaBackend(ProgramBackend):
    """Tensors in device buffers; programs compiled by XLA for one device."""

    device_buffers = True
    _instances: dict = {}
    _instances_lock = threading.Lock()

    def __init__(self, device):
        super().__init__()
        self.device = device
        self.platform = rt_client.platform_of(device)
        self.name = f"xla:{self.platform}:{device.id}"
        self._scalars: dict = {}

    @classmethod
    def for_device(cls, device) -> XlaBackend:
        b = cls._instances.get(device)
        if b is None:
            with cls._instances_lock:
                b = cls._instances.setdefault(device, cls(device))
        return b

    @classmethod
    def for_platform(cls, platform: str = "host", device_id: int | None = None) -> XlaBackend:
        if device_id is None:
            device = rt_client.default_device(platform)
        else:
            devs = rt_client.devices(platform)
            if not 0 <= device_id < len(devs):
                raise ValueError(f"device_id {device_id} is out of range: {platform} has "
                                 f"{len(devs)} device(s)")
            device = devs[device_id]
        return cls.for_device(device)

    # ---- running ---------------------------------------------------------------------
    def apply(self, prim, tensors, attrs: Attrs, regions=()):
        # the hot path of eager execution: one dict lookup, one PJRT call
        n = len(tensors)
        if regions:
            key = _op_key(prim, attrs, tensors, regions)
        elif n == 1:
            key = (prim, attrs, tensors[0].type)
        elif n == 2:
            key = (prim, attrs, tensors[0].type, tensors[1].type)
        else:
            key = (prim, attrs, *[t.type for t in tensors])
        prog = self._ops.get(key)
        if prog is None:
            prog = self._op_program(key, prim, attrs, [t.type for t in tensors], regions)
        return self._run_op(prog, tensors)

    def apply_broadcast(self, prim, tensors, shape: tuple[int, ...]):
        """Elementwise `prim` on `tensors` broadcast to `shape`: one program per
        signature, so a Python scalar operand costs no dispatch of its own."""
        key = (prim, _BROADCAST, shape, *[t.type for t in tensors])
        prog = self._ops.get(key)
        if prog is None:
            prog = self._ops.get_or_create(key, lambda: self.program(
                _broadcast_op(prim, [t.type for t in tensors], shape), name=prim.name,
                optimize=False))
        return self._run_op(prog, tensors)

    def _run_op(self, prog, tensors):
        outs = prog.run(live_buffers(tensors))
        if len(outs) == 1:
            return (Tensor(outs[0], self, prog.result_types[0]),)
        return tuple(Tensor(b, self, t) for b, t in zip(outs, prog.result_types, strict=True))

    def program(self, fn: Function, *, name: str | None = None, optimize: bool = True,
                donated: tuple = (), disk=None) -> compilation.Program:
        return compilation.program(fn, self.device, name=name, optimize=optimize,
                                   donated=donated, disk=disk)

    def execute(self, prog: compilation.Program, tensors) -> list[Tensor]:
        bufs = [t._live() if t._backend is self else self.adopt(t)._data for t in tensors]
        return [Tensor(b, self, t)
                for b, t in zip(prog.run(bufs), prog.result_types, strict=True)]

    # ---- data ------------------------------------------------------------------------
    def from_numpy(self, array: np.ndarray, weak: bool = False) -> Tensor:
        a = native(array)
        d = dt.dtype(a.dtype)
        return Tensor(buffers.to_device(a, self.device), self, TensorType(a.shape, d), weak)

    def scalar(self, value, dtype: dt.DType, weak: bool = False) -> Tensor:
        # Python scalars recur (x * 2, x + 1): keep their device buffers
        key = scalar_key(value, dtype)
        buf = self._scalars.get(key)
        if buf is None:
            buf = buffers.to_device(np.asarray(value, dtype=dtype.np), self.device)
            if len(self._scalars) < 4096:
                self._scalars[key] = buf
        t = _SCALAR_TYPES.get(dtype.name)  # (a str key: a DType hashes in Python)
        if t is None:
            t = _SCALAR_TYPES[dtype.name] = TensorType((), dtype)
        return Tensor(buf, self, t, weak)

    def runtime_scalar(self, value, dtype: dt.DType) -> Tensor:
        return self.scalar(value, dtype)  # a cached device buffer

    def to_numpy(self, t: Tensor) -> np.ndarray:
        return buffers.to_numpy(t._live())

    def describe(self, t: Tensor) -> str:
        return self.name

    def device_of(self, t: Tensor):
        return self.device

    def block_until_ready(self, t: Tensor) -> None:
        buffers.block_until_ready(t._live())

    def adopt(self, t: Tensor) -> Tensor:
        """Bring a tensor of another backend here: host data moves automatically; a
        tensor on another device is an error (moving it silently would hide a copy)."""
        if t._backend.device_buffers:
            raise DeviceMismatchError(at_user_line(
                f"operands live on two devices, {t._backend.name} and {self.name}; move one "
                f"explicitly with stablejit.backend_transfer(t, "
                f"stablejit.XlaBackend.for_platform({self.platform!r}, {self.device.id}))"))
        return Tensor(buffers.to_device(t.numpy(), self.device), self, t.type, t.weak)

    def follow(self, t: Tensor) -> Tensor:
        """A tensor of the default device copied here (device to device where PJRT can),
        because it meets data placed on this device on purpose (dispatch._combine)."""
        return Tensor(buffers.copy_to(t._live(), self.device), self, t.type, t.weak)

    def __repr__(self) -> str:
        return f"<backend {self.name}>"
