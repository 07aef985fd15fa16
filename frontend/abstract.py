"""Tracing without running: eval_shape and make_jaxpr (jax's names).

Both trace the function as jit does (one Trace, the same argument handling) and stop
there: nothing is compiled or run on a device. Arguments may be tensors, NumPy or jax
arrays, Python scalars, or anything with .shape and .dtype (a ShapeDtypeStruct): only
their types are used. make_jaxpr returns our IR, not a jaxpr: its text is the IR's.
"""

from __future__ import annotations

import functools

import numpy as np

from . import tree
from .callbacks import ShapeDtypeStruct
from .compiler import dtypes as dt
from .compiler.ir import Function
from .errors import at_user_line
from .jit import PY_SCALARS, Jitted
from .promotion import is_weak_scalar
from .tensor import Tensor


def _typed(x):
    """A leaf as jit's trace takes it; an array-like that is neither a tensor nor a NumPy
    array becomes a zero-strided NumPy view of its shape and dtype (no memory, no read)."""
    if isinstance(x, (Tensor, np.ndarray, np.generic)) or type(x) in PY_SCALARS:
        return x
    if hasattr(x, "shape") and hasattr(x, "dtype"):
        return np.broadcast_to(np.zeros((), dt.dtype(x.dtype).np), tuple(x.shape))
    return x  # jit's trace says what is wrong with it


def _trace(name: str, fun, args, kwargs, static_argnums=()):
    """(IR function, output structure, constants it captured, output weakness, the
    dynamic argument leaves)."""
    if not callable(fun):
        raise TypeError(at_user_line(f"{name}: expected a function, got "
                                     f"{type(fun).__name__} {fun!r:.60}"))
    jitted = Jitted(fun, static_argnums=static_argnums)
    static = {i % len(args) for i in jitted.static_argnums if -len(args) <= i < len(args)}
    args = tuple(a if i in static else tree.tree_map(_typed, a) for i, a in enumerate(args))
    kwargs = tree.tree_map(_typed, kwargs)
    _, dyn_args, dyn_kwargs = jitted._split(args, kwargs)
    # (jit's trace may return more: the IR results past the output's are write-backs)
    fn, out_tree, captured, weak = jitted.trace(args, kwargs)[:4]
    return fn, out_tree, captured, weak, tree.leaves((dyn_args, dyn_kwargs))


def _structs(types, weak) -> list[ShapeDtypeStruct]:
    """One ShapeDtypeStruct per weak flag (IR results past the output's are jit's
    write-backs into arguments)."""
    return [ShapeDtypeStruct(t.shape, t.dtype, weak_type=w)
            for t, w in zip(types[:len(weak)], weak, strict=True)]


def eval_shape(fun, *args, **kwargs):
    """The shapes and dtypes of fun(*args, **kwargs), as a pytree of ShapeDtypeStruct,
    found by tracing fun once (nothing runs: arguments may be ShapeDtypeStructs).

    Example:
        >>> a = stablejit.ShapeDtypeStruct((2, 3), snp.float32)
        >>> stablejit.eval_shape(lambda a, b: a @ b, a, stablejit.ShapeDtypeStruct((3, 4), a.dtype))
        ShapeDtypeStruct(shape=(2, 4), dtype=float32)
    """
    fn, out_tree, _, weak, _ = _trace("eval_shape", fun, args, kwargs)
    return tree.unflatten(out_tree, _structs(fn.result_types, weak))


class ClosedIR:
    """What make_jaxpr returns: the traced function as our IR (`str()` is its text),
    with the types of its arguments and results (in_avals, out_avals: ShapeDtypeStructs)
    and the concrete tensors it captured (consts, passed after the arguments)."""

    def __init__(self, fn: Function, in_avals, out_avals, consts):
        self.ir = fn
        self.in_avals, self.out_avals, self.consts = in_avals, out_avals, consts

    @property
    def jaxpr(self) -> Function:
        """The IR function (jax's ClosedJaxpr.jaxpr)."""
        return self.ir

    @property
    def eqns(self) -> list:
        """The IR's ops, in order."""
        return self.ir.ops

    def __str__(self) -> str:
        return str(self.ir)

    def pretty_print(self, **_) -> str:
        return str(self.ir)

    def __repr__(self) -> str:
        return str(self.ir)


def make_jaxpr(fun, static_argnums=(), axis_env=None, return_shape: bool = False,
               abstracted_axes=None):
    """A function that traces fun on its arguments and returns a ClosedIR (our IR in
    place of a jaxpr), and with return_shape=True also the output's ShapeDtypeStructs.
    axis_env and abstracted_axes are jax's options for pmap and shape polymorphism,
    which make_jaxpr does not support here.

    Example:
        >>> ir = stablejit.make_jaxpr(lambda x: snp.sin(x) * 2.0)(snp.ones(3))
        >>> ir.out_avals
        [ShapeDtypeStruct(shape=(3,), dtype=float32)]
    """
    if axis_env is not None or abstracted_axes is not None:
        raise NotImplementedError(at_user_line(
            "make_jaxpr: axis_env and abstracted_axes are not supported; trace with "
            "concrete shapes (and, for collectives, inside vmap or shard_map)"))
    if isinstance(static_argnums, int):
        static_argnums = (static_argnums,)

    @functools.wraps(fun)
    def traced(*args, **kwargs):
        fn, out_tree, captured, weak, leaves = _trace("make_jaxpr", fun, args, kwargs,
                                                      tuple(static_argnums))
        in_weak = [is_weak_scalar(x) if type(x) in PY_SCALARS else
                   isinstance(x, Tensor) and x.weak for x in leaves]
        out = _structs(fn.result_types, weak)
        closed = ClosedIR(fn, _structs(fn.param_types[:len(leaves)], in_weak), out,
                          list(captured))
        return (closed, tree.unflatten(out_tree, out)) if return_shape else closed

    return traced


__all__ = ["ClosedIR", "eval_shape", "make_jaxpr"]
