"""jax.experimental's paths, for code ported from jax: stablejit.experimental.shard_map,
and the x64 context managers `enable_x64()` / `disable_x64()`."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from .. import config


@contextlib.contextmanager
def enable_x64(new_val: bool = True) -> Iterator[None]:
    """Turn x64 mode on (or set it to `new_val`) inside the block, as
    jax.experimental.enable_x64: the default float is float64 and the default complex
    complex128 there (`config.update("jax_enable_x64", new_val)` for the block; the mode
    before it comes back after). The mode is one setting for the whole process, not per
    thread as jax's was.

        >>> import stablejit.numpy as snp
        >>> from stablejit.experimental import enable_x64
        >>> with enable_x64():
        ...     print(snp.zeros(2).dtype, snp.mean(snp.arange(4)).dtype)
        float64 float64
        >>> print(snp.zeros(2).dtype)
        float32
    """
    before = config.enable_x64
    config.update("enable_x64", new_val)
    try:
        yield
    finally:
        config.update("enable_x64", before)


def disable_x64() -> contextlib.AbstractContextManager[None]:
    """x64 mode off inside the block (the default float is float32), as
    jax.experimental.disable_x64."""
    return enable_x64(False)


__all__ = ["disable_x64", "enable_x64"]
