"""User-facing errors, each naming the user's source line, and how to find that line."""

from __future__ import annotations

import os
import sys

from .compiler.ir import UNKNOWN, Location

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_OWN_DIRS = tuple(os.path.join(_PACKAGE_DIR, d) + os.sep for d in ("frontend", "compiler",
                                                                    "runtime"))
_SKIP_CACHE: dict[str, bool] = {}


def _is_internal(filename: str) -> bool:
    r = _SKIP_CACHE.get(filename)
    if r is None:
        path = os.path.abspath(filename)
        r = path.startswith(_OWN_DIRS) or "/stablejit/" in path.replace("\\", "/") and (
            "site-packages" in path) or filename.startswith("<frozen")
        _SKIP_CACHE[filename] = r
    return r


# code object -> (line, column) of each bytecode instruction (column 1-based; 0: unknown)
_COLUMNS: dict = {}


def _position(code, lasti: int) -> tuple[int, int]:
    """(line, column) of the instruction at offset `lasti`: the line as frame.f_lineno
    gives it (co_lines), the column of the call (co_positions: Python 3.11+ records one
    per instruction, so two calls on one line get two locations). Computed per code
    object once, when a location is first needed: recording an op keeps only the offset."""
    table = _COLUMNS.get(code)
    if table is None:
        lines = {}
        for start, end, line in code.co_lines():
            for offset in range(start, end, 2):
                lines[offset // 2] = line
        positions = getattr(code, "co_positions", None)
        cols = [(p[2] + 1 if p[2] is not None else 0) for p in positions()] \
            if positions else []
        n = max(len(cols), max(lines, default=-1) + 1)
        table = tuple((lines.get(i) or code.co_firstlineno, cols[i] if i < len(cols) else 0)
                      for i in range(n))
        if len(_COLUMNS) > 4096:
            _COLUMNS.clear()
        _COLUMNS[code] = table
    i = lasti // 2
    return table[i] if 0 <= i < len(table) else (code.co_firstlineno, 0)


# code object -> whether it is stablejit's own (user_site asks for every recorded op)
_CODE_INTERNAL: dict = {}


def user_site(skip: int = 1) -> tuple | None:
    """(code, instruction offset) of the first stack frame outside stablejit, or None:
    cheaper than user_location, for recorders that need the Location only later
    (location_at makes it, line and column from the offset). `skip`: how many frames up
    to start (1: the caller), for hot paths whose nearest callers are stablejit's by
    construction."""
    f = sys._getframe(skip)
    known = _CODE_INTERNAL
    while f is not None:
        code = f.f_code
        internal = known.get(code)
        if internal is None:
            if len(known) > 4096:
                known.clear()
            internal = known[code] = _is_internal(code.co_filename)
        if not internal:
            return code, f.f_lasti
        f = f.f_back
    return None


def is_internal(code) -> bool:
    """Whether a code object is stablejit's own: a frame that user locations skip and
    filtered tracebacks leave out (frontend/tracebacks.py)."""
    internal = _CODE_INTERNAL.get(code)
    if internal is None:
        if len(_CODE_INTERNAL) > 4096:
            _CODE_INTERNAL.clear()
        internal = _CODE_INTERNAL[code] = _is_internal(code.co_filename)
    return internal


_LOCATIONS: dict = {}  # site -> its Location: a traced loop body asks for the same ones


def location_at(site: tuple | None) -> Location:
    if site is None:
        return UNKNOWN
    loc = _LOCATIONS.get(site)
    if loc is None:
        code, lasti = site
        line, col = _position(code, lasti)
        loc = Location(code.co_filename, line, col, code.co_name)
        if len(_LOCATIONS) > 65536:
            _LOCATIONS.clear()
        _LOCATIONS[site] = loc
    return loc


def user_location() -> Location:
    """The first stack frame outside stablejit: where the user wrote the operation."""
    return location_at(user_site())


def at_user_line(message: str) -> str:
    loc = user_location()
    if not loc.line:
        return message
    col = f":{loc.col}" if loc.col else ""
    return f"{message}\n  (at {loc.file}:{loc.line}{col})"


def int_out_of_range(value: int, dtype_name: str, low: int, high: int) -> OverflowError:
    """A Python int that the dtype it is made into cannot hold (jax: "Python int ... too
    large to convert to int64"), with the range and what to do."""
    hint = ("pass it as a float (float(x)), or as np.uint64(x) if it is below 2**64"
            if dtype_name == "int64" and value > high else
            "pass it as a float (float(x)), or ask for a dtype that holds it")
    return OverflowError(at_user_line(
        f"Python int {value} is too {'large' if value > high else 'small'} to convert to "
        f"{dtype_name}, which holds {low} to {high}; {hint}"))


class StablejitError(Exception):
    """Base of stablejit's own errors."""


class TracerBoolConversionError(StablejitError, TypeError):
    pass


class TracerConversionError(StablejitError, TypeError):
    pass


class EscapedTracerError(StablejitError, RuntimeError):
    pass


class MustCompileError(StablejitError, ValueError):
    """An operation inside jit would have an output shape that depends on data."""


class DeviceMismatchError(StablejitError, ValueError):
    pass


class DeletedTensorError(StablejitError, RuntimeError):
    pass


def bool_of_traced(what: str) -> TracerBoolConversionError:
    return TracerBoolConversionError(at_user_line(
        f"{what} needs a concrete Python bool, but this value is traced (inside "
        f"stablejit.jit or a cond/switch/loop body): its value is only known when the "
        f"compiled program runs. For an elementwise choice use stablejit.numpy.where(cond, "
        f"x, y); for branching use stablejit.cond(pred, true_fn, false_fn, *operands) or "
        f"stablejit.switch(index, branches, *operands); for loops stablejit.fori_loop, "
        f"stablejit.while_loop or stablejit.scan; "
        f"or, if this value is a setting rather than data, pass it as a static argument "
        f"(jit(f, static_argnums=...))."))


def conversion_of_traced(what: str) -> TracerConversionError:
    return TracerConversionError(at_user_line(
        f"{what} needs a concrete value, but this tensor is traced inside stablejit.jit "
        f"and has no value until the compiled program runs. Return it from the jitted "
        f"function and convert it outside, or pass the input as a static argument "
        f"(jit(f, static_argnums=...)) if it is a setting rather than data."))
