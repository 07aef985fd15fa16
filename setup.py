"""The one thing pyproject.toml cannot declare: the C extensions of the native paths
(docs/native.md): the cached jit call and the lazy recorder. optional=True: where one
cannot be built (no compiler), the install still succeeds and stablejit takes the Python
path."""

import hashlib
from pathlib import Path

from setuptools import Extension, setup


def native(module: str, source: str) -> Extension:
    # the source's digest, compiled in: stablejit refuses a build of another source (a
    # stale extension in an editable checkout) and takes the Python path
    digest = hashlib.sha256(Path(source).read_bytes().replace(b"\r\n", b"\n")).hexdigest()[:16]
    return Extension(module, [source], optional=True,
                     define_macros=[("SOURCE_DIGEST", f'"{digest}"')])


setup(ext_modules=[native("stablejit._fastcall", "frontend/_native/fastcall.c"),
                   native("stablejit._recorder", "frontend/_native/recorder.c")])
