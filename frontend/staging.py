"""Staging: the one place where a user's function is turned into IR.

`stage` runs the function's Python once under a Trace, on abstract arguments, and
returns what it made: the IR Function (parameters: the arguments, then the tensors it
closed over; results: the outputs, then the new values of what it wrote into), the
output structure, which outputs are weakly typed, and the captured tensors. jit,
grad / vjp / jvp, vmap, composites, control-flow bodies, shard_map bodies,
custom-derivative rules, eval_shape / make_jaxpr and export all stage through it; they
differ only in the Trace they pass (what errors name, what may be captured), in how a
returned leaf that is not a tensor becomes one, and in what happens to writes into the
arguments.

The one fallback, `stage_with_values`: a transformation (grad, vjp ...) of concrete
inputs whose Python needs a value (`if loss > 0:`) is staged a second time on a
ValuedTrace, which also computes every value, so Python can branch on it (JAX's eager
grad does the same). A function's Python therefore runs at most twice per staging.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

from . import tree, views
from .compiler.ir import Function, TensorType
from .context import concrete_default, current_backend, using_backend
from .errors import (
    MustCompileError,
    TracerBoolConversionError,
    TracerConversionError,
    at_user_line,
)
from .tensor import Tensor
from .tracing import Trace, escaped_error, refuse_written_arguments


class Spec(NamedTuple):
    """An abstract argument: its type and weakness. `value`: the concrete tensor a
    ValuedTrace computes with (other traces ignore it). `pinned`: the strides of a view
    passed to jit (None: no view), through which `x += y` writes and whose layout
    decides what reshape and shares_memory answer, as eagerly."""

    type: TensorType
    weak: bool = False
    value: Tensor | None = None
    pinned: tuple[int, ...] | None = None


class Staged(NamedTuple):
    """What staging made. fn's parameters are the arguments' (one per Spec), then one per
    captured tensor; its results are the outputs' leaves, then (jit only) the new values
    of the arguments and closed-over tensors written into, listed in `written` (argument
    leaf indices, then the tensors)."""

    fn: Function
    out_tree: object
    out_weak: tuple[bool, ...]
    captured: list[Tensor]
    written: tuple = ()


def tensors_only(leaf, trace: Trace) -> Tensor:
    """The default rule for a returned leaf: it must be a tensor (callers that accept
    numbers or arrays pass their own rule, which makes them constants)."""
    if isinstance(leaf, Tensor):
        return leaf
    raise TypeError(at_user_line(
        f"{trace.builder.name} returned a {type(leaf).__name__}; a staged function "
        f"returns tensors or pytrees of them"))


def stage(fun: Callable, in_tree, inputs: Sequence, trace: Trace, *,
          spread: bool = True, split_output: Callable | None = None,
          output: Callable = tensors_only, refuse_writes: str | None = None,
          return_writes: bool = False) -> Staged:
    """Run `fun(*unflatten(in_tree, args))` (`fun(unflatten(...))` when not `spread`)
    under `trace` and build its IR.

    inputs: one per leaf of in_tree: a Spec becomes an abstract argument (a parameter of
    the IR); anything else reaches fun as it is (a leaf that is not traced).
    split_output: maps fun's return value to the pytree whose leaves are the results.
    output(leaf, trace) -> Tensor: how a returned leaf becomes a tensor.
    refuse_writes: the name of a transformation that cannot hand writes into its
    arguments back (grad, vmap): such a write is an error naming it.
    return_writes: jit's rule instead: arguments and closed-over tensors written into
    get their new values as extra results (see Staged.written)."""
    args = [trace.arg(x) if type(x) is Spec else x for x in inputs]
    before = [getattr(a, "_data", None) for a in args]
    if return_writes:
        trace.outer_writes = {}  # writes into closed-over tensors are written back
    try:
        with using_backend(trace):
            tree_args = tree.unflatten(in_tree, args)
            out = fun(*tree_args) if spread else fun(tree_args)
            if refuse_writes is not None:
                refuse_written_arguments(args, before, refuse_writes)
            if split_output is not None:
                out = split_output(out)
            leaves, out_tree = tree.flatten(out)
            outs = [output(leaf, trace) for leaf in leaves]
            values = [trace.value_of(t) for t in outs]
            weak = [t.weak for t in outs]
            written = ()
            if return_writes:
                # Writes into arguments (x[i] = v, x += y, through a view of x) and into
                # closed-over tensors: the new values are extra results, which the call
                # writes back, so jit leaves every tensor as running fn eagerly would.
                written = tuple(i for i, (a, d) in enumerate(zip(args, before, strict=True))
                                if type(inputs[i]) is Spec and a._data is not d)
                outer = [t for t, *_ in trace.outer_writes.values()]
                for t in [args[i] for i in written] + outer:
                    values.append(trace.value_of(t))
                    weak.append(t.weak)
                written += tuple(outer)
        fn = trace.builder.build(values)
    finally:
        trace.finish()
    return Staged(fn, out_tree, tuple(weak), [t for t, _ in trace.captured], written)


def stage_with_values(fun: Callable, in_tree, leaves: Sequence[Tensor], name: str,
                      what: str, needs_values: bool = False, **options) -> Staged:
    """Stage a transformation's function (`what`: grad, vjp, jvp ...) on the leaves'
    types. If its Python needs a value and every leaf is concrete (and no trace is
    live around it), stage it once more on a ValuedTrace, which follows Python's
    branches for these values; the IR is then valid for them only (the executable cache
    still shares it between calls that take the same branches). `needs_values`: the
    caller already saw the Python read a value (grad's tape did), so the abstract
    staging is skipped and the Python runs once more, not twice."""
    # (a view stays one: `x += y` writes into it, which the transformation refuses)
    specs = [Spec(t.type, t.weak, t, None if t._view is None else views.layout_of(t).strides)
             for t in leaves]
    valued_ok = all(t._backend.concrete for t in leaves) and \
        not current_backend().stages
    if not (needs_values and valued_ok):
        try:
            return stage(fun, in_tree, specs, TransformTrace(name, what),
                         refuse_writes=what, **options)
        except (TracerBoolConversionError, TracerConversionError, MustCompileError):
            if not valued_ok:  # (a data-dependent shape, x[x > 0], is known from values)
                raise
    return stage(fun, in_tree, specs, ValuedTrace(name, what), refuse_writes=what,
                 **options)


class TransformTrace(Trace):
    """The trace of a function under a transformation (grad, vjp ...): its errors name
    that transformation, not jit."""

    def __init__(self, name: str, what: str):
        super().__init__(name)
        self.what = what

    def check_concrete(self, t: Tensor, what: str) -> None:
        if not self.alive:
            raise escaped_error()
        error = TracerBoolConversionError if what.startswith("bool") else \
            TracerConversionError
        raise error(at_user_line(
            f"{what} needs a concrete value, but this value is traced by "
            f"stablejit.{self.what}: it depends on an argument that {self.what} "
            f"differentiates (or on an array argument, which it traces as a "
            f"non-differentiated input), and {self.what} follows the function once with "
            f"abstract values. A setting such as a flag or a loop count works when passed "
            f"as a Python value outside argnums (it then reaches the function unchanged); "
            f"for a choice that depends on data use stablejit.numpy.where or "
            f"stablejit.cond, for loops stablejit.fori_loop or stablejit.scan."))


class ValuedTrace(TransformTrace):
    """A trace that also computes every value on the concrete backend, so Python can
    branch on it (`if x < 3:` inside grad, as JAX's eager grad allows). The IR it
    records follows the branches this call took, so it is only valid for these input
    values: stage_with_values uses it only when a plain trace of concrete inputs needed
    a value."""

    def __init__(self, name: str, what: str):
        super().__init__(name, what)
        self.values: dict = {}  # IR value -> concrete Tensor
        self.backend = concrete_default()

    def arg(self, spec: Spec) -> Tensor:
        a = super().arg(spec)
        self.values[a._data] = spec.value
        return a

    def _concrete(self, t: Tensor) -> Tensor:
        if t._backend is self:
            return self.values[t._data]
        return t if t._backend is self.backend else self.backend.adopt(t)

    def apply(self, prim, tensors, attrs, regions=()):
        outs = super().apply(prim, tensors, attrs, regions)
        done = self.backend.apply(prim, [self._concrete(t) for t in tensors], attrs, regions)
        for o, c in zip(outs, done, strict=True):
            self.values[o._data] = c
        return outs

    def run(self, fn: Function, tensors, **options):
        outs = super().run(fn, tensors, **options)
        done = self.backend.run(fn, [self._concrete(t) for t in tensors])
        for o, c in zip(outs, done, strict=True):
            self.values[o._data] = c
        return outs

    def scalar(self, value, dtype, weak: bool = False) -> Tensor:
        t = super().scalar(value, dtype, weak)
        self.values[t._data] = self.backend.scalar(value, dtype, weak)
        return t

    def from_numpy(self, array, weak: bool = False) -> Tensor:
        t = super().from_numpy(array, weak)
        self.values[t._data] = self.backend.from_numpy(array, weak)
        return t

    def _capture(self, t: Tensor):
        v = super()._capture(t)
        self.values.setdefault(v, t if t._backend.concrete else None)
        return v

    def check_concrete(self, t: Tensor, what: str) -> None:
        if self.values.get(t._data) is None:
            super().check_concrete(t, what)

    def to_numpy(self, t: Tensor):
        self.check_concrete(t, "Reading the value (numpy(), print, np.asarray)")
        return self.values[t._data].numpy()

