"""Every environment variable stablejit reads, parsed and validated in one place.

Values are read when asked for (scripts and tests may set a variable after import), and
parsed once per distinct value. A bad value never makes a call fail: it is reported once
with a warning that names the variable and what it accepts, and the default is used.
No other module reads the environment; the runtime gets these values as arguments.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable

_FALSE = ("0", "false", "no", "off")
_TRUE = ("1", "true", "yes", "on")


class ConfigWarning(UserWarning):
    """An environment variable had a value stablejit cannot use; the default applies."""


def _flag(raw: str) -> bool:
    v = raw.strip().lower()
    if v in ("",) + _FALSE:
        return False
    if v in _TRUE:
        return True
    raise ValueError("expected 0 or 1")


def _positive_int(raw: str) -> int:
    n = int(float(raw))
    if n <= 0 or n != float(raw):
        raise ValueError("expected a positive integer")
    return n


def _nonnegative_int(raw: str) -> int:
    n = int(raw)
    if n < 0:
        raise ValueError("expected an integer >= 0")
    return n


def _fraction(raw: str) -> float:
    f = float(raw)
    if not 0.0 < f <= 1.0:
        raise ValueError("expected a number in (0, 1]")
    return f


def _platforms(raw: str) -> tuple[str, ...]:
    names = tuple(n.strip() for n in raw.split(",") if n.strip())
    if not names:
        raise ValueError("expected a platform name or a comma-separated list of them")
    return names


_parsed: dict[tuple[str, str], object] = {}


def _read(var: str, parse: Callable[[str], object], default, what: str):
    raw = os.environ.get(var)
    if raw is None:
        return default
    key = (var, raw)
    try:
        return _parsed[key]
    except KeyError:
        pass
    try:
        value = parse(raw)
    except (ValueError, TypeError):
        warnings.warn(f"{var}={raw!r} is not valid ({what}); using the default "
                      f"{default!r}. Fix or unset the variable.", ConfigWarning, stacklevel=3)
        value = default
    _parsed[key] = value
    return value


# ---- the settings -----------------------------------------------------------------------

def platforms() -> tuple[str, ...] | None:
    """STABLEJIT_PLATFORM: a platform or preference list (e.g. "cuda,host")."""
    return _read("STABLEJIT_PLATFORM", _platforms, None, "a platform name or list")


def platform_setting() -> str | None:
    """The raw STABLEJIT_PLATFORM, for messages."""
    return os.environ.get("STABLEJIT_PLATFORM")


def log_compiles() -> bool:
    return _read("STABLEJIT_LOG_COMPILES", _flag, False, "0 or 1")


def verify() -> bool:
    """STABLEJIT_VERIFY=1: re-run every shape rule after each pass."""
    return _read("STABLEJIT_VERIFY", _flag, False, "0 or 1")


# settings made in code with update() (JAX's config.update), over the environment's
_overrides: dict[str, object] = {}
_NAMES = {"debug_nans": "STABLEJIT_DEBUG_NANS", "debug_infs": "STABLEJIT_DEBUG_INFS"}


def update(name: str, value) -> None:
    """Set a setting in code, as jax.config.update does: "debug_nans" or "debug_infs"
    (JAX's "jax_debug_nans" / "jax_debug_infs" are accepted too)."""
    key = name.removeprefix("jax_")
    if key not in _NAMES:
        raise ValueError(f"unknown setting {name!r}; settable in code: {sorted(_NAMES)}")
    _overrides[key] = bool(value)
    global _checks
    _checks = None


def _debug_flag(key: str) -> bool:
    # asked on every eager op: the variable is read once, at first use (as JAX reads
    # JAX_DEBUG_NANS at start-up); update() changes the setting afterwards
    value = _overrides.get(key)
    if value is None:
        value = _overrides[key] = _read(_NAMES[key], _flag, False, "0 or 1")
    return value


def debug_nans() -> bool:
    """STABLEJIT_DEBUG_NANS=1: raise at the first op that makes a NaN (frontend/
    debugging.py)."""
    return _debug_flag("debug_nans")


def debug_infs() -> bool:
    """STABLEJIT_DEBUG_INFS=1: likewise for infinities."""
    return _debug_flag("debug_infs")


def debug_checks() -> bool:
    """debug_nans or debug_infs: asked on every op, so one global read once both are
    known (update() forgets the answer)."""
    global _checks
    if _checks is None:
        _checks = debug_nans() or debug_infs()
    return _checks


_checks: bool | None = None


def lazy() -> bool:
    """STABLEJIT_LAZY=1: the default backend records ops lazily (frontend/lazy.py)."""
    return _read("STABLEJIT_LAZY", _flag, False, "0 or 1")


def lazy_max_ops() -> int:
    """STABLEJIT_LAZY_MAX_OPS: a pending lazy graph runs once it holds this many ops."""
    return _read("STABLEJIT_LAZY_MAX_OPS", _positive_int, 4096, "a positive integer")


def dump_to() -> str | None:
    return os.environ.get("STABLEJIT_DUMP_TO") or None


def xla_flags() -> str:
    """XLA_FLAGS (XLA's own variable): part of the disk cache key."""
    return os.environ.get("XLA_FLAGS", "")


def cache_dir() -> str | None:
    """The persistent cache directory: STABLEJIT_CACHE_DIR ("" or "off" disables it),
    STABLEJIT_CACHE=0 disables it, else $XDG_CACHE_HOME/stablejit or ~/.cache/stablejit."""
    env = os.environ.get("STABLEJIT_CACHE_DIR")
    if env is not None:
        return None if env.strip().lower() in ("", "none") + _FALSE else env
    if not _read("STABLEJIT_CACHE", _flag, True, "0 or 1"):
        return None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "stablejit")


DEFAULT_CACHE_MAX_BYTES = 1 << 30


def cache_max_bytes() -> int:
    return _read("STABLEJIT_CACHE_MAX_BYTES", _positive_int, DEFAULT_CACHE_MAX_BYTES,
                 "a positive number of bytes")


# The in-memory executable cache: enough for the programs of a real workload, small
# enough that a function retraced for every new shape levels off (each XLA executable
# costs roughly 0.1-0.5 MiB of host memory on the CPU, more for big programs).
DEFAULT_EXECUTABLES = 256
DEFAULT_EXECUTABLE_BYTES = 256 << 20


def executable_cache_entries() -> int:
    return _read("STABLEJIT_EXECUTABLE_CACHE_ENTRIES", _positive_int, DEFAULT_EXECUTABLES,
                 "a positive integer")


def executable_cache_bytes() -> int:
    return _read("STABLEJIT_EXECUTABLE_CACHE_BYTES", _positive_int, DEFAULT_EXECUTABLE_BYTES,
                 "a positive number of bytes")


def client_options() -> dict:
    """Client options for scripts: STABLEJIT_DEVICE_ID, STABLEJIT_PREALLOCATE (GPUs),
    STABLEJIT_MEMORY_FRACTION. Only the variables that are set appear."""
    out = {}
    for name, var, parse, what in (
            ("default_device_id", "STABLEJIT_DEVICE_ID", _nonnegative_int, "a device number"),
            ("preallocate", "STABLEJIT_PREALLOCATE", _flag, "0 or 1"),
            ("memory_fraction", "STABLEJIT_MEMORY_FRACTION", _fraction,
             "a number in (0, 1]")):
        if os.environ.get(var):
            value = _read(var, parse, None, what)
            if value is not None:
                out[name] = value
    return out
