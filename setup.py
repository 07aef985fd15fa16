"""The one thing pyproject.toml cannot declare: the C extension of the native cached
call (docs/native.md). optional=True: where it cannot be built (no compiler), the
install still succeeds and stablejit takes the Python path."""

import hashlib
from pathlib import Path

from setuptools import Extension, setup

SOURCE = "frontend/_native/fastcall.c"
# the source's digest, compiled in: stablejit/fastcall.py refuses a build of another
# source (a stale extension in an editable checkout) and takes the Python path
DIGEST = hashlib.sha256(Path(SOURCE).read_bytes().replace(b"\r\n", b"\n")).hexdigest()[:16]

setup(ext_modules=[Extension("stablejit._fastcall", [SOURCE], optional=True,
                             define_macros=[("SOURCE_DIGEST", f'"{DIGEST}"')])])
