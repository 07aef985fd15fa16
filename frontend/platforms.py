"""Choosing the platform: a preference list, overridable by STABLEJIT_PLATFORM."""

from __future__ import annotations

import os

from .runtime import client as rt_client

DEFAULT_PREFERENCE = ("tpu", "cuda", "rocm", "host")
_chosen: str | None = None


def set_default_platform(preference) -> str:
    """Pick the first available platform of `preference` (a name or a list of names)
    as the default for new tensors and jit; returns the one chosen."""
    global _chosen
    from . import dispatch
    from .backends import XlaBackend

    names = [preference] if isinstance(preference, str) else list(preference)
    tried = []
    for name in names:
        if rt_client.is_available(name):
            _chosen = name
            dispatch.set_global_default(XlaBackend.for_platform(name))
            return name
        tried.append(name)
    raise rt_client.PlatformError(f"none of the platforms {tried} is available; "
                                  f"'host' always is")


def default_platform() -> str:
    """The first available of STABLEJIT_PLATFORM (a name or comma-separated preference
    list) if set, else of DEFAULT_PREFERENCE (accelerators first, as jax does)."""
    global _chosen
    if _chosen is None:
        env = os.environ.get("STABLEJIT_PLATFORM")
        names = [n.strip() for n in env.split(",")] if env else list(DEFAULT_PREFERENCE)
        for name in names:
            if rt_client.is_available(name):
                _chosen = name
                break
        else:
            raise rt_client.PlatformError(
                f"STABLEJIT_PLATFORM={env!r}: none of these platforms is available")
    return _chosen
