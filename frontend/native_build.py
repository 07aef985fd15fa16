"""Finding a native extension of stablejit (docs/native.md): the module, or why the
Python path runs instead. setup.py compiles a digest of each extension's source into it;
a build of another source (a stale extension in an editable checkout) is refused."""

from __future__ import annotations

import hashlib
import importlib
from pathlib import Path

HEADERS = ("slots.h", "memo.h", "treedef.h")  # what the sources include, in setup.py's digest too


def source_digest(name: str) -> str | None:
    """The digest setup.py compiles into an extension, of its source `name` in _native/
    beside this module and the headers the sources include (a checkout; an install may
    not carry them)."""
    folder = Path(__file__).parent / "_native"
    try:
        text = b"".join((folder / f).read_bytes() for f in (name, *HEADERS))
    except OSError:
        return None
    return hashlib.sha256(text.replace(b"\r\n", b"\n")).hexdigest()[:16]


def load(module: str, source: str):
    """(the extension stablejit.<module> built from _native/<source>, None) or (None, why
    it cannot be used)."""
    try:
        ext = importlib.import_module(f"stablejit.{module}")
    except ImportError as e:  # no compiler at install time: the Python path
        return None, f"stablejit.{module} was not built ({e})"
    if source_digest(source) not in (None, getattr(ext, "SOURCE_DIGEST", None)):
        return None, (f"stablejit.{module} was built from another {source} than the one "
                      f"beside it (stale)")
    return ext, None
