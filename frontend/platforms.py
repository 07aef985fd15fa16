"""Choosing the platform: a preference list, overridable by STABLEJIT_PLATFORM."""

from __future__ import annotations

import logging

from . import config
from .runtime import client as rt_client

# scripts set client options through the environment; config reads it
rt_client.environment_options = config.client_options

log = logging.getLogger("stablejit")
DEFAULT_PREFERENCE = ("tpu", "cuda", "rocm", "host")
_chosen: str | None = None


def choose(preference, *, verbose: bool = False) -> str:
    """Pick the first available platform of `preference` (a name or a list of names,
    e.g. ["tpu", "cuda", "rocm", "host"]) as the default platform;
    returns (and, with verbose=True, prints) the one chosen and why the ones before it
    were passed over. Call it at the top of a script, before creating tensors."""
    global _chosen
    names = [preference] if isinstance(preference, str) else list(preference)
    skipped = []
    for name in names:
        try:
            rt_client.get_client(name)
        except rt_client.PlatformError as e:
            if name not in rt_client.PLATFORMS:
                raise
            skipped.append(f"{name} ({str(e).split(' (')[0].split(': ')[-1]})")
            continue
        _chosen = name
        msg = f"stablejit: default platform is {name}" + (
            f"; not available: {', '.join(skipped)}" if skipped else "")
        log.info(msg)
        if verbose:
            print(msg)
        return name
    raise rt_client.PlatformError(f"none of the platforms {names} is available; add 'host' "
                                  f"(always available) to the list")


def default_platform() -> str:
    """The first available of STABLEJIT_PLATFORM (a name or comma-separated preference
    list) if set, else of DEFAULT_PREFERENCE (accelerators first, as jax does)."""
    global _chosen
    if _chosen is None:
        env = config.platform_setting()
        names = list(config.platforms() or DEFAULT_PREFERENCE)
        for name in names:
            if rt_client.is_available(name):
                _chosen = name
                break
        else:
            raise rt_client.PlatformError(
                f"STABLEJIT_PLATFORM={env!r}: none of these platforms is available"
                if env else f"none of the platforms {names} is available")
    return _chosen
