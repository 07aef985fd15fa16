"""The signature of a jitted call and what runs for it.

A call's signature is its pytree structure, each dynamic leaf's type (leaf_signature:
shape, dtype, weakness; Python scalars by their Python type), the static arguments'
exact values (static_key) and the backend. An Entry is one traced signature: the
program to run and how to turn its results into the output pytree, writing back what
the function wrote into its arguments or closed-over tensors (write_back).
"""

from __future__ import annotations

import numpy as np

from . import tree, views
from .compiler import dtypes as dt
from .compiler.ir import TensorType
from .context import arrive, user_default
from .errors import at_user_line
from .keys import exact_key
from .promotion import is_weak_scalar, python_scalar_dtype
from .tensor import Tensor

PY_SCALARS = (bool, int, float, complex)


def leaf_signature(x):
    t = type(x)
    if t is Tensor:
        if x._view is not None:  # `x += y` writes through it (numpy/_inplace.py), and
            # its strides decide whether a reshape is a view (numpy/_views.py)
            return x.type, x.weak, "view", views.layout_of(x).strides
        return x.type if not x.weak else (x.type, True)
    if t in PY_SCALARS:
        return t
    if isinstance(x, (np.ndarray, np.generic)):
        return TensorType(np.shape(x), dt.dtype(x.dtype))
    if isinstance(x, Tensor):
        return x.type
    raise TypeError(at_user_line(
        f"jit got an argument of type {t.__name__}, which is not a tensor, array, Python "
        f"scalar or pytree of them. If it is a setting rather than data, make it static: "
        f"jit(f, static_argnums=...) or static_argnames=..."))



class Entry:
    """One traced signature: the program to run (held by its backend's program cache,
    see compilation.py) and how to turn its results into the output pytree."""

    __slots__ = ("fn", "prog", "out_tree", "out_types", "out_weak", "captured", "backend",
                 "donate", "_single", "fast_out", "lazy", "mutated")

    def __init__(self, fn, prog, out_tree, captured, backend, donate=(), out_weak=None,
                 mutated=()):
        self.fn, self.prog, self.out_tree = fn, prog, out_tree
        self.mutated = mutated  # argument leaves fn writes into: the last results
        self.out_types = prog.result_types
        self.out_weak = out_weak or (False,) * len(self.out_types)  # weak-typed outputs
        self.captured, self.backend, self.donate = captured, backend, donate
        # the common "returns one tensor" case skips pytree reconstruction
        self._single = out_tree == tree.LEAF
        self.fast_out = _fast_structure(out_tree)
        # a fast-path call on a lazy() graph (not grad's tape) records (see record)
        self.lazy = backend.batches_ops

    @property
    def exe(self):
        return self.prog.executable

    def outputs(self, buffers):
        """The output pytree of a fast-path call (see Jitted.__call__)."""
        backend = self.backend
        return self._tree([Tensor(b, backend, t, w) for b, t, w in
                           zip(buffers, self.out_types, self.out_weak, strict=True)])

    def _tree(self, outs):
        """The output pytree of the output tensors (rebuilt in C++ where it can be)."""
        if self.fast_out is not None:
            return self.fast_out.unflatten(outs)
        return tree.unflatten(self.out_tree, outs)

    def _weak(self, outs):
        for o, w in zip(outs, self.out_weak, strict=True):
            o.weak = w
        return outs

    @property
    def fast_eligible(self) -> bool:
        return (self.backend.device_buffers or self.backend.deferred) and not self.captured \
            and not self.donate and not self.mutated

    def record(self, leaves):
        """A fast-path call on a lazy backend: fn becomes one entry of the pending graph
        (leaves are tensors of the backend or of its device; see Jitted._enter_fast)."""
        outs = self._weak(self.backend.execute(self.prog, leaves))
        return outs[0] if self._single else self._tree(outs)

    def run(self, leaves):
        backend = self.backend
        if self.mutated:
            _check_no_aliased_arguments(leaves)
        tensors = [to_tensor(x, backend) for x in leaves]
        if self.donate:
            check_donated_once([t._data for t in tensors], self.donate)
        outs = self._weak(backend.execute(self.prog, tensors + list(self.captured)))
        for i in self.donate:
            x = leaves[i]
            if type(x) is Tensor and x._backend is backend:
                x._data = None  # its buffer now belongs to an output (host data: a copy)
        if self.mutated:
            outs = write_back(leaves, self.mutated, outs)
        return self._tree(outs)


