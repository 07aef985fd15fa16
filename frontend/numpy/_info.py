"""`__array_namespace_info__()`: what this namespace supports, per the array API's
inspection API (2024.12).

Devices here are what `asarray(..., device=)` and `to_device` accept: PJRT devices of
the default platform (each is an eager XLA backend), and the string "reference" for the
NumPy reference backend.
"""

from __future__ import annotations

from ..api import resolve_backend
from ..compiler import dtypes as dt
from ..context import concrete_default, current_backend
from ..platforms import default_platform
from ..promotion import DEFAULT_INT, default_complex, default_float
from ..runtime import client

_STANDARD = (dt.bool_, dt.int8, dt.int16, dt.int32, dt.int64, dt.uint8, dt.uint16, dt.uint32,
             dt.uint64, dt.float32, dt.float64, dt.complex64, dt.complex128)
_KIND_LETTERS = {"bool": "b", "signed integer": "i", "unsigned integer": "u",
                 "integral": "iu", "real floating": "f", "complex floating": "c",
                 "numeric": "iufc"}


def _platform_of(device) -> str | None:
    if device is None:
        b = concrete_default()
    elif isinstance(device, str) and device == "reference":
        return "reference"
    else:
        b = resolve_backend(device)
    return b.platform if b.device_buffers else "reference"


class Devices(tuple):
    """A tuple of devices; `devices + [None]` and `[None] + devices` give one too."""

    def __add__(self, other):
        return Devices(tuple(self) + tuple(other))

    def __radd__(self, other):
        return Devices(tuple(other) + tuple(self))


class Info:
    """The namespace's inspection object (see the array API's `__array_namespace_info__`)."""

    def capabilities(self) -> dict:
        # Both work on concrete tensors (eager and reference backends). While a function
        # is traced (jit, grad, vmap, a control-flow body) boolean masks and nonzero raise
        # MustCompileError, XLA's shapes being static: so the answer is False there, and
        # libraries that ask (array-api-extra's apply_where, isclose ...) take the path
        # they take for jax (where(mask, f(x), fill)) instead of masking.
        # 64 dimensions: NumPy's limit, which every transfer to or from the host meets.
        dynamic = current_backend().concrete
        return {"boolean indexing": dynamic, "data-dependent shapes": dynamic,
                "max dimensions": 64}

    def default_device(self):
        """The device new tensors go to: the current default backend's device (or
        "reference" when the reference backend is the default)."""
        b = concrete_default()
        return b.device if b.device_buffers else "reference"

    def devices(self) -> tuple:
        """The PJRT devices of the default platform, then "reference" (a tuple, as the
        array API's 2025.12 asks, that also concatenates with a list: code written for
        2024.12's list, such as SciPy 1.17's `devices() + [None]`, keeps working)."""
        return Devices((*client.devices(default_platform()), "reference"))


    def default_dtypes(self, *, device=None) -> dict:
        return {"real floating": default_float(), "complex floating": default_complex(),
                "integral": DEFAULT_INT, "indexing": DEFAULT_INT}

    def dtypes(self, *, device=None, kind=None) -> dict:
        """The standard's dtypes that work on `device`, optionally of one `kind` (a kind
        name or a tuple of them). float16 and bfloat16 also work everywhere, but are not
        part of the standard and are not listed. TPUs have no 64-bit floats."""
        platform = _platform_of(device)
        out = {}
        for d in _STANDARD:
            if platform == "tpu" and d in (dt.float64, dt.complex128):
                continue
            if kind is None or _matches(d, kind):
                out[d.name] = d
        return out


def _matches(d: dt.DType, kind) -> bool:
    if isinstance(kind, tuple):
        return any(_matches(d, k) for k in kind)
    if isinstance(kind, str):
        if kind not in _KIND_LETTERS:
            raise ValueError(f"unknown dtype kind {kind!r}; use one of "
                             f"{', '.join(map(repr, _KIND_LETTERS))}")
        return d.kind in _KIND_LETTERS[kind]
    return d is dt.dtype(kind)


def __array_namespace_info__() -> Info:
    return Info()
