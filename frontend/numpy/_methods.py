"""Tensor's operators and computing methods, installed by the namespace.

tensor.py defines the data-holding part of Tensor and imports nothing above it; this
module binds its operators (x + y, x @ y, x < y, -x), methods (x.sum(), x.reshape(...),
x[i], x.at[i].set(v), x.to_device(d)) and properties (x.T, x.mT, x.real, x.imag)
straight to the namespace's functions, once, when stablejit.numpy is imported: one
implementation for every path, and no lookups on the hot path.
"""

from __future__ import annotations

import inspect

from .. import recorder_native
from ..api import backend_copy, resolve_backend
from ..tensor import Tensor
from ..tracebacks import filter_exception
from . import linalg
from ._at import IndexUpdateHelper
from ._dtypes import astype
from ._inplace import INPLACE, inplace, setitem
from ._manipulation import moveaxis as _moveaxis
from ._views import (
    diagonal,
    flatten,
    getitem,
    imag,
    matrix_transpose,
    real,
    reshape,
    transpose,
)

_BINARY = {
    "add": "add", "sub": "subtract", "mul": "multiply", "truediv": "divide",
    "floordiv": "floor_divide", "mod": "remainder", "pow": "power", "matmul": "matmul",
    "and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor",
    "lshift": "left_shift", "rshift": "right_shift",
}
_COMPARE = {"eq": "equal", "ne": "not_equal", "lt": "less", "le": "less_equal",
            "gt": "greater", "ge": "greater_equal"}
_UNARY = {"neg": "negative", "pos": "positive", "abs": "abs", "invert": "invert"}
_METHODS = ("squeeze", "ravel", "clip", "round", "conj", "swapaxes", "dot",
            "nonzero", "sort", "argsort", "take", "repeat")
# Reductions as methods also take what NumPy's np.sum(t) / np.mean(t) / np.std(t) pass
# on to a foreign array's method: out=None, and dtype=None where the function has none.
_REDUCTIONS = ("sum", "prod", "mean", "max", "min", "argmax", "argmin", "all", "any", "var",
               "std", "cumsum", "cumprod", "ptp")


def _reduction(name: str, f):
    takes_dtype = "dtype" in inspect.signature(f).parameters

    def method(self, *args, out=None, **kwargs):
        if out is not None:
            raise TypeError(f"Tensor.{name}: out= is not supported (tensors are updated by "
                            f"rebinding); use the result instead")
        if not takes_dtype and kwargs.get("dtype", 1) is None:
            del kwargs["dtype"]
        try:  # a public boundary, in the frame the method has anyway
            return f(self, *args, **kwargs)
        except Exception as e:
            filter_exception(e)
            raise

    method.__name__ = name
    return method


