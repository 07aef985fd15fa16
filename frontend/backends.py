"""The concrete backends: eager XLA on a device, and the NumPy reference.

A backend takes one primitive with its operand tensors and returns result tensors.
The XLA backend compiles each (primitive, attributes, operand types) once per device
and runs it; the reference backend applies the primitive's NumPy rule. Tracing is a
third backend (tracing.py) that records the op instead.
"""

from __future__ import annotations

import threading

import numpy as np

from .compiler import dtypes as dt
from .compiler.builder import Builder
from .compiler.ir import Attrs, TensorType
from .errors import DeviceMismatchError, at_user_line
from .runtime import buffers
from .runtime import client as rt_client
from .runtime.cache import SingleFlightCache
from .tensor import Tensor


class Backend:
    concrete = True
    name = "backend"

    def check_concrete(self, t: Tensor, what: str) -> None:
        pass

    def block_until_ready(self, t: Tensor) -> None:
        pass

    def device_of(self, t: Tensor):
        return None

    def scalar(self, value, dtype: dt.DType, weak: bool = False) -> Tensor:
        return self.from_numpy(np.asarray(value, dtype=dtype.np), weak=weak)


class ReferenceBackend(Backend):
    """NumPy arrays, computed by each primitive's reference rule: the test oracle."""

    name = "reference"

    def apply(self, prim, tensors, attrs: Attrs):
        in_types = tuple(t.type for t in tensors)
        out_types = prim.infer(in_types, attrs)
        kwargs = dict(attrs)
        out = prim.reference(*[t._live() for t in tensors], **kwargs)
        outs = out if prim.multiple_results else (out,)
        return tuple(Tensor(np.asarray(o, dtype=ot.dtype.np).reshape(ot.shape), self, ot)
                     for o, ot in zip(outs, out_types))

    def from_numpy(self, array: np.ndarray, weak: bool = False) -> Tensor:
        a = np.asarray(array)
        return Tensor(a, self, TensorType(a.shape, dt.dtype(a.dtype)), weak)

    def to_numpy(self, t: Tensor) -> np.ndarray:
        return t._live()

    def describe(self, t: Tensor) -> str:
        return "reference"

    def adopt(self, t: Tensor) -> Tensor:
        return self.from_numpy(t.numpy(), t.weak)

    def __repr__(self) -> str:
        return "<backend reference>"


REFERENCE = ReferenceBackend()


class XlaBackend(Backend):
    """Tensors in device buffers; each primitive compiled once per signature and cached."""

    _instances: dict = {}
    _instances_lock = threading.Lock()

    def __init__(self, device):
        self.device = device
        self.platform = rt_client.platform_of(device)
        self.name = f"xla:{self.platform}:{device.id}"
        self.ops = SingleFlightCache()
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

    def apply(self, prim, tensors, attrs: Attrs):
        # hot path of eager execution: one dict lookup, one PJRT call
        in_types = [t.type for t in tensors]
        key = (prim, attrs, *in_types)
        entry = self.ops._done.get(key)
        if entry is None:
            entry = self.ops.get_or_create(key, lambda: self._compile_op(prim, attrs, in_types))
        out_types, execute = entry
        bufs = [t._data for t in tensors]
        for i, b in enumerate(bufs):
            if b is None:
                tensors[i]._live()  # raises the "deleted" error
        outs = execute(bufs).disassemble_into_single_device_arrays()
        if len(outs) == 1:
            return [Tensor(outs[0][0], self, out_types[0])]
        return [Tensor(b[0], self, ot) for b, ot in zip(outs, out_types)]

    def _compile_op(self, prim, attrs, in_types):
        from .compilation import compile_function

        b = Builder(prim.name)
        params = [b.param(t) for t in in_types]
        results = b.bind(prim, params, attrs)
        fn = b.build(results)
        exe = compile_function(fn, self.device, name=prim.name, optimize=False)
        return fn.result_types, exe.loaded.execute_sharded

    def from_numpy(self, array: np.ndarray, weak: bool = False) -> Tensor:
        a = np.asarray(array)
        d = dt.dtype(a.dtype)
        return Tensor(buffers.to_device(a, self.device), self, TensorType(a.shape, d), weak)

    def scalar(self, value, dtype: dt.DType, weak: bool = False) -> Tensor:
        # Python scalars recur (x * 2, x + 1): keep their device buffers, keyed on the
        # exact bits (0.0 == -0.0 and NaN != NaN, so the value cannot be the key).
        a = np.asarray(value, dtype=dtype.np)
        key = (dtype, a.tobytes())
        buf = self._scalars.get(key)
        if buf is None:
            buf = buffers.to_device(a, self.device)
            if len(self._scalars) < 4096:
                self._scalars[key] = buf
        return Tensor(buf, self, TensorType((), dtype), weak)

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
        if isinstance(t._backend, XlaBackend):
            raise DeviceMismatchError(at_user_line(
                f"operands live on two devices, {t._backend.name} and {self.name}; move one "
                f"explicitly with stablejit.backend_transfer(t, "
                f"stablejit.XlaBackend.for_platform({self.platform!r}, {self.device.id}))"))
        return Tensor(buffers.to_device(t.numpy(), self.device), self, t.type, t.weak)

    def __repr__(self) -> str:
        return f"<backend {self.name}>"

