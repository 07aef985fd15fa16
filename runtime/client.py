"""PJRT clients, one per platform, shared with jax when jax runs in the same process.

Platform names are stablejit's: host, cuda, rocm, tpu (jax calls host "cpu").
Clients are created lazily; options given to `configure()` apply when a client is
created, and setting them after that raises instead of being silently ignored.

Starting on the host needs jaxlib only: importing jax costs half a second, so the host
client is made with jaxlib's factory, with the options jax would pass, unless jax is
already in the process (then its client is shared). If jax is imported later, it is
handed our host client instead of making a second one that would not accept our
buffers. Accelerators go through jax's plugin discovery (one client per GPU, memory
preallocation), which is only imported when a plugin is installed.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
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
              preallocate: bool | None = None, memory_fraction: float | None = None,
              async_dispatch: bool | None = None) -> None:
    """Set client options for a platform before its client is first used (EXLA's client
    options). default_device_id: the device a computation runs on unless told otherwise
    (default 0). On cuda and rocm: preallocate, whether the allocator reserves its whole
    pool when the client starts (default True); memory_fraction, the share of each GPU's
    memory the allocator may use (jaxlib's default, 0.75, where EXLA's is 0.9). On the
    host: async_dispatch, whether a program runs on PJRT's worker threads while Python
    goes on (default True, as jax's jax_cpu_enable_async_dispatch) or on the calling
    thread, which saves the hand-over to a worker (docs/devices.md measures both)."""
    _check(platform)
    for name, value in (("preallocate", preallocate), ("async_dispatch", async_dispatch)):
        if value is not None and not isinstance(value, bool):
            raise TypeError(f"{name} must be True or False, not {value!r}")
    if async_dispatch is not None and platform != "host":
        raise ValueError(f"async_dispatch is an option of the host client; {platform} "
                         f"programs are always dispatched asynchronously")
    for name, value, kind, what in (
            ("memory_fraction", memory_fraction, (int, float), "a number in (0, 1]"),
            ("default_device_id", default_device_id, int, "a device number (an int)")):
        if value is not None and (isinstance(value, bool) or not isinstance(value, kind)):
            raise TypeError(f"{name} must be {what}, not {value!r}")
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
                 "memory_fraction": memory_fraction, "async_dispatch": async_dispatch}
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
    if "jax" not in sys.modules:
        if platform == "host":
            return _host_client_without_jax(opts.get("async_dispatch", True))
        if not _plugin_installed(platform):
            raise PlatformError(f"platform {platform!r} is not available here (no PJRT plugin "
                                f"for it is installed). {_INSTALL_HINT.format(platform)}")
    from jax._src import xla_bridge  # PJRT client factory and plugin discovery

    host = opts if platform == "host" else options("host")
    if "async_dispatch" in host:  # jax's factory reads its flag, for every platform's
        import jax  # noqa: PLC0415 - already imported (jax starts all its clients at once)

        jax.config.update("jax_cpu_enable_async_dispatch", host["async_dispatch"])
    try:
        return xla_bridge.get_backend(_PJRT_NAME[platform])
    except RuntimeError as e:
        raise PlatformError(f"platform {platform!r} is not available here ({e}). "
                            f"{_INSTALL_HINT.format(platform)}") from None


_INSTALL_HINT = ("Install its plugin (pip install 'stablejit[{0}...]') or choose another "
                 "with stablejit.set_default_platform")


def _plugin_installed(platform: str) -> bool:
    """Whether jax's plugin discovery could find `platform`, judged without importing jax:
    the cuda and rocm PJRT plugins live in the `jax_plugins` namespace package, the TPU
    runtime in `libtpu`."""
    if platform == "tpu":
        return importlib.util.find_spec("libtpu") is not None
    return importlib.util.find_spec("jax_plugins") is not None


def _host_client_without_jax(asynchronous: bool = True):
    """The host client from jaxlib's factory, with the options jax's make_cpu_client
    passes by default: asynchronous dispatch (unless the async_dispatch option says
    otherwise), one process, no cross-process collectives,
    the device count from XLA_FLAGS (--xla_force_host_platform_device_count) and jax's
    topology timeouts. Its buffers carry stablejit's array metadata (see buffers.py)."""
    from jaxlib import utils, xla_client  # noqa: PLC0415 - import cost: only when the host starts

    # jaxlib's C++ logs through absl, which does not read TF_CPP_MIN_LOG_LEVEL (jax
    # passes it on when it loads): without this, client creation prints INFO lines
    level = os.environ.get("TF_CPP_MIN_LOG_LEVEL", "1")
    utils.absl_set_min_log_level(int(level) if level.isdigit() else 1)
    client = xla_client.make_cpu_client(asynchronous=asynchronous, num_devices=None,
                                        get_local_topology_timeout_minutes=2,
                                        get_global_topology_timeout_minutes=5)
    sys.meta_path.insert(0, _HandToJax(client))
    return client


# Called once jax, imported after our host client was made, has loaded: the frontend
# rebuilds its result handlers there, so that new outputs carry jax's array metadata.
jax_loaded_hooks: list = []


class _HandToJax(importlib.abc.MetaPathFinder):
    """When jax is imported after our host client exists, register that client as jax's
    "cpu" backend as soon as jax has loaded, so that the process has one host client
    and jax and stablejit pass buffers to each other."""

    def __init__(self, client):
        self.client = client

    def find_spec(self, name, path=None, target=None):
        if name != "jax":
            return None
        sys.meta_path.remove(self)  # once; and lets the other finders locate jax
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        load, client = spec.loader.exec_module, self.client

        def exec_module(module):
            load(module)
            from jax._src import xla_bridge  # noqa: PLC0415 - jax has just been imported

            xla_bridge.register_backend_factory("cpu", lambda: client, priority=0,
                                                fail_quietly=False)
            for hook in jax_loaded_hooks:
                hook()
        spec.loader.exec_module = exec_module
        return spec


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
