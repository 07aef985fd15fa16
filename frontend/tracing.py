"""Tracing is just another backend: the same Tensor API records IR ops instead of
computing. A Trace owns one IR Builder; it is alive while its function is traced."""

from __future__ import annotations

import numpy as np

from . import views, writes
from .backends import Backend, constant_attrs, scalar_key
from .compiler import dtypes as dt
from .compiler.autodiff import inline
from .compiler.builder import Builder
from .compiler.errors import ShapeError
from .compiler.ir import Attrs, Function, Literal, TensorType, Value
from .compiler.primitives import shape_ops
from .context import concrete_default
from .errors import (
    EscapedTracerError,
    at_user_line,
    bool_of_traced,
    conversion_of_traced,
    user_location,
)
from .tensor import Tensor

# Concrete data up to this many elements is embedded in the program as a constant;
# larger data is passed in as an extra argument (keeps programs small and cacheable).
EMBED_LIMIT = 1 << 12


class Trace(Backend):
    """Records ops into the IR Function being staged (staging.stage); no values."""

    concrete = False
    stages = True
    inlines_calls = True  # a jitted call inside a trace is traced inline
    name = "traced"

    def __init__(self, name: str = "main"):
        self.builder = Builder(name)
        self.alive = True
        self.captured: list[tuple[Tensor, Value]] = []  # concrete/outer tensors lifted to params
        self._captured_ids: dict[int, Value] = {}
        self._embedded: list[Tensor] = []  # keeps embedded tensors alive: ids stay unique
        # Writes into concrete tensors from outside the trace (a closed-over tensor):
        # None where the caller cannot write them back (control-flow bodies, grad ...),
        # else id -> (tensor, its data, backend, type before the trace wrote it). jit
        # returns their new values and writes them back after every call.
        self.outer_writes: dict | None = None
        writes.live_traces += 1

    # ---- building ------------------------------------------------------------------
    def new_arg(self, type: TensorType, weak: bool = False) -> Tensor:
        return Tensor(self.builder.param(type), self, type, weak)

    def arg(self, spec) -> Tensor:
        """An abstract argument for a staging.Spec (a pinned one is a view passed to
        jit: `x += y` writes through it, as eagerly)."""
        a = self.new_arg(spec.type, spec.weak)
        if spec.pinned is not None:
            views.pin(a, spec.pinned)
        return a

    def apply(self, prim, tensors, attrs: Attrs, regions=()):
        self._check_alive()
        values = [t._data if t._backend is self else self._capture(t) for t in tensors]
        try:
            results = self.builder.bind(prim, values, attrs, user_location(), regions)
        except ShapeError as e:
            raise ShapeError(at_user_line(str(e))) from None
        return tuple(Tensor(r, self, r.type) for r in results)

    def run(self, fn: Function, tensors, loc=None, **_) -> list[Tensor]:
        """Record `fn`'s ops into this trace, applied to `tensors` (at `loc`, when
        given, instead of the lines fn was traced at)."""
        self._check_alive()
        outs = inline(self.builder, fn, [self.value_of(t) for t in tensors], loc=loc)
        return [Tensor(v, self, v.type) for v in outs]

    def value_of(self, t: Tensor) -> Value:
        """The IR value for any tensor used in this trace (capturing it if needed)."""
        self._check_alive()
        return t._data if t._backend is self else self._capture(t)

    def _capture(self, t: Tensor) -> Value:
        if t._backend.stages and not t._backend.alive:
            raise escaped_error()
        v = self._captured_ids.get(id(t))
        if v is not None:
            return v
        if t._backend.concrete:
            writes.note_read(t)
        # a lazy tensor is captured as an argument: embedding it would run its graph
        # and read it back to the host (the traced program then joins that graph)
        if t._backend.concrete and t.size <= EMBED_LIMIT and not t._backend.deferred:
            v, = self.builder.bind(shape_ops.constant, (), Attrs(
                {"value": Literal(t.numpy())}), user_location())
            self._embedded.append(t)
        else:
            v = self.builder.param(t.type)
            self.captured.append((t, v))
        self._captured_ids[id(t)] = v
        return v

    def from_numpy(self, array: np.ndarray, weak: bool = False) -> Tensor:
        return Tensor(self._capture(concrete_default().from_numpy(array)), self,
                      TensorType(np.shape(array), dt.dtype(np.asarray(array).dtype)), weak)

    def scalar(self, value, dtype: dt.DType, weak: bool = False) -> Tensor:
        self._check_alive()
        v, = self.builder.bind(shape_ops.constant, (), constant_attrs(
            scalar_key(value, dtype), value, dtype), user_location())
        return Tensor(v, self, v.type, weak)

    def write_outer(self, t: Tensor) -> bool:
        """Before a traced value is written into the concrete tensor t: capture t's
        value (an input of the program) and remember it, so that finish() restores t.
        False if this trace cannot hand such writes back."""
        if self.outer_writes is None:
            return False
        if id(t) not in self.outer_writes:
            self.value_of(t)
            self.outer_writes[id(t)] = (t, t._data, t._backend, t.type)
        return True

    def finish(self):
        if self.alive:
            writes.live_traces -= 1
        self.alive = False
        for t, data, backend, type_ in (self.outer_writes or {}).values():
            t._data, t._backend, t.type = data, backend, type_
            views.refresh(t)

    def _check_alive(self):
        if not self.alive:
            raise escaped_error()

    # ---- what a traced tensor cannot do ----------------------------------------------
    def check_concrete(self, t: Tensor, what: str) -> None:
        if not self.alive:
            raise escaped_error()
        if what.startswith("bool"):
            raise bool_of_traced(what)
        raise conversion_of_traced(what)

    def to_numpy(self, t: Tensor):
        self.check_concrete(t, "Reading the value (numpy(), print, np.asarray)")

    def block_until_ready(self, t: Tensor) -> None:
        pass

    def describe(self, t: Tensor) -> str:
        return "traced" if self.alive else "traced, trace ended"

    def device_of(self, t: Tensor):
        return None

    def __repr__(self) -> str:
        return f"<trace {self.builder.name}>"


def refuse_written_arguments(abstract, before, what: str) -> None:
    """A transformation that cannot hand writes into its arguments back to the caller
    (grad, vjp, jvp, vmap) refuses them: eagerly the caller's tensor would change, so
    dropping the write would make the two differ. `before` holds each abstract
    argument's data before the function ran."""
    if all(getattr(a, "_data", d) is d for a, d in zip(abstract, before, strict=True)):
        return  # (the common case, asked once per grad call: no loop with indices)
    for i, (a, d) in enumerate(zip(abstract, before, strict=True)):
        if getattr(a, "_data", d) is not d:
            raise TypeError(at_user_line(
                f"{what}: the function writes into its argument leaf {i} (x[...] = v, "
                f"x += y, or through a view of x); {what} cannot give the write back to "
                f"the caller's tensor, as running the function eagerly would. Write into "
                f"a copy (x = x.copy() first), or compute the update functionally "
                f"(x2 = x.at[index].set(v)) and return it; stablejit.jit writes into "
                f"arguments"))


def escaped_error() -> EscapedTracerError:
    return EscapedTracerError(at_user_line(
        "a traced tensor was used after its jit trace ended (it escaped, e.g. stored in a "
        "global or a list outside the jitted function). Return it from the jitted function "
        "instead, and use the returned tensor."))
