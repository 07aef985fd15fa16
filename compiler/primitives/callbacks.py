"""Host callbacks: a Python function called from compiled code (debug.print,
debug.callback, pure_callback, io_callback).

Two primitives, `host_callback` (with a side effect: passes never drop or merge it) and
`pure_callback` (without), whose `callback` attribute is a HostCallback: the Python
function and the types it returns. It is emitted as the typed-FFI custom call that
jaxlib's CPU and GPU clients route to a Python function
(`xla_ffi_python_{cpu,gpu}_callback`, with the function's position in the program's list
of host callbacks, emitter.host_callbacks, as its `index`); the runtime hands that list
to XLA when it compiles. The reference interpreter calls the function directly.

Kinds: "debug" (no results; a side effect: never dropped, never merged), "io" (results
and a side effect) and "pure" (results, no side effect: the compiler may drop or merge
it). Only debug callbacks may sit on a differentiated path (they see primal values);
differentiating through a pure or io callback is an error that names the fix.
"""

from __future__ import annotations

import numpy as np

from .. import batch_rules as br
from .. import dtypes as dt
from ..errors import ShapeError
from ..ir import TensorType
from ..primitive import Primitive


class CallbackError(TypeError):
    """A callback returned values of the wrong number, shape or dtype."""


class HostCallback:
    """A Python function called from compiled code, and what it returns. Compared by
    identity (it is part of a program's structural key)."""

    __slots__ = ("fn", "result_types", "kind", "vmap_method", "error", "name", "chained")

    def __init__(self, fn, result_types=(), kind: str = "debug", vmap_method=None,
                 name: str = "", chained: bool = False):
        self.fn = fn
        self.result_types = tuple(result_types)
        self.kind = kind
        self.vmap_method = vmap_method
        self.error: BaseException | None = None  # what the function raised, for the caller
        self.name = name or getattr(fn, "__name__", "callback")
        # chained: the op takes an order token (a u8 scalar) as its first operand and
        # returns one as its last result, so the callbacks of a program run in the order
        # they were written (XLA keeps data dependencies, not the order of side effects)
        self.chained = chained

    def like(self, fn, result_types, vmap_method=None) -> HostCallback:
        return HostCallback(fn, result_types, self.kind, vmap_method or self.vmap_method,
                            self.name, self.chained)

    def __call__(self, *arrays):
        """Called by XLA (or the interpreter) with NumPy arrays; returns a tuple of
        arrays of `result_types`. An exception is kept for the caller to re-raise."""
        token = ()
        if self.chained:
            token, arrays = (np.asarray(arrays[0]),), arrays[1:]
        try:
            return self.check(self.fn(*[np.asarray(a) for a in arrays])) + token
        except BaseException as e:
            self.error = e
            raise

    def check(self, out) -> tuple:
        if not self.result_types:
            return ()
        outs = out if isinstance(out, (tuple, list)) else (out,)
        if len(outs) != len(self.result_types):
            raise CallbackError(f"{self.name} returned {len(outs)} value(s), but its "
                                f"result_shape_dtypes declare {len(self.result_types)}")
        arrays = []
        for i, (o, t) in enumerate(zip(outs, self.result_types, strict=True)):
            a = np.asarray(o)
            if a.shape != t.shape:
                raise CallbackError(f"{self.name} returned shape {a.shape} for result {i}, "
                                    f"declared {t.shape}")
            if a.dtype != t.dtype.np:
                raise CallbackError(f"{self.name} returned dtype {a.dtype} for result {i}, "
                                    f"declared {t.dtype.name}; cast it with .astype")
            arrays.append(a if a.flags.c_contiguous else a.copy(order="C"))
        return tuple(arrays)

    def __repr__(self) -> str:
        return f"<{self.kind} callback {self.name}>"


TOKEN = TensorType((), dt.uint8)


def _rule(*xs, callback):
    if not isinstance(callback, HostCallback):
        raise ShapeError("host_callback: the callback attribute must be a HostCallback")
    if callback.chained and (not xs or xs[0] != TOKEN):
        raise ShapeError("host_callback: a chained callback's first operand is its order "
                         "token, a u8 scalar")
    return callback.result_types + ((TOKEN,) if callback.chained else ())