def _diagonal(self, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Tensor:
    """NumPy's ndarray.diagonal (axes 0 and 1 by default): a read-only view."""
    return diagonal(self, offset, axis1, axis2)


def _flatten(self, order: str = "C") -> Tensor:
    """A copy, flattened (NumPy's ndarray.flatten; ravel gives a view where it can)."""
    return flatten(self)


def _trace(self, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype=None) -> Tensor:
    """NumPy's ndarray.trace (axes 0 and 1 by default)."""
    return linalg.trace(_moveaxis(self, (axis1, axis2), (-2, -1)), offset=offset, dtype=dtype)


def _astype(self, dtype, copy: bool = True) -> Tensor:
    return astype(self, dtype, copy=copy)


def _reshape(self, *shape, order: str = "C") -> Tensor:
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    return reshape(self, shape)


def _transpose(self, *axes) -> Tensor:
    if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
        axes = axes[0]
    return transpose(self, axes or None)


def _to_device(self, device, /, *, stream=None) -> Tensor:
    """A copy on `device` (a PJRT device, backend or "reference"); self if already there."""
    target = resolve_backend(device)
    return self if target is self._backend else backend_copy(self, target)


_API_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12", "2025.12")


def _namespace(ns):
    def __array_namespace__(self, /, *, api_version=None):
        """The array API namespace of this tensor: stablejit.numpy, for every version of
        the standard up to its own (the standard's rule: an unknown version raises)."""
        if api_version is not None and api_version not in _API_VERSIONS:
            raise ValueError(f"stablejit.numpy implements the array API standard "
                             f"{', '.join(_API_VERSIONS)}; api_version={api_version!r} is "
                             f"none of them")
        return ns
    return __array_namespace__


def _at(self) -> IndexUpdateHelper:
    """Functional updates: x.at[index].set/add/multiply/min/max/get(...)."""
    return IndexUpdateHelper(self)


def install(ns) -> None:
    """Install operators, methods and properties on Tensor from the namespace `ns`."""
    def forward(f):
        return f  # a function is a method already: no extra frame on the hot path

    def reflect(f):
        def reflected(self, other):
            try:  # a public boundary, in the frame the operator has anyway
                return f(other, self)
            except Exception as e:
                filter_exception(e)
                raise
        if hasattr(f, "_native_op"):
            reflected._native_op, reflected._reflects = f._native_op, True
            reflected._dot_attrs = getattr(f, "_dot_attrs", None)
        return reflected

    def method(f):
        def bound(self, *args, **kwargs):
            try:  # a public boundary, in the frame the method has anyway
                return f(self, *args, **kwargs)
            except Exception as e:
                filter_exception(e)
                raise
        return bound

    for op, name in _BINARY.items():
        f = getattr(ns, name)
        setattr(Tensor, f"__{op}__", forward(f))
        setattr(Tensor, f"__r{op}__", reflect(f))
    # divmod(x, y): (x // y, x % y), as NumPy's and JAX's arrays have it
    Tensor.__divmod__ = forward(ns.divmod)
    Tensor.__rdivmod__ = reflect(ns.divmod)
    for op, (name, symbol) in INPLACE.items():
        setattr(Tensor, f"__{op}__", inplace(op, getattr(ns, name), symbol))
    for op, name in _COMPARE.items():
        setattr(Tensor, f"__{op}__", forward(getattr(ns, name)))
    for op, name in _UNARY.items():
        f = getattr(ns, name)
        m = method(f)
        if getattr(f, "_unary", False):  # (recorder_native makes it a C operator)
            m._native_op, m._unary = f._native_op, True
        setattr(Tensor, f"__{op}__", m)
    for name in _METHODS:
        setattr(Tensor, name, method(getattr(ns, name)))
    for name in _REDUCTIONS:
        setattr(Tensor, name, _reduction(name, getattr(ns, name)))
    Tensor.diagonal = _diagonal
    Tensor.flatten = _flatten
    Tensor.trace = _trace
    Tensor.copy = lambda self: astype(self, self.dtype, copy=True)
    Tensor.__copy__ = Tensor.copy  # copy.copy: a new tensor, as NumPy's
    Tensor.__deepcopy__ = lambda self, memo: self.copy()  # numbers hold no references
    Tensor.itemsize = property(lambda self: self.dtype.np.itemsize)
    Tensor.nbytes = property(lambda self: self.size * self.dtype.np.itemsize)
    Tensor.tobytes = lambda self, order="C": self.numpy().tobytes(order)
    Tensor.astype = _astype
    Tensor.reshape = _reshape
    Tensor.transpose = _transpose
    Tensor.to_device = _to_device
    Tensor.__getitem__ = getitem
    Tensor.__setitem__ = setitem
    Tensor.__array_namespace__ = _namespace(ns)
    Tensor.T = property(transpose, doc="The axes reversed.")
    Tensor.mT = property(matrix_transpose, doc="The last two axes swapped.")
    Tensor.real = property(real)
    Tensor.imag = property(imag)
    Tensor.at = property(_at)
    recorder_native.install()  # the arithmetic operators in C where they were built
