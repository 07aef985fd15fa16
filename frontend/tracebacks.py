"""Traceback filtering: an error that leaves a public call (a jitted function, a
transformed one, a control-flow construct, a namespace function) loses stablejit's own
frames from its traceback, as JAX's traceback filtering does, so the user sees their
lines and the message (with its `(at file:line:col)` tail) unchanged.

A boundary catches the exception, rebuilds its traceback without the frames whose code
lives in stablejit's folders (errors.is_internal) and re-raises it with a bare `raise`,
which adds no frame. Nested boundaries filter again, which is harmless: filtering is
idempotent. The chained exceptions (`raise ... from`) are filtered too. Off switch:
STABLEJIT_TRACEBACK_FILTERING=off, or config.update("traceback_filtering", "off").

Boundaries cost nothing until an exception passes: hot entry points (jit's cached call,
the elementwise operators) hold an inline try/except, free in Python 3.11 when nothing
is raised; the namespaces' functions are wrapped once, at import (`wrap_namespace`).
"""

from __future__ import annotations

import functools
import types

from . import config
from .errors import is_internal

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


def api_boundary(fn):
    """fn as a public entry point: an exception leaving it is filtered."""
    @functools.wraps(fn)
    def boundary(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except Exception as e:
            filter_exception(e)
            raise
    boundary.__stablejit_boundary__ = True
    return boundary


def wrap_namespace(namespace: dict) -> None:
    """Make every public function of a namespace module (its globals) a boundary: the
    one place namespace calls are filtered. Classes, modules and constants stay."""
    for name, value in list(namespace.items()):
        if (not name.startswith("_") and isinstance(value, types.FunctionType)
                and not getattr(value, "__stablejit_boundary__", False)):
            namespace[name] = api_boundary(value)


def wrap_namespaces(*modules) -> None:
    """wrap_namespace over each module, and over the submodules a module holds as
    attributes (scipy.stats' distributions: stats.norm.pdf)."""
    for m in modules:
        wrap_namespace(vars(m))
        for value in list(vars(m).values()):
            if isinstance(value, types.ModuleType) and value.__name__.startswith(
                    m.__name__ + ".") and value not in modules:
                wrap_namespace(vars(value))