def _emit(ctx, *xs):
    cb = ctx.attrs["callback"]
    index = next(i for i, c in enumerate(ctx.emitter.callbacks) if c is cb)
    device = "gpu" if ctx.emitter.platform in ("cuda", "rocm") else "cpu"
    if ctx.emitter.platform not in ("host", "cpu", "cuda", "rocm"):
        raise ShapeError(f"host callbacks are not supported on {ctx.emitter.platform}")
    attrs = (f'call_target_name = "xla_ffi_python_{device}_callback", '
             f"api_version = 4 : i32, has_side_effect = {str(cb.kind != 'pure').lower()}, "
             f"backend_config = {{index = {index} : ui64}}")
    return ctx.op("stablehlo.custom_call", list(xs), list(ctx.out_types), attrs)


def _reference(*xs, callback):
    return callback(*xs)


def _no_derivative(kind: str, name: str):
    return TypeError(
        f"cannot differentiate through the {kind} callback {name!r}: XLA cannot see "
        f"inside a Python function. Give it a derivative with stablejit.custom_jvp or "
        f"custom_vjp, or stop gradients into it with stablejit.stop_gradient.")


def _vjp(ops, cts, primals, outs, *, callback):
    raise _no_derivative(callback.kind, callback.name)


def _jvp(ops, tangents, primals, outs, *, callback):
    if callback.kind == "debug":  # it only looks at primal values
        return (None,) * len(outs)
    raise _no_derivative(callback.kind, callback.name)


def _sequential(cb: HostCallback, batched, n: int) -> HostCallback:
    """A callback that calls cb once per example and stacks the results."""
    def loop(*arrays):
        outs = [cb.check(cb.fn(*[a[i] if b else a for a, b in zip(arrays, batched,
                                                                   strict=True)]))
                for i in range(n)]
        return tuple(np.stack([o[k] for o in outs]) for k in range(len(cb.result_types)))
    return cb.like(loop, [TensorType((n, *t.shape), t.dtype) for t in cb.result_types])


def _batch_rule(prim):
    def batch(ops, xs, batched, *, callback):
        cb, method = callback, callback.vmap_method
        token = ()
        if cb.chained:  # the order token is never batched: every example shares it
            token = (ops.const(0, dt.uint8),)
            xs, batched = xs[1:], batched[1:]
        if not any(batched):
            return ops.bind_many(prim, *token, *xs, callback=cb)
        n = br.batch_size(xs, batched)
        if cb.kind == "debug":  # sees the whole batch at once, as JAX's debug.print does
            return ops.bind_many(prim, *token, *xs, callback=cb.like(cb.fn, ()))
        if method == "sequential":
            return ops.bind_many(prim, *token, *xs, callback=_sequential(cb, batched, n))
        if method in ("broadcast_all", "expand_dims"):
            args = br.bring_all(ops, xs, batched) if method == "broadcast_all" else [
                x if b else ops.reshape(x, (1, *x.type.shape))
                for x, b in zip(xs, batched, strict=True)]
            new = cb.like(cb.fn, [TensorType((n, *t.shape), t.dtype)
                                  for t in cb.result_types], method)
            return ops.bind_many(prim, *token, *args, callback=new)
        raise br.BatchingError(
            f"vmap of the {cb.kind} callback {cb.name!r} needs vmap_method= 'sequential' "
            f"(call it once per example), 'expand_dims' or 'broadcast_all' (call it once "
            f"with batched arrays)")
    return batch


def _callback_primitive(name: str, effectful: bool) -> Primitive:
    p = Primitive(name, _rule, _emit, _reference, vjp=_vjp, jvp=_jvp, multiple_results=True,
                  family="callback", effectful=effectful)
    p.batch = _batch_rule(p)
    return p


host_callback = _callback_primitive("host_callback", effectful=True)
pure_callback = _callback_primitive("pure_callback", effectful=False)

PRIMITIVES = [host_callback, pure_callback]
