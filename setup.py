"""The one thing pyproject.toml cannot declare: the C extension of the native cached
call (docs/native.md). optional=True: where it cannot be built (no compiler), the
install still succeeds and stablejit takes the Python path."""

from setuptools import Extension, setup

setup(ext_modules=[Extension("stablejit._fastcall", ["frontend/_native/fastcall.c"],
                             optional=True)])
