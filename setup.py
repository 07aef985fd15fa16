"""The one thing pyproject.toml cannot declare: the C extensions of the native paths
(docs/native.md): the cached jit call and the lazy recorder. optional=True: where one
cannot be built (no compiler), the install still succeeds and stablejit takes the Python
path."""

import hashlib
from pathlib import Path

from setuptools import Extension, setup

HEADER = "frontend/_native/slots.h"  # shared by both sources


def native(module: str, source: str) -> Extension:
    # the digest of the source and the header, compiled in: stablejit refuses a build of
    # other sources (a stale extension in an editable checkout) and takes the Python path
    text = Path(source).read_bytes() + Path(HEADER).read_bytes()
    digest = hashlib.sha256(text.replace(b"\r\n", b"\n")).hexdigest()[:16]
    return Extension(module, [source], optional=True, depends=[HEADER],
                     define_macros=[("SOURCE_DIGEST", f'"{digest}"')])


setup(ext_modules=[native("stablejit._fastcall", "frontend/_native/fastcall.c"),
                   native("stablejit._recorder", "frontend/_native/recorder.c")])
