"""The native cached call: Jitted.__call__ in C (the extension stablejit._fastcall, built
from frontend/_native/fastcall.c by `pip install`), or the Python one.

The C call takes only the cached case - positional tensors (or pytrees of them) whose
key is in the function's fast table - and calls the Python __call__ for everything
else, which decides and raises as it always did. STABLEJIT_NATIVE=0, or an install
where the extension could not be built, keeps the Python __call__ (docs/native.md).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from . import config, debugging, tree, writes
from .compilation import Program
from .signature import Entry
from .tensor import Tensor


def source_digest(name: str = "fastcall.c") -> str | None:
    """The digest setup.py compiles into an extension, of its source `name` in _native/
    beside this module (a checkout; an install may not carry it)."""
    try:
        text = (Path(__file__).parent / "_native" / name).read_bytes()
    except OSError:
        return None
    return hashlib.sha256(text.replace(b"\r\n", b"\n")).hexdigest()[:16]


unavailable = None  # why the native call is not there, if it is not
try:
    from . import _fastcall
except ImportError as e:  # no compiler at install time: the Python path
    _fastcall, unavailable = None, f"stablejit._fastcall was not built ({e})"
if _fastcall is not None and source_digest() not in (
        None, getattr(_fastcall, "SOURCE_DIGEST", None)):
    _fastcall, unavailable = None, ("stablejit._fastcall was built from another "
                                    "fastcall.c than the one beside it (stale)")
if _fastcall is not None:
    try:  # the slots it reads: a class that lost one keeps the Python path
        _fastcall.init(Tensor, Entry, Program, writes, config, debugging, tree)
    except (TypeError, AttributeError) as e:
        _fastcall, unavailable = None, f"stablejit._fastcall cannot read {e}"


def available() -> bool:
    """Whether this install has the native cached call (whatever STABLEJIT_NATIVE says);
    `unavailable` says why not."""
    return _fastcall is not None


def install(cls, native: bool | None = None) -> bool:
    """Make cls.__call__ the native call around its Python __call__, or the Python one
    again; `native` None reads STABLEJIT_NATIVE. Returns whether the native one is on."""
    python = python_call(cls)
    if native is None:
        native = config.native()
    native = native and _fastcall is not None
    cls.__call__ = _fastcall.FastCall(python) if native else python
    return native


def python_call(cls):
    """cls's Python __call__, whichever is installed."""
    call = cls.__dict__["__call__"]
    return call.python if _fastcall is not None and type(call) is _fastcall.FastCall \
        else call
