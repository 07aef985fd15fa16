"""Traceback filtering: an error that leaves a public call (a jitted function, a
transformed one, a control-flow construct, a namespace function) loses stablejit's own
frames from its traceback, as JAX's traceback filtering does, so the user sees their
lines and the message (with its `(at file:line:col)` tail) unchanged.

A boundary catches the exception, rebuilds its traceback without the frames whose code
lives in stablejit's folders (errors.is_internal) and re-raises it with a bare `raise`,
which adds no frame. Nested boundaries filter again, which is harmless: filtering is
idempotent. The chained exceptions (`raise ... from`) are filtered too. Off switch:
STABLEJIT_TRACEBACK_FILTERING=off, or config.update("traceback_filtering", "off").

The hot entry points (jit's call, the operators, x[i], the methods) hold an inline
try/except, free in Python 3.11 until something is raised; the namespaces' functions are
wrapped once, at import (`wrap_namespace`): one more Python frame, ~0.07 us a call.

That wrapper is also where a composed library function's results follow its inputs
(`follow_boundary`, ~0.06 us more): called with tensors of a backend other than the
current default (the reference backend, another device), it runs with that backend as
the default, so the constants it makes inside (eye, arange, a Python bool predicate)
join its inputs and the result stays where the inputs are, as a committed jax array's
would.
"""

from __future__ import annotations

import functools
import types

from . import config, context
from .errors import is_internal
from .tensor import Tensor

NOTE = ("(stablejit left its internal frames out of this traceback; "
        "STABLEJIT_TRACEBACK_FILTERING=off or "
        "stablejit.config.update('traceback_filtering', 'off') shows them)")


def filter_traceback(tb: types.TracebackType | None) -> types.TracebackType | None:
    """tb without the entries of stablejit's own frames."""
    kept = []
    while tb is not None:
        if not is_internal(tb.tb_frame.f_code):
            kept.append(tb)
        tb = tb.tb_next
    out = None
    for t in reversed(kept):
        out = types.TracebackType(out, t.tb_frame, t.tb_lasti, t.tb_lineno)
    return out


def _has_internal(tb) -> bool:
    while tb is not None:
        if is_internal(tb.tb_frame.f_code):
            return True
        tb = tb.tb_next
    return False


def filter_exception(e: BaseException) -> None:
    """Drop stablejit's frames from e's traceback and from those of the exceptions it
    chains to (in place), unless filtering is off. Called in an `except` block at a
    public boundary, which then re-raises with a bare `raise`."""
    if not config.traceback_filtering_on():
        return
    seen: set[int] = set()
    x, top = e, True
    while x is not None and id(x) not in seen:
        seen.add(id(x))
        if _has_internal(x.__traceback__):
            x.with_traceback(filter_traceback(x.__traceback__))
            if top and NOTE not in getattr(x, "__notes__", ()):
                x.add_note(NOTE)
        x, top = x.__cause__ or x.__context__, False


def api_boundary(fn, like=None):
    """fn as a public entry point: an exception leaving it is filtered. `like`: the
    function whose name, docstring and signature the entry point shows (default fn);
    a transformation made per call (grad(loss) in a training step) passes the user's
    function here rather than wrapping fn in functools.wraps first (one metadata copy,
    ~1 us, instead of two)."""
    def boundary(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except Exception as e:
            filter_exception(e)
            raise
    _wraps(boundary, fn if like is None else like)
    boundary.__stablejit_boundary__ = True
    return boundary


def _wraps(wrapper, wrapped) -> None:
    """functools.update_wrapper(wrapper, wrapped), its steps written out for a plain
    function (every attribute there: 0.6 us, not 1.3, for grad(loss) made each step)."""
    if type(wrapped) is not types.FunctionType:
        functools.update_wrapper(wrapper, wrapped)
        return
    wrapper.__module__, wrapper.__name__ = wrapped.__module__, wrapped.__name__
    wrapper.__qualname__, wrapper.__doc__ = wrapped.__qualname__, wrapped.__doc__
    wrapper.__annotations__ = wrapped.__annotations__
    if wrapped.__dict__:
        wrapper.__dict__.update(wrapped.__dict__)
    wrapper.__wrapped__ = wrapped


def _first_backend(values):
    """The backend of the first tensor among `values` (or in a list or tuple among them:
    a scan's carry, concatenate's arrays)."""
    for a in values:
        t = type(a)
        if t is Tensor:
            return a._backend
        if t is tuple or t is list:
            for v in a:
                if type(v) is Tensor:
                    return v._backend
    return None


def follow_boundary(fn):
    """api_boundary, and fn runs with its inputs' backend as the default (module doc)
    when that is concrete and not the current default. The common case, inputs on the
    global default, costs one loop step and two reads (~0.1 us over api_boundary)."""
    @functools.wraps(fn)
    def boundary(*args, **kwargs):
        try:
            # (the first argument a tensor, the common case, read without a call)
            b = args[0]._backend if args and type(args[0]) is Tensor else _first_backend(args)
            if b is None and kwargs:
                b = _first_backend(kwargs.values())
            if b is None or b is context._global_default or not b.concrete \
                    or b is context.current_backend():
                return fn(*args, **kwargs)
            with context.using_backend(b):
                return fn(*args, **kwargs)
        except Exception as e:
            filter_exception(e)
            raise
    boundary.__stablejit_boundary__ = True
    return boundary


def wrap_namespace(namespace: dict, follow=lambda f: False, only=lambda f: True) -> None:
    """Make every public function of a namespace module (the names of its globals'
    __all__) for which `only(f)` holds a boundary: the one place namespace calls are
    filtered; those for which `follow(f)` holds also run where their inputs are. Only
    __all__'s names: a module's globals are also its own code's, whose calls to its
    helpers stay plain."""
    for name in namespace.get("__all__", ()):
        value = namespace.get(name)
        # (a function the native recorder calls from C - a FastOp, a one_program's
        # CompositeFn - keeps its C path: the boundary goes around the Python function
        # it calls for every other call, recorder_native's with_python)
        native = hasattr(type(value), "with_python")
        python = value.python if native else value
        if (native or isinstance(value, types.FunctionType)) and only(python) and not \
                getattr(python, "__stablejit_boundary__", False):
            boundary = _BOUNDARIES.get(value)  # aliases (acos, arccos) stay one function
            if boundary is None:
                boundary = (follow_boundary if follow(python) else api_boundary)(python)
                boundary = _BOUNDARIES[value] = value.with_python(boundary) if native \
                    else boundary
            namespace[name] = boundary


_BOUNDARIES: dict = {}  # function -> its boundary, one per function over all namespaces


def wrap_namespaces(*modules, follow=lambda f: False) -> None:
    """wrap_namespace over each module, and over the public submodules a module holds
    as attributes (scipy.stats' distributions: stats.norm.pdf)."""
    for m in modules:
        wrap_namespace(vars(m), follow)
        for name, value in list(vars(m).items()):
            if (isinstance(value, types.ModuleType) and not name.startswith("_")
                    and value.__name__.startswith(m.__name__ + ".") and value not in modules):
                wrap_namespace(vars(value), follow)
