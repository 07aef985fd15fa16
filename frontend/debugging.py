"""Debug modes: stablejit.disable_jit() and NaN / Inf checks that name the line.

    with stablejit.disable_jit():      # jitted functions run their Python eagerly
        f(x)
    STABLEJIT_DEBUG_NANS=1 python train.py          # or
    stablejit.config.update("debug_nans", True)     # (also "debug_infs")

With debug_nans on, every eager op and every jitted call checks its floating-point
results; when a jitted call produced a NaN, its program runs again op by op on the
eager backend to find the first op that made one from NaN-free operands, and the error
names that primitive and the user's file, line and column (as JAX's jax_debug_nans).
Off by default: the checks read every result back to the host.
"""

from __future__ import annotations

import contextlib
import threading

import numpy as np

from . import config, tree
from .compiler.ir import Op
from .compiler.walk import walk
from .context import concrete_default
from .promotion import python_scalar_dtype
from .tensor import Tensor


class _State(threading.local):
    no_jit = 0  # disable_jit blocks entered in this thread
    inside = False  # this thread is running a jitted function the debug way


_state = _State()
# disable_jit blocks entered in all threads: while 0 (and no NaN/Inf check is on), no
# thread's jitted call needs active() (the native cached call reads it; fastcall.py)
jit_disabled = 0
_count_lock = threading.Lock()


def active() -> bool:
    """Whether jitted calls must take the debug path (disable_jit or a NaN/Inf check),
    and this thread is not already inside it. Asked on every jitted call."""
    return (_state.no_jit > 0 or config.debug_checks()) and not _state.inside


@contextlib.contextmanager
def disable_jit():
    """Within the block, jitted functions run as plain Python (eagerly, op by op), so
    print, breakpoints and Python control flow on values work inside them.

    Example:
        >>> @stablejit.jit
        ... def f(x):
        ...     print("x is", x)
        ...     return x + 1
        >>> with stablejit.disable_jit():
        ...     _ = f(snp.asarray(1.0))
        x is 1.0
        >>> _ = f(snp.asarray(1.0))
        x is Tensor<f32[] traced>
    """
    global jit_disabled
    with _count_lock:
        jit_disabled += 1
    _state.no_jit += 1
    try:
        yield
    finally:
        _state.no_jit -= 1
        with _count_lock:
            jit_disabled -= 1


def _bad(a: np.ndarray) -> str | None:
    if a.dtype.kind not in "fc":
        return None
    if config.debug_nans and np.isnan(a).any():
        return "nan"
    if config.debug_infs and np.isinf(a).any():
        return "inf"
    return None


def _first_bad(tensors) -> str | None:
    for t in tensors:
        if isinstance(t, Tensor) and t._backend.concrete:
            kind = _bad(np.asarray(t.numpy()))
            if kind:
                return kind
    return None


def _where(op: Op) -> str:
    return f" at {op.loc}" if op.loc.line else ""  # file:line:col


def call_jitted(jitted, args, kwargs):
    """A jitted call in a debug mode (see the module docstring)."""
    if getattr(_state, "no_jit", 0) > 0:
        return jitted.fn(*args, **kwargs)
    _state.inside = True
    try:
        out = jitted(*args, **kwargs)
    finally:
        _state.inside = False
    kind = _first_bad(tree.flatten(out)[0])
    if kind:
        _locate(jitted, args, kwargs, kind)
    return out


def _as_input(x, backend) -> Tensor:
    if isinstance(x, Tensor):
        return x if x._backend is backend else backend.adopt(x)
    if type(x) in (bool, int, float, complex):
        return backend.scalar(x, python_scalar_dtype(x))
    return backend.from_numpy(np.asarray(x))


def _locate(jitted, args, kwargs, kind: str) -> None:
    """Run the jitted function's program op by op on the eager backend and raise at the
    first op that makes a NaN (Inf) from operands without one."""
    fn, _, captured, *_ = jitted.trace(args, kwargs)
    _, dyn_args, dyn_kwargs = jitted._split(args, kwargs)
    backend = concrete_default()
    inputs = [_as_input(x, backend) for x in tree.flatten((dyn_args, dyn_kwargs))[0]]
    inputs += [_as_input(t, backend) for t in captured]
    name = getattr(jitted, "__name__", "f")

    def apply(op: Op, operands):
        outs = backend.apply(op.prim, tuple(operands), op.attrs, op.regions)
        if not _first_bad(operands) and _first_bad(outs):
            raise FloatingPointError(
                f"invalid value ({kind}) encountered in {op.prim.name}{_where(op)}, inside "
                f"jitted function {name}; its operands had none. Look at that line (a "
                f"division by zero, the log of a negative number, inf - inf ...).")
        return outs

    walk(fn, inputs, apply)
    raise FloatingPointError(f"invalid value ({kind}) in the result of jitted function "
                             f"{name}")


def check_op(prim, tensors, outs, where: str) -> None:
    """After an eager op: raise if it made a NaN (Inf) from operands without one."""
    if getattr(_state, "inside", False):
        return
    kind = _first_bad(outs)
    if kind and not _first_bad(tensors):
        raise FloatingPointError(f"invalid value ({kind}) encountered in {prim.name}{where}")
