"""Eager grad: the function's forward pass recorded on a tape, not traced.

JAX's eager grad traces the user's function into IR at every call, which costs more
than the step it differentiates when the step is small. The ops can instead be recorded
the way lazy() records any op: a GradTape is a Recorder (recorder.py), which never runs
its tape by itself. Its tape is the structural key of the forward pass; the derivative
(forward and backward as one IR Function) is built the first time a tape is seen and
reused after. In a lazy() block it joins the block's graph as one entry; on an eager
device it runs at once (one cached program). So a training step written eagerly
records a few dozen tuples per step and builds no IR.

Semantics are those of the traced path, which stays the reference:
- the differentiated arguments are the tape's first parameters, one per leaf even when
  two leaves are one tensor; every other tensor the function uses (a closed-over one
  too, even the same object as a leaf) is a parameter that carries no gradient;
- reading a value (bool(), item(), numpy(), print), a custom_vjp / custom_jvp /
  checkpoint call, or anything else a tape cannot record raises NeedsTrace, and grad
  runs the function again on the traced path, which handles it (JAX's eager grad
  semantics, with ValuedTrace for Python branches on values). The function's Python
  side effects before that point happen twice;
- a tensor of the tape used after grad returned is an escaped tracer, as in a trace.
"""

from __future__ import annotations

from . import config, recorder, recorder_native, writes
from .context import current_backend
from .errors import DeviceMismatchError, at_user_line
from .recorder import Pending, Recorder, function_of, structural_key
from .tensor import Tensor
from .tracing import escaped_error


class NeedsTrace(Exception):
    """The function did something a GradTape cannot record: use the traced path."""


class ValueRead(NeedsTrace):
    """The function's Python asked for a value (bool(), int(), float(), an `if` on a
    tensor): grad stages it on values at once. (A graph that must run part-way, e.g.
    for a program over a mesh, is a plain NeedsTrace: the abstract staging may need
    no value at all.)"""


class GradTape(Recorder):
    """Records a function's ops for grad, called on `backend`: a device, or a lazy
    backend (a lazy() block's, or an enclosing GradTape) whose values it reads."""

    inlines_calls = True  # a jitted call inside grad in lazy(): inlined, as in a trace

    def __init__(self, backend):
        super().__init__(backend if backend.device_buffers else backend.target, "grad tape")
        self.recording = True

    def leaves(self, ts: list) -> list[Tensor]:
        """The differentiated inputs: a parameter each (not shared with other uses of the
        same tensor, whose values carry no gradient)."""
        out = recorder.tape_leaves(self, ts)  # (in C where it is built)
        return out if out is not None else recorder._python_tape_leaves(self, ts)

    def _slot(self, t: Tensor) -> int:
        b = t._backend
        if b is self:
            d = t._data
            if type(d) is Pending:
                if not self.recording:
                    raise escaped_error()
                return d.slot
            key = d  # a buffer made inside the function (asarray of host data)
            t = Tensor(d, self.target, t.type, t.weak)
        elif b.deferred or b is self.target:
            if b.device != self.device:
                raise DeviceMismatchError(at_user_line(
                    f"operands live on two devices, {b.name} and {self.target.name}; move "
                    f"one explicitly with stablejit.backend_transfer"))
            key = t._live()  # a pending value of an outer graph, or a device buffer
        else:
            t = self.target.adopt(t)  # host data, the reference backend
            key = t._live()
        return self._input(key, t.type, t)  # bound to the tensor: the entry's input

    def adopt(self, t: Tensor) -> Tensor:
        """A tensor from outside as a tensor of this tape: a parameter (an outer graph's
        pending value stays pending: reading it would run that graph)."""
        if t._backend is self:
            return t
        return self._pending_tensor(self._slot(t), t.weak)

    # ---- what a tape cannot do: the traced path does it ------------------------------
    def flush(self) -> None:
        if not self.recording:
            raise escaped_error()
        raise NeedsTrace("a value was read")

    def buffer(self, t: Tensor):
        d = t._live()
        if type(d) is Pending:
            if not self.recording:
                raise escaped_error()
            raise NeedsTrace("a value was read")
        return d

    def needs_staging(self, what: str) -> None:
        raise NeedsTrace(what)

    def check_concrete(self, t: Tensor, what: str) -> None:
        if type(t._data) is Pending:
            if not self.recording:
                raise escaped_error()
            raise ValueRead(what)

    # ---- the derivative --------------------------------------------------------------
    def slots(self, results: list[Tensor]) -> tuple:
        """The slots of the function's results (recording ends with them)."""
        slots = []
        for t in results:
            d = t._data  # (the common result: a value of this tape)
            slots.append(d.slot if t._backend is self and type(d) is Pending
                         else self._slot(t))
        self._result_slots = slots = tuple(slots)
        return slots

    def key(self) -> tuple:
        """The structural key of the function with the results `slots` gave: everything
        the derivative depends on."""
        return structural_key(self._tape, self._result_slots, self._holds_functions)

    def last_derivative(self, n_diff: int, holomorphic: bool):
        """The derivative remembered for the last tape, if this one is equal to it (and
        its results are): a training loop records the same tape every step, and compared
        entry by entry (entries share their objects, so each compares by identity, as
        LazyBackend._program compares graphs) it needs no key built or hashed. None
        otherwise. (A tape records only without STABLEJIT_DUMP_TO: a dump names this
        call's lines; tape_backend says so.)"""
        last = _last
        if last is not None and last[1] == (self._result_slots, n_diff, holomorphic) and \
                recorder.same_tape(last[0], self._tape):
            return last[2]
        return None

    def remember(self, n_diff: int, holomorphic: bool, fn) -> None:
        global _last
        _last = self._tape, (self._result_slots, n_diff, holomorphic), fn

    def forward(self, slots: tuple):
        """The recorded function as an IR Function (its params: the tape's parameters)."""
        return function_of(self._tape, self._locs, slots)

    def result_type(self, slot: int):
        return self._types[slot]

    def inputs(self) -> list[Tensor]:
        """The tensors the parameters read, in order: the derivative's inputs."""
        return self._inputs


recorder_native.connect_tape(GradTape)

# (tape, (result slots, n_diff, holomorphic), derivative Function) of the last derivative
# found or built (one tuple, replaced whole: threads may read it at any time)
_last: tuple | None = None


def tape_backend(leaves):
    """The backend a grad called now on `leaves` records its tape for (GradTape's
    `backend`), or None where it takes the traced path. A tape: in a lazy() block, or
    eagerly with every leaf on the current device. The traced path: inside a trace, on
    the reference backend, a mesh or several devices, and with debug checks or
    STABLEJIT_DUMP_TO (which want the traced path's op-by-op checks and lines)."""
    if writes.live_traces or config.debug_checks() or config.dump_to():
        return None
    b = current_backend()
    if b.deferred or b.device_buffers and all(t._backend is b for t in leaves):
        return b
    return None


__all__ = ["GradTape", "NeedsTrace", "ValueRead", "tape_backend"]
