"""The lazy recorder's hot path in C (the extension stablejit._recorder, built from
frontend/_native/recorder.c by `pip install`), or recorder.Recorder's Python methods.

Six parts: Recorder.apply / apply_scalar / apply_broadcast / execute in C; dispatch's
fast binds and bind (FastBind); Tensor's arithmetic operators (`x * 2.0`, `x + b`:
numpy/_elementwise's binary functions), matmul's common case, basic indexing and the
views x.T / transpose / reshape as FastOp objects that record an op on a lazy backend
or grad tape in C without entering Python at all, and call the Python function for
anything else; a composite's cached call (composite_call, and one_program's functions
as CompositeFn objects that reach it without a Python frame); and a graph's structural
key (recorder.structural_entries), live values (recorder.live_pending) and grad's
differentiated leaves (recorder.tape_leaves); grad's call on a tape (tape_one:
autodiff._tape_one's steps around the user's function). The operators
and fast binds also run an eager op on a device from C: its cached one-op program out of
the device's op table (init_eager).

The C methods take the common case - an elementwise op or a reduction on values of the
current graph whose shape rule has run before, or an op of a tensor and a Python number -
and hand every other step to the Python method or helper that does it, which decides and
raises as it always did. Both paths write the same tape. STABLEJIT_NATIVE=0, an install
where the extension could not be built, or a CPython it does not support (before 3.11,
free-threaded) keeps the Python methods (docs/native.md).
"""

from __future__ import annotations

import threading

from . import (
    backends,
    compilation,
    config,
    errors,
    native_build,
    precision,
    promotion,
    recorder,
    writes,
)
from .compiler.dtypes import DType
from .compiler.ir import EMPTY_ATTRS, TensorType
from .compiler.primitives import shape_ops
from .recorder import _INLINE, _SCALAR, PARAM, Pending, Recorder
from .runtime import buffers
from .tensor import Tensor

_PYTHON = {name: Recorder.__dict__[name]
           for name in ("apply", "apply_scalar", "apply_broadcast", "execute")}

_recorder, unavailable = native_build.load("_recorder", "recorder.c")
if _recorder is not None and not getattr(_recorder, "SUPPORTED", 0):
    _recorder, unavailable = None, ("stablejit._recorder needs CPython 3.11 or later, "
                                    "with the GIL")
_NATIVE: dict = {}
if _recorder is not None:
    try:  # the slots it reads: a class that lost one keeps the Python path
        apply, apply_scalar = _recorder.init(
            Tensor, Pending, errors._CODE_INTERNAL, errors.is_internal, _SCALAR, EMPTY_ATTRS,
            _PYTHON["apply"], _PYTHON["apply_scalar"], Recorder._slot, Recorder._add,
            Recorder._results, backends)
        _recorder.init_state(Recorder)
        _recorder.init_params(buffers.Buffer, PARAM, Recorder._input, Recorder._param)
        _recorder.init_eager(backends.XlaBackend, compilation.Program, TensorType,
                             backends._BROADCAST)
        _NATIVE = {"apply": apply, "apply_scalar": apply_scalar,
                   "apply_broadcast": _recorder.broadcast_method(
                       _PYTHON["apply_broadcast"], Recorder._broadcast,
                       shape_ops.trailing_broadcast, shape_ops.broadcast_in_dim),
                   "execute": _recorder.execute_method(
                       _PYTHON["execute"], Recorder._tensors, _INLINE)}
    except (TypeError, AttributeError) as e:
        _recorder, unavailable = None, f"stablejit._recorder cannot read {e}"


def available() -> bool:
    """Whether this install has the native recorder (whatever STABLEJIT_NATIVE says)."""
    return _recorder is not None


_on = False  # whether the C methods and operators are installed
_world: tuple | None = None  # (LazyBackend, context._state): see connect


def connect(lazy_cls, state) -> None:
    """What the operators read to ask dispatch.fast's question in C: the lazy backend
    class and the thread-local backend stack (context.py hands them over: both modules
    are above this one)."""
    global _world
    _world = (lazy_cls, state)


def install(native: bool | None = None) -> bool:
    """Make Recorder's apply and apply_scalar and Tensor's arithmetic operators the C
    ones, or the Python ones again; `native` None reads STABLEJIT_NATIVE. Returns whether
    the C ones are on. (numpy/_methods calls it again once it has made the operators.)"""
    global _on
    if native is None:
        native = config.native()
    native = native and _recorder is not None
    for name, python in _PYTHON.items():
        setattr(Recorder, name, _NATIVE[name] if native else python)
    recorder.structural_entries = _recorder.structural_entries if native \
        else recorder._python_structural_entries
    recorder.live_pending = _recorder.live_pending if native \
        else recorder._python_live_pending
    recorder.same_tape = _recorder.same_tape if native else recorder._python_same_tape
    recorder.flush_last = _recorder.flush_last if native else recorder._python_flush_last
    recorder.tape_leaves = _recorder.tape_leaves if native else recorder._python_tape_leaves
    recorder.new_lock = _recorder.RLock if native else threading.RLock
    _on = native
    _install_operators(native)
    if _recorder is not None:
        _recorder.set_binds(native)
    return native