def _check_no_aliased_arguments(leaves) -> None:
    """A program that writes into its arguments sees each as its own buffer: two that
    share memory would lose each other's writes, so the call refuses them."""
    pair = views.aliased_pair(leaves)
    if pair is not None:
        i, j = pair
        raise ValueError(at_user_line(
            f"this jitted function writes into its arguments, and argument leaves {i} and "
            f"{j} share memory (one tensor twice, or views of one tensor); inside jit each "
            f"argument is its own buffer, so a write through one would not be seen "
            f"through the other. Pass the base tensor once and take the views inside the "
            f"function, or pass a copy (x.copy()) of one of them"))


def write_back(leaves, mutated, outs):
    """Give the caller's argument leaves (by index) and closed-over tensors the values
    fn wrote into them (the last results of its program); returns the other results."""
    n = len(outs) - len(mutated)
    for i, new in zip(mutated, outs[n:], strict=True):
        x = leaves[i] if type(i) is int else i
        if isinstance(x, Tensor):
            views.write(x, new)
        elif isinstance(x, np.ndarray) and x.flags.writeable:
            x[...] = new.numpy()  # eagerly, fn would have written into the array
    return outs[:n]


def _fast_structure(out_tree):
    """The output structure as a jaxlib PyTreeDef, which rebuilds outputs in C++; None
    when the two flatteners disagree on it (the Python unflatten is used then)."""
    marks = list(range(out_tree.num_leaves))
    try:
        leaves, fast = tree.fast_flatten(tree.unflatten(out_tree, marks))
    except Exception:  # a registered class that will not hold placeholder leaves
        return None
    return fast if leaves == marks else None


def to_tensor(x, backend) -> Tensor:
    if type(x) is Tensor:
        if x._backend is not backend and x._backend.device_buffers \
                and backend.device_buffers and x._backend is user_default():
            return arrive(x, backend)  # default-device data follows (context.meeting_place)
        return x
    if isinstance(x, Tensor):
        return x
    if type(x) in PY_SCALARS:
        return backend.scalar(x, python_scalar_dtype(x), is_weak_scalar(x))
    return backend.from_numpy(np.asarray(x))



class _Exact:
    """A static argument in the cache key, equal only to one of the same type and bits:
    0.0 and -0.0, or 1, 1.0 and True, trace to different programs (NaN equals itself)."""

    __slots__ = ("value", "_id")

    def __init__(self, value):
        self.value, self._id = value, _exact_id(value)

    def __eq__(self, other) -> bool:
        return isinstance(other, _Exact) and self._id == other._id

    def __hash__(self) -> int:
        return hash(self._id)

    def __repr__(self) -> str:
        return repr(self.value)


def _exact_id(v):
    """exact_key, and for other hashable values the value itself with its type."""
    k = exact_key(v)
    return (type(v), v) if k is None else k


def static_key(static) -> tuple:
    return tuple((k, _Exact(v)) for k, v in static)


def check_donated_once(bufs, donate) -> None:
    """A donated buffer cannot also be read by the same call (XLA would reject it)."""
    for i in donate:
        also = [j for j, b in enumerate(bufs) if j != i and b is bufs[i]]
        if also:
            raise ValueError(at_user_line(
                f"argument leaf {i} is donated and the same tensor is also passed as leaf "
                f"{also[0]}; a donated buffer cannot be read again in the same call. Pass a "
                f"copy (stablejit.numpy.array(x)) for one of them, or do not donate it"))
