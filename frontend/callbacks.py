"""Calling Python from compiled code: stablejit.debug.print / debug.callback,
stablejit.pure_callback, stablejit.io_callback and stablejit.hook (JAX's and EXLA's
names and signatures).

    @stablejit.jit
    def f(x):
        stablejit.debug.print("x = {x}, sum {s}", x=x, s=x.sum())
        return x * 2

Each binds a host-callback primitive (compiler/primitives/callbacks.py) whose operands
are the tensors among the arguments; the Python function gets NumPy arrays. Under jit,
grad, vmap and control flow the call is part of the compiled program and runs when the
program does (a program that calls Python runs to completion before the call returns,
so prints appear in order, and an exception raised by the function is raised at the
caller's line with the function's own traceback). Eagerly, on concrete tensors, the
function simply runs.
"""

from __future__ import annotations

import weakref

import numpy as np

from . import tree
from .compiler import dtypes as dt
from .compiler.ir import TensorType
from .compiler.primitives import callbacks as cb_prims
from .context import current_backend
from .dispatch import bind, pick
from .errors import at_user_line
from .numpy._operands import as_tensor
from .tensor import Tensor


class ShapeDtypeStruct:
    """A shape and dtype without data (JAX's name): what eval_shape returns and what a
    callback says it returns. weak_type marks the type of a Python scalar."""

    __slots__ = ("shape", "dtype", "weak_type", "sharding")

    def __init__(self, shape, dtype, *, weak_type: bool = False, sharding=None):
        self.shape = tuple(shape)
        self.dtype = dt.dtype(dtype)
        self.weak_type = bool(weak_type)
        self.sharding = sharding

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    def __eq__(self, other) -> bool:
        return (isinstance(other, ShapeDtypeStruct) and self.shape == other.shape
                and self.dtype is other.dtype and self.weak_type == other.weak_type
                and self.sharding == other.sharding)

    def __hash__(self) -> int:
        return hash((self.shape, self.dtype, self.weak_type))

    def __repr__(self) -> str:
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name}{weak})"


def _split(args, kwargs):
    """(tensor leaves, rebuild(arrays) -> (args, kwargs)): tensors and arrays become
    operands; every other leaf (strings, Python numbers, None) stays as it is."""
    leaves, td = tree.flatten((args, kwargs))
    slots = [i for i, x in enumerate(leaves)
             if isinstance(x, (Tensor, np.ndarray, np.generic))]
    tensors = [as_tensor(leaves[i]) for i in slots]

    def rebuild(arrays):
        out = list(leaves)
        for i, a in zip(slots, arrays, strict=True):
            out[i] = a
        return tree.unflatten(td, out)
    return tensors, rebuild


def _runs_now(tensors) -> bool:
    """Concrete eager tensors: the function can run right away, in order."""
    backend = pick(tensors) if tensors else current_backend()
    return backend.concrete and not backend.deferred


# per recording backend (a trace, a lazy graph): the order token of its last callback
_last_token: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _call(fn, kind: str, result_types, args, kwargs, vmap_method=None, name=""):
    tensors, rebuild = _split(args, kwargs)
    if _runs_now(tensors) and kind == "debug":
        a, k = rebuild([t.numpy() for t in tensors])
        fn(*a, **k)
        return ()

    def call(*arrays):
        a, k = rebuild(arrays)
        return fn(*a, **k)

    chained = kind != "pure"  # side effects run in the order they were written
    host = cb_prims.HostCallback(call, result_types, kind, vmap_method,
                                 name or getattr(fn, "__name__", "callback"), chained)
    if not chained:
        return bind(cb_prims.pure_callback, tuple(tensors), {"callback": host})
    recorder = current_backend()
    token = _last_token.get(recorder)
    if token is None:
        token = as_tensor(np.uint8(0))
    outs = bind(cb_prims.host_callback, (token, *tensors), {"callback": host})
    _last_token[recorder] = outs[-1]
    return outs[:-1]


def _result_types(result_shape_dtypes):
    leaves, td = tree.flatten(result_shape_dtypes)
    types = []
    for s in leaves:
        if not hasattr(s, "shape") or not hasattr(s, "dtype"):
            raise TypeError(at_user_line(
                f"result_shape_dtypes must be a pytree of objects with .shape and .dtype "
                f"(stablejit.ShapeDtypeStruct, or an example array), got {s!r}"))
        types.append(TensorType(tuple(s.shape), dt.dtype(s.dtype)))
    return types, td


def pure_callback(callback, result_shape_dtypes, *args, vmap_method=None, **kwargs):
    """Call a side-effect-free Python function from compiled code; it returns arrays of
    `result_shape_dtypes`. The compiler may drop the call if its results are unused, or
    merge two equal calls. Under vmap, `vmap_method` says how: 'sequential' (once per
    example), 'expand_dims' or 'broadcast_all' (once, with batched arrays)."""
    types, td = _result_types(result_shape_dtypes)
    outs = _call(lambda *a, **k: callback(*a, **k), "pure", types, args, kwargs,
                 vmap_method, getattr(callback, "__name__", "callback"))
    return tree.unflatten(td, list(outs))


def io_callback(callback, result_shape_dtypes, *args, ordered: bool = False, **kwargs):
    """Call a Python function with side effects from compiled code; it returns arrays
    of `result_shape_dtypes` (None or () for nothing). Never dropped or merged."""
    types, td = _result_types(result_shape_dtypes if result_shape_dtypes is not None else ())
    outs = _call(lambda *a, **k: callback(*a, **k), "io", types, args, kwargs,
                 "sequential", getattr(callback, "__name__", "callback"))
    return tree.unflatten(td, list(outs))


def hook(x, fn, name: str | None = None):
    """x, unchanged; `fn(value)` is called on the host with x's value when it is
    computed (EXLA's hook), also inside jit, grad and vmap."""
    _call(fn, "debug", (), (x,), {}, name=name or getattr(fn, "__name__", "hook"))
    return x


class _Debug:
    """stablejit.debug: print and callback from compiled code."""

    @staticmethod
    def print(fmt: str, *args, ordered: bool = False, **kwargs) -> None:
        """Print `fmt.format(*args, **kwargs)` with the values of tensors, from compiled
        code too (jit, grad, vmap, loop bodies and branches), in program order."""
        def show(*a, **k):
            print(fmt.format(*a, **k), flush=True)
        _call(show, "debug", (), args, kwargs, name="debug.print")

    @staticmethod
    def callback(fn, *args, ordered: bool = False, **kwargs) -> None:
        """Call `fn(*args, **kwargs)` with NumPy values for its side effect (returns
        nothing), from compiled code too."""
        _call(fn, "debug", (), args, kwargs, name=getattr(fn, "__name__", "callback"))


debug = _Debug()

__all__ = ["ShapeDtypeStruct", "debug", "hook", "io_callback", "pure_callback"]
