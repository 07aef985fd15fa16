"""The one thing pyproject.toml cannot declare: the C extensions of the native paths
(docs/native.md): the cached jit call and the lazy recorder. optional=True: where one
cannot be built (no compiler), the install still succeeds and stablejit takes the Python
path."""

import hashlib
from pathlib import Path

from setuptools import Extension, setup

# the headers the sources include (frontend/native_build.py's HEADERS)
HEADERS = ["frontend/_native/slots.h", "frontend/_native/memo.h",
           "frontend/_native/treedef.h"]


def native(module: str, source: str) -> Extension:
    # the digest of the source and the headers, compiled in: stablejit refuses a build of
    # other sources (a stale extension in an editable checkout) and takes the Python path
    text = b"".join(Path(f).read_bytes() for f in [source, *HEADERS])
    digest = hashlib.sha256(text.replace(b"\r\n", b"\n")).hexdigest()[:16]
    return Extension(module, [source], optional=True, depends=HEADERS,
                     define_macros=[("SOURCE_DIGEST", f'"{digest}"')])


setup(ext_modules=[native("stablejit._fastcall", "frontend/_native/fastcall.c"),
                   native("stablejit._recorder", "frontend/_native/recorder.c")])
