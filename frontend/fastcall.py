"""The native cached call: Jitted.__call__ in C (the extension stablejit._fastcall, built
from frontend/_native/fastcall.c by `pip install`), or the Python one.

The C call takes only the cached case - positional tensors (or pytrees of them) whose
key is in the function's fast table - and calls the Python __call__ for everything
else, which decides and raises as it always did. STABLEJIT_NATIVE=0, or an install
where the extension could not be built, keeps the Python __call__ (docs/native.md).
"""

from __future__ import annotations

from . import config, debugging, native_build, tree, writes
from .compilation import Program
from .recorder import Pending, Recorder
from .signature import Entry
from .tensor import Tensor

_fastcall, unavailable = native_build.load("_fastcall", "fastcall.c")
if _fastcall is not None:
    try:  # the slots it reads: a class that lost one keeps the Python path
        _fastcall.init(Tensor, Entry, Program, writes, config, debugging, tree, Pending,
                       Recorder)
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
