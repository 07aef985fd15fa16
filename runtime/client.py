"""PJRT clients, one per platform, shared with jax when jax runs in the same process.

Platform names are stablejit's: host, cuda, rocm, tpu (jax calls host "cpu").
Clients are created lazily; options given to `configure()` apply when a client is
created, and setting them after that raises instead of being silently ignored.
"""

from __future__ import annotations

import os
import sys
import threading

PLATFORMS = ("host", "cuda", "rocm", "tpu")
_PJRT_NAME = {"host": "cpu", "cuda": "cuda", "rocm": "rocm", "tpu": "tpu"}

_lock = threading.Lock()
_clients: dict[str, object] = {}
_options: dict[str, dict] = {p: {} for p in PLATFORMS}


class PlatformError(RuntimeError):
    """A platform was asked for that is not installed or cannot start."""


def _check(platform: str) -> str:
    if platform not in PLATFORMS:
        raise PlatformError(f"unknown platform {platform!r}; stablejit knows "
                            f"{', '.join(PLATFORMS)}")
    return platform


def configure(platform: str, *, default_device_id: int | None = None,
              preallocate: bool | None = None, memory_fraction: float | None = None) -> None:
    """Set client options for a platform before its client is first used."""
    _check(platform)
    with _lock:
        if platform in _clients or _jax_has_client(platform):
            raise PlatformError(
                f"the {platform} client already exists (created by an earlier operation, or "
                f"by jax in this process), so its options can no longer change; call "
                f"stablejit.configure_client({platform!r}, ...) at the top of the program, "
                f"before the first operation on that platform")
        if memory_fraction is not None and not 0.0 < memory_fraction <= 1.0:
            raise ValueError(f"memory_fraction must be in (0, 1], not {memory_fraction}")
        if default_device_id is not None and default_device_id < 0:
            raise ValueError(f"default_device_id must be >= 0, not {default_device_id}")
        given = {"default_device_id": default_device_id, "preallocate": preallocate,
                 "memory_fraction": memory_fraction}
        _options[platform].update({k: v for k, v in given.items() if v is not None})


def _jax_has_client(platform: str) -> bool:
    """Whether jax (in this process) already created the client for `platform`."""
    xb = sys.modules.get("jax._src.xla_bridge")
    return xb is not None and _PJRT_NAME[platform] in getattr(xb, "_backends", {})


# The frontend installs its reader of STABLEJIT_DEVICE_ID / _PREALLOCATE /
# _MEMORY_FRACTION here (config.client_options); the runtime never reads them itself.
environment_options = dict


def options(platform: str) -> dict:
    """The options set with configure(), else those the environment gives (scripts)."""
    out = dict(_options[_check(platform)])
    for name, value in environment_options().items():
        out.setdefault(name, value)
    return out


def get_client(platform: str = "host"):
    """The PJRT client for a platform, creating it on first use."""
    _check(platform)
    client = _clients.get(platform)
    if client is not None:
        return client
    with _lock:
        if platform not in _clients:
            _clients[platform] = _create(platform)
        return _clients[platform]


def install(platform: str, client) -> None:
    """Use `client` for `platform` (the distributed runtime's host client); only before
    any other client for it exists."""
    with _lock:
        if platform in _clients or _jax_has_client(platform):
            raise PlatformError(
                f"the {platform} client already exists, so it cannot be replaced by one "
                f"that spans processes; call stablejit.distributed.initialize at the top "
                f"of the program, before the first operation")
        _clients[platform] = client


def _create(platform: str):
    opts = options(platform)
    if platform in ("cuda", "rocm"):  # the GPU allocator reads these at client creation
        if "preallocate" in opts:
            os.environ["XLA_PYTHON_CLIENT_PREALLOCATE"] = "true" if opts["preallocate"] else "false"
        if "memory_fraction" in opts:
            os.environ.pop("XLA_PYTHON_CLIENT_MEM_FRACTION", None)  # deprecated spelling
            os.environ["XLA_CLIENT_MEM_FRACTION"] = str(opts["memory_fraction"])
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")  # keep XLA's INFO lines off stderr
    from jax._src import xla_bridge  # PJRT client factory and plugin discovery

    try:
        return xla_bridge.get_backend(_PJRT_NAME[platform])
    except RuntimeError as e:
        raise PlatformError(f"platform {platform!r} is not available here ({e}). Install its "
                            f"plugin (pip install 'stablejit[{platform}...]') or choose "
                            f"another with stablejit.set_default_platform") from None


def is_available(platform: str) -> bool:
    try:
        get_client(platform)
        return True
    except PlatformError:
        return False


def devices(platform: str = "host") -> list:
    return list(get_client(platform).local_devices())


def default_device(platform: str = "host"):
    devs = devices(platform)
    i = options(platform).get("default_device_id", 0)
    if not 0 <= i < len(devs):
        raise PlatformError(f"default_device_id {i} is out of range: {platform} has "
                            f"{len(devs)} device(s) (ids 0..{len(devs) - 1}); check "
                            f"configure_client or STABLEJIT_DEVICE_ID")
    return devs[i]


def platform_of(device) -> str:
    """stablejit's name for a device's platform (the client knows cuda from rocm)."""
    name = device.client.platform
    return "host" if name == "cpu" else ("cuda" if name == "gpu" else name)


def platform_version(platform: str) -> str:
    return str(get_client(platform).platform_version)
