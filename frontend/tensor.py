"""Tensor: the array type users hold. Its data lives on a backend.

    xla:<platform>:<id>   a PJRT buffer on a device (the eager device backend)
    reference             a NumPy array, computed by the primitives' reference rules
    traced                an IR value inside a jit trace (no data, only shape and dtype)

Operators and the methods that compute (x + y, x.sum(), x[i], x[i] = v, x += y, x.T,
x.at[...]) are installed on this class by `stablejit.numpy` when it is imported
(numpy/_methods.py), so every path shares one implementation and this module imports
nothing above it.
"""

from __future__ import annotations

import numpy as np

from . import writes
from .compiler import dtypes as dt
from .compiler.ir import TensorType
from .errors import DeletedTensorError, at_user_line
from .runtime import buffers, client


class Tensor:
    """An n-dimensional array of one dtype, held by a backend: a device buffer
    (`xla:host:0`, `xla:cuda:0` ...), a NumPy array (`reference`), a pending value of a
    lazy graph, or an abstract value inside `jit` / `grad` / `vmap`.

    Make tensors with `stablejit.numpy.asarray` and the namespace's other functions, not
    with this constructor. A tensor has NumPy's operators, methods and attributes
    (`x.shape`, `x.dtype`, `x.T`, `x.sum()`, `x @ y`, `x[i]`, `x[i] = v`, `x.at[i].add(v)`)
    and the array API's (`x.device`, `x.mT`, `x.to_device`, `__dlpack__`). Reading its
    values (`np.asarray(x)`, `print(x)`, `float(x)`, `x.item()`) waits for the device.
    Writes follow NumPy's view semantics on immutable buffers (the guide "Numerics"
    explains copies and views). `stablejit.Array` and `stablejit.numpy.ndarray` are
    this class, for annotations and `isinstance`.

    Example:
        >>> x = snp.asarray([[1.0, 2.0], [3.0, 4.0]])
        >>> x.shape, x.dtype
        ((2, 2), float32)
        >>> x.T @ x
        Tensor<f32[2,2] xla:host:0>
        [[10., 14.],
         [14., 20.]]
    """

    # _view: how this tensor was taken from the tensor owning its memory (views.View);
    # _aliases: on a tensor with views, what it knows of them (views.Aliases)
    __slots__ = ("_data", "_backend", "type", "weak", "_view", "_aliases", "__weakref__")
    __array_priority__ = 100  # NumPy defers to our operators

    def __init__(self, data, backend, type: TensorType, weak: bool = False):
        self._data = data
        self._backend = backend
        self.type = type
        self.weak = weak
        self._view = self._aliases = None

    # ---- metadata ------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return self.type.shape

    @property
    def dtype(self) -> dt.DType:
        return self.type.dtype

    @property
    def ndim(self) -> int:
        return len(self.type.shape)

    @property
    def size(self) -> int:
        return self.type.size

    @property
    def base(self):
        """The tensor whose memory this view shares (NumPy's ndarray.base), else None."""
        return self._view.base if self._view is not None else None

    @property
    def backend(self):
        return self._backend

    @property
    def device(self):
        """The PJRT device holding the data; "reference" on the reference backend (what
        `asarray(..., device=)` and `to_device` accept); None while traced."""
        d = self._backend.device_of(self)
        return "reference" if d is None and self._backend.name == "reference" else d

    def __len__(self) -> int:
        if not self.type.shape:
            raise TypeError("len() of a 0-d tensor")
        return self.type.shape[0]

    # ---- data ----------------------------------------------------------------------
    def _live(self):
        if self._data is None:
            raise DeletedTensorError(at_user_line(
                f"this {self.type} tensor was deleted (moved by backend_transfer, donated to "
                f"a jitted function, or deallocated); use the tensor that the transfer "
                f"returned, or backend_copy to keep the original"))
        return self._data

    def numpy(self) -> np.ndarray:
        if writes.live_traces:  # a value read while tracing may be baked into a program
            writes.note_read(self)
        return self._backend.to_numpy(self)

    def __array__(self, dtype=None, copy=None):
        # a view of the tensor's (immutable) data, read-only; NumPy passes copy=True for
        # np.array(t) / np.copy(t) and then trusts the result to be its own: a writable copy
        a = self.numpy()
        if dtype is not None and np.dtype(dtype) != a.dtype:
            return a.astype(dtype)
        return a.copy() if copy else a

    def item(self):
        if self.size != 1:
            raise ValueError(f"item() needs a tensor with one element, this one has shape "
                             f"{self.shape}")
        return self.numpy().reshape(()).item()

    def tolist(self):
        return self.numpy().tolist()

    def __bool__(self) -> bool:
        self._backend.check_concrete(self, "bool() (an `if`, `while`, `and`, `or` or `not`)")
        if self.size != 1:
            raise ValueError(at_user_line(
                f"the truth value of a tensor of shape {self.shape} is ambiguous (an `if`, "
                f"`while`, `and`, `or` or `not` needs one element): use snp.any(x) or "
                f"snp.all(x)"))
        return bool(self.item())

    def __int__(self) -> int:
        self._backend.check_concrete(self, "int()")
        return int(self._one_element("int()"))

    def __float__(self) -> float:
        self._backend.check_concrete(self, "float()")
        return float(self._one_element("float()"))

    def __complex__(self) -> complex:
        self._backend.check_concrete(self, "complex()")
        return complex(self._one_element("complex()"))

    def _one_element(self, what: str):
        if self.size != 1:
            raise TypeError(at_user_line(
                f"{what} needs a tensor of one element; this one has shape {self.shape}: "
                f"pick one (x[0]) or reduce it (snp.sum(x))"))
        return self.item()

    def __index__(self) -> int:
        self._backend.check_concrete(self, "use as a Python index")
        if not self.dtype.is_integer:
            raise TypeError(f"only integer tensors can be used as an index, not {self.dtype}")
        return int(self.item())

    def block_until_ready(self) -> Tensor:
        self._backend.block_until_ready(self)
        return self

    def __repr__(self) -> str:
        head = f"Tensor<{self.type} {self._backend.describe(self)}>"
        if self._data is None:
            return head + " (deleted)"
        if not self._backend.concrete:
            return head
        body = np.array2string(self.numpy(), separator=", ")
        return f"{head}\n{body}"

    def __str__(self) -> str:
        if not self._backend.concrete or self._data is None:
            return repr(self)
        return str(self.numpy())

    def __format__(self, spec: str) -> str:
        if self.ndim == 0 and self._backend.concrete:
            return format(self.item(), spec)
        return format(str(self), spec)

    def __hash__(self):
        raise TypeError("Tensor is unhashable; to use one as a static argument or dict key, "
                        "convert it with .item() or .tolist()")

    def __iter__(self):
        # raises at iter(), not at the first next(): np.iterable(t) asks iter() only
        # (SciPy's `if not np.iterable(args): args = (args,)`), as NumPy's 0-d arrays do
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self.shape[0]))

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """DLPack export in host memory: a host CPU buffer is shared without a copy; other
        data is copied to the host first (so copy=False raises BufferError)."""
        if dl_device is not None and tuple(dl_device) != (1, 0):
            raise BufferError(f"stablejit exports DLPack in host memory (kDLCPU, (1, 0)); "
                              f"dl_device={dl_device!r} is not supported")
        data = self._live()
        if self._backend.deferred:  # a lazy tensor: its graph runs, its buffer is shared
            data = self._backend.buffer(self)
        shared = isinstance(data, buffers.Buffer) and buffers.on_host(data)
        if shared and not copy:
            return buffers.to_dlpack(data)  # an unversioned capsule, as jax gives
        if not shared and copy is False:
            raise BufferError(f"exporting this tensor through DLPack copies it (its data "
                              f"is on {self._backend.name}, not in a host CPU device "
                              f"buffer); pass copy=None or copy=True")
        data = np.array(self.numpy(), copy=True)  # writable: DLPack < 1.0 has no read-only
        # Below DLPack 1.0 the consumer wants the unversioned capsule: ask for no version.
        kw = {} if max_version is None or tuple(max_version) < (1, 0) else {
            "max_version": max_version}
        return data.__dlpack__(stream=stream, copy=copy, **kw)

    def __jax_array__(self):
        """This tensor as a jax.Array (what jnp.asarray(t) asks for), a copy: the
        tensor may later be donated or moved, which frees its own buffer."""
        data = self._backend.buffer(self) if self._backend.deferred else self._live()
        if not isinstance(data, buffers.Buffer):  # not on a device: to the host CPU
            return buffers.to_device(self.numpy(), client.default_device("host"))
        if isinstance(data.aval, buffers.ArrayMeta):  # made before jax loaded: remake it
            return buffers.to_device(self.numpy(), buffers.device_of(data))
        return buffers.copy(data)  # on its device, no trip through the host

    def __dlpack_device__(self):
        return (1, 0)  # kDLCPU: see __dlpack__

