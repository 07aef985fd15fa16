"""clear_caches (jax's name): forget every traced and compiled program held in memory."""

from __future__ import annotations

from . import compilation
from .jit import _ALL_JITTED  # every live jitted function (a weak set)


def clear_caches() -> None:
    """Empty every jitted function's table of traced signatures and the executable
    cache, so the next calls trace and compile again (the on-disk cache is kept; clear
    that with `stablejit cache clear`)."""
    for jitted in list(_ALL_JITTED):
        jitted.clear_cache()
    compilation.clear_memory_cache()


__all__ = ["clear_caches"]