def binds(bind_unary, bind_binary, bind_scalar, bind) -> tuple:
    """dispatch's fast binds and its general bind, in C around the Python ones where the
    extension is built (they record on a lazy backend or grad tape while install() has
    the native path on, and call the Python function otherwise), else the Python ones."""
    if _recorder is None:
        return bind_unary, bind_binary, bind_scalar, bind
    return tuple(_recorder.fast_bind(f, arity) for arity, f in
                 enumerate((bind_unary, bind_binary, bind_scalar, bind), 1))


def composite_call(miss, traced_cls, run):
    """composite.one_program's cached call in C (recorder.c's composite_call, called
    (done, args, kwargs)), or None where the extension is not built. It answers `miss`
    for every call it does not take, and for all of them while the Python path is on."""
    if _recorder is None:
        return None
    _recorder.init_composite(miss, traced_cls, run, backends.XlaBackend, promotion,
                             precision, DType)
    return _recorder.composite_call


def view_op(python, kind: int, prim, table: dict, forward, backward, layout):
    """A namespace function that returns a view (numpy/_views: 1 transpose, 2 reshape)
    as a gated FastOp (recorder.c's fastop_view: a base's common case bound and made a
    view in C; the rest the Python function's), or the function itself where the
    extension is not built or the Python path was on at import."""
    if not _on:
        return python
    return _recorder.FastOp(python, prim, "", False, False, gated=True, view=kind,
                            view_fns=(table, forward, backward, layout))


def composite_fn(g, done: dict):
    """one_program's `g` as a C callable (recorder.c's CompositeFn: its cached call keyed
    and recorded or run with no Python frame; g for the rest), or g itself where the
    extension is not built."""
    return g if _recorder is None else _recorder.composite_fn(g, done)


def tape_one(autodiff_globals: dict, grad_tape_globals: dict, tape_backend, runs_on,
             flatten, unflatten, leaf, needs_trace):
    """grad's first try, autodiff._tape_one, in C (recorder.c's tape_one), or None where
    the extension is not built. C reads autodiff's _python_tape_one (for any call it does
    not take, and all of them while the Python path is on), _tape_results, _tape_finish
    (for what it does not finish itself) and tape_backend from the module at each call,
    as the Python path does, and grad_tape's _last (the last tape's derivative)."""
    if _recorder is None:
        return None
    _recorder.init_grad(autodiff_globals, grad_tape_globals, tape_backend, runs_on, flatten,
                        unflatten, leaf, needs_trace)
    return _recorder.tape_one


def connect_tape(tape_cls) -> None:
    """grad's GradTape records in C too: its values are its pending values while it
    records (its own _slot rule; grad_tape.py hands the class over)."""
    if _recorder is not None:
        _recorder.init_tape(tape_cls)


def _install_operators(native: bool) -> None:
    if native:
        if _world is None:
            native = False  # (not connected yet: context.py installs them again)
        else:
            _recorder.init_operators(*_world, writes, config)
    for name, op in list(vars(Tensor).items()):
        python = op.python if _recorder is not None and type(op) is _recorder.FastOp else op
        if getattr(python, "_native_op", None) is not None:
            setattr(Tensor, name, _fast_op(python) if native else python)
        elif getattr(python, "_native_index", None) is not None:  # __getitem__
            if native:
                _recorder.init_views(*python._native_index)
            setattr(Tensor, name, _recorder.FastOp(python, None, "", False, False, indexing=True)
                    if native else python)


def _fast_op(python, gated: bool = False):
    """The FastOp of a Python operator or namespace function marked with _native_op
    (numpy/_elementwise, numpy/_methods): (prim, dtype kinds, inexact), and whether it
    is reflected (__radd__) or unary."""
    prim, kinds, inexact = python._native_op
    extra = {} if getattr(python, "_dot_attrs", None) is None else \
        {"dot_attrs": python._dot_attrs}  # matmul: its common case (numpy/_products)
    return _recorder.FastOp(python, prim, kinds, inexact, getattr(python, "_reflects", False),
                            getattr(python, "_unary", False), gated=gated, **extra)


def namespace_ops(namespace: dict) -> None:
    """The namespace's elementwise functions (stablejit.numpy.add, .tanh ...) as FastOps
    where the extension is built: `snp.tanh(x)` on a float tensor then reaches C with no
    Python frame (the Python function's first branch: a bind of a real float tensor, or
    of two tensors of one type, or of a tensor and a Python number), and any other call
    is the Python function's. They stay in place while install() switches paths and ask
    its switch on each call (gated), so a function imported by name follows it too.
    With the Python path on at import (STABLEJIT_NATIVE=0), the functions stay Python."""
    if not _on:
        return
    for name in namespace.get("__all__", ()):
        f = namespace.get(name)
        if getattr(f, "_native_op", None) is None or type(f) is _recorder.FastOp:
            continue
        op = _NAMESPACE_OPS.get(f)  # (aliases, acos and arccos, stay one function)
        if op is None:
            op = _NAMESPACE_OPS[f] = _fast_op(f, gated=True)
        namespace[name] = op


_NAMESPACE_OPS: dict = {}  # Python function -> its FastOp


def installed() -> bool:
    """Whether Recorder's methods and Tensor's operators are the C ones now."""
    return _on
