"""Every environment variable stablejit reads, parsed and validated in one place, and the
settings made in code (config.update, as JAX's).

Values are read when asked for (scripts and tests may set a variable after import), and
parsed once per distinct value. A bad value never makes a call fail: it is reported once
with a warning that names the variable and what it accepts, and the default is used. An
empty (or blank) value counts as unset, except STABLEJIT_CACHE_DIR's, which turns the disk
cache off. No other module reads the environment; the runtime gets these values as
arguments.

Settings made in code (debug_nans, debug_infs, enable_x64, traceback_filtering,
default_device, default_matmul_precision): `config.update("debug_nans", True)`,
`config.debug_nans = True` and JAX's spellings (`config.update("jax_debug_nans", True)`,
`config.jax_debug_nans = True`) and ours (`"stablejit_debug_nans"`) are the same;
reading `config.debug_nans` or `config.jax_debug_nans` gives the value.

x64 mode, as JAX's: `config.update("jax_enable_x64", True)` (or `config.enable_x64 = True`,
JAX_ENABLE_X64=1 or STABLEJIT_ENABLE_X64=1 at start-up, or the context manager
`stablejit.experimental.enable_x64()`) makes the default float float64 and the default
complex complex128 (Python floats, `zeros(3)`, the mean of integers); the default int is
int64 in both modes. It is one setting for the whole process (jax's context manager was
per thread). docs/numerics.md, "Integer inputs and x64 mode".
"""

from __future__ import annotations

import math
import os
import sys
import types
import warnings
from collections.abc import Callable

from .runtime.client import PLATFORMS

_FALSE = ("0", "false", "no", "off")
_TRUE = ("1", "true", "yes", "on")
_INT_MAX = 2**63 - 1  # what the runtime (and XLA behind it) can hold in an int64


# The settings (debug_nans ...) are properties of the module's class, _Config, below
__all__ = ["ConfigWarning", "VARIABLES", "debug_infs", "debug_nans",  # noqa: F822
           "default_device", "default_matmul_precision", "enable_x64", "traceback_filtering",
           "update"]


class ConfigWarning(UserWarning):
    """An environment variable had a value stablejit cannot use; the default applies."""


def _flag(raw: str) -> bool:
    v = raw.strip().lower()
    if v in _FALSE:
        return False
    if v in _TRUE:
        return True
    raise ValueError("expected 0 or 1")


def _number(raw: str) -> int | float:
    """A finite number written in ASCII: an int exactly, else a float."""
    s = raw.strip()
    if not s.isascii():
        raise ValueError("not an ASCII number")
    try:
        return int(s)
    except ValueError:
        f = float(s)
    if not math.isfinite(f):
        raise ValueError("not a finite number")
    return f


def _integer(raw: str, low: int) -> int:
    n = _number(raw)
    if isinstance(n, float):
        if not n.is_integer():
            raise ValueError("not an integer")
        n = int(n)
    if not low <= n <= _INT_MAX:
        raise ValueError("out of range")
    return n


def _positive_int(raw: str) -> int:
    return _integer(raw, 1)


def _nonnegative_int(raw: str) -> int:
    return _integer(raw, 0)


def _fraction(raw: str) -> float:
    f = float(_number(raw))
    if not 0.0 < f <= 1.0:
        raise ValueError("expected a number in (0, 1]")
    return f


def _platforms(raw: str) -> tuple[str, ...]:
    names = tuple(n.strip().lower() for n in raw.split(",") if n.strip())
    if not names or any(n not in PLATFORMS for n in names):
        raise ValueError("expected a platform name or a comma-separated list of them")
    return names


def _path(raw: str) -> str:
    return raw


_parsed: dict[tuple[str, str], object] = {}


_ENVIRON = os.environ
_encoded: dict[str, object] = {}  # variable name -> os.environ's key for it


def _getenv(var: str) -> str | None:
    """os.environ.get(var), without its Mapping layers where os.environ is the process's
    own: settings are read on hot paths (a grad call reads two), and a read of an unset
    variable costs 0.6 us through os.environ.get, 0.1 us here."""
    env = os.environ
    if env is not _ENVIRON or type(env) is not os._Environ:  # (replaced by a test)
        return env.get(var)
    key = _encoded.get(var)
    if key is None:
        key = _encoded[var] = env.encodekey(var)
    raw = env._data.get(key)
    return None if raw is None else env.decodevalue(raw)


def _read(var: str, parse: Callable[[str], object], default, what: str,
          shown_default: str | None = None):
    raw = _getenv(var)
    if raw is None or not raw.strip():
        return default
    key = (var, raw)
    try:
        return _parsed[key]
    except KeyError:
        pass
    try:
        value = parse(raw)
    except (ValueError, TypeError, OverflowError):
        shown = repr(default) if shown_default is None else shown_default
        warnings.warn(f"{var}={raw!r} is not valid ({what}); using the default "
                      f"{shown}. Fix or unset the variable.", ConfigWarning, stacklevel=3)
        value = default
    _parsed[key] = value
    return value


# ---- the settings -----------------------------------------------------------------------

_PLATFORM_WHAT = f"a platform name or a comma-separated list of them, of {', '.join(PLATFORMS)}"


def platforms() -> tuple[str, ...] | None:
    """STABLEJIT_PLATFORM: a platform or preference list (e.g. "cuda,host")."""
    return _read("STABLEJIT_PLATFORM", _platforms, None, _PLATFORM_WHAT,
                 "preference (accelerators first, then host)")


def platform_setting() -> str | None:
    """The STABLEJIT_PLATFORM in use, for messages (None when unset or not valid)."""
    return os.environ.get("STABLEJIT_PLATFORM") if platforms() is not None else None


def log_compiles() -> bool:
    return _read("STABLEJIT_LOG_COMPILES", _flag, False, "0 or 1")


def verify() -> bool:
    """STABLEJIT_VERIFY=1: re-run every shape rule after each pass."""
    return _read("STABLEJIT_VERIFY", _flag, False, "0 or 1")


# settings made in code with update() (JAX's config.update), over the environment's
_overrides: dict[str, object] = {}


def _bool_value(name: str, value) -> bool:
    if not (isinstance(value, bool) or type(value).__name__ == "bool_"
            or (type(value) is int and value in (0, 1))):
        raise TypeError(f"the setting {name!r} takes True or False, not {value!r} "
                        f"(of type {type(value).__name__})")
    return bool(value)


# JAX's modes that remove frames ("tracebackhide" only marks them, for IPython/pytest)
_FILTERING_ON = ("on", "auto", "remove_frames", "quiet_remove_frames", *_TRUE)


def _filtering(raw: str) -> str:
    v = raw.strip().lower()
    if v in _FALSE:
        return "off"
    if v in _FILTERING_ON:
        return "on"
    raise ValueError("expected on or off")


def _filtering_value(name: str, value) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, str):
        try:
            return _filtering(value)
        except ValueError:
            pass
    raise ValueError(f"the setting {name!r} takes 'on' or 'off' (or JAX's 'auto', "
                     f"'remove_frames', 'quiet_remove_frames'), not {value!r}")


# jax's names of the platforms, where stablejit's differ ("host" is jax's "cpu")
JAX_PLATFORM_NAMES = {"cpu": "host", "gpu": "cuda"}


def platform_name(name: str | None) -> str | None:
    """A platform named as stablejit or as jax names it ("cpu", "gpu"), as stablejit
    names it."""
    return JAX_PLATFORM_NAMES.get(name, name) if isinstance(name, str) else name


def _device_value(name: str, value):
    """A device (from stablejit.devices()), a platform name (jax's "cpu" and "gpu" too),
    or None (the platform's default); the default backend itself is changed by the
    installed applier."""
    if isinstance(value, str):
        return platform_name(value)
    if value is None or (
            hasattr(value, "client") and hasattr(value, "platform")):
        return value
    raise TypeError(f"the setting {name!r} takes a device (from stablejit.devices()), a "
                    f"platform name or None, not {type(value).__name__} {value!r:.60}")


# jax's names of a matrix product's precision: its enum's names and the dtypes they stand
# for (frontend/precision.py turns them into dot_general's attribute)
PRECISION_NAMES = {"default": "DEFAULT", "fastest": "DEFAULT", "bfloat16": "DEFAULT",
                   "high": "HIGH", "tensorfloat32": "HIGH", "bfloat16_3x": "HIGH",
                   "highest": "HIGHEST", "float32": "HIGHEST"}
_PRECISION_WHAT = "one of " + ", ".join(sorted(PRECISION_NAMES))


def _precision(raw: str) -> str:
    v = raw.strip()
    if v not in PRECISION_NAMES:
        raise ValueError(f"expected {_PRECISION_WHAT}")
    return v


def _precision_value(name: str, value):
    """None (XLA's default), a name of PRECISION_NAMES, or a Precision (lax's or jax's)."""
    if value is None:
        return None
    if type(value).__name__ == "Precision":
        return value.name.lower()
    if isinstance(value, str) and value in PRECISION_NAMES:
        return value
    raise ValueError(f"the setting {name!r} takes None, a lax.Precision or {_PRECISION_WHAT}"
                     f", not {value!r}")


# setting -> (its environment variables (the first one set is read) or None, the parse of
# that variable's text, what the variable accepts, the default, the check of a value set in
# code)
_SETTINGS = {
    "debug_nans": (("STABLEJIT_DEBUG_NANS",), _flag, "0 or 1", False, _bool_value),
    "debug_infs": (("STABLEJIT_DEBUG_INFS",), _flag, "0 or 1", False, _bool_value),
    "enable_x64": (("STABLEJIT_ENABLE_X64", "JAX_ENABLE_X64"), _flag, "0 or 1", False,
                   _bool_value),
    "traceback_filtering": (("STABLEJIT_TRACEBACK_FILTERING",), _filtering, "on or off",
                            "on", _filtering_value),
    "default_device": (None, None, None, None, _device_value),
    "default_matmul_precision": (("STABLEJIT_DEFAULT_MATMUL_PRECISION",
                                  "JAX_DEFAULT_MATMUL_PRECISION"), _precision,
                                 _PRECISION_WHAT, None, _precision_value),
}
_NAMES = {name: spec[0] for name, spec in _SETTINGS.items()}
# setting -> what applies a new value elsewhere (installed by the module that owns it:
# api.py makes default_device the default backend), so config imports nothing above it
_APPLY: dict[str, Callable] = {}


def _option(name) -> str | None:
    if not isinstance(name, str):
        return None
    key = name.removeprefix("jax_").removeprefix("stablejit_")
    return key if key in _NAMES else None


def _known() -> str:
    return ", ".join(sorted(_NAMES))


def on_update(name: str, apply: Callable) -> None:
    """Have `apply(value)` called whenever the setting `name` is set in code."""
    _APPLY[name] = apply


def update(name: str, value) -> None:
    """Set a setting in code, as jax.config.update does: "debug_nans" / "debug_infs"
    (True or False), "enable_x64" (True or False: the default float is float64 and the
    default complex complex128), "traceback_filtering" ("on" or "off"),
    "default_device" (a device, a platform name or None), "default_matmul_precision"
    (None or a precision name such as "highest": the precision= of matrix products that
    pass none; frontend/precision.py). JAX's spellings
    ("jax_enable_x64") and ours with the package's prefix ("stablejit_enable_x64") are
    accepted too, and jax's "jax_platform_name" / "jax_platforms" ("cpu", "gpu,cpu": the
    first is used) set "default_device" to that platform."""
    if name in ("jax_platform_name", "jax_platforms"):  # jax's: the platform to use
        name, value = "default_device", (str(value).split(",")[0].strip() or None
                                         if value is not None else None)
    key = _option(name)
    if key is None:
        raise ValueError(f"unknown setting {name!r}; settable in code: {sorted(_NAMES)}")
    value = _SETTINGS[key][4](name, value)
    if key in _APPLY:
        _APPLY[key](value)
    _overrides[key] = value
    global _checks
    _checks = None


def _setting(key: str):
    # the variable is read once, at first use (as JAX reads JAX_DEBUG_NANS at start-up);
    # update() changes the setting afterwards
    value = _overrides.get(key, _MISSING)
    if value is _MISSING:
        variables, parse, what, default, _ = _SETTINGS[key]
        var = next((v for v in variables or () if os.environ.get(v, "").strip()), None)
        value = _overrides[key] = default if var is None else _read(var, parse, default,
                                                                    what)
    return value


def _debug_flag(key: str) -> bool:
    # asked on every eager op: one dict read once the setting is known
    value = _overrides.get(key)
    if value is None:
        value = _setting(key)
    return value


def traceback_filtering_on() -> bool:
    """Whether errors leaving a public call lose stablejit's frames (tracebacks.py)."""
    return _setting("traceback_filtering") == "on"


# config.debug_nans / config.debug_infs (STABLEJIT_DEBUG_NANS=1 / _INFS=1): read as
# attributes of the module (see _Config below): raise at the first op that makes a NaN
# (an infinity) (frontend/debugging.py).


def debug_checks() -> bool:
    """debug_nans or debug_infs: asked on every op, so one global read once both are
    known (update() forgets the answer)."""
    global _checks
    if _checks is None:
        _checks = _debug_flag("debug_nans") or _debug_flag("debug_infs")
    return _checks


_checks: bool | None = None


def lazy() -> bool:
    """STABLEJIT_LAZY=1: the default backend records ops lazily (frontend/lazy.py)."""
    return _read("STABLEJIT_LAZY", _flag, False, "0 or 1")


def native() -> bool:
    """STABLEJIT_NATIVE=0: jitted calls and the lazy recorder take the Python path even
    where the native extensions were built (read when stablejit is imported;
    docs/native.md)."""
    return _read("STABLEJIT_NATIVE", _flag, True, "0 or 1")


def lazy_max_ops() -> int:
    """STABLEJIT_LAZY_MAX_OPS: a pending lazy graph runs once it holds this many ops."""
    return _read("STABLEJIT_LAZY_MAX_OPS", _positive_int, 4096, "a positive integer")


def dump_to() -> str | None:
    return _read("STABLEJIT_DUMP_TO", _path, None, "a directory")


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
                 "a positive number of bytes, at most 2**63-1")


# The in-memory executable cache: enough for the programs of a real workload, small
# enough that a function retraced for every new shape levels off (each XLA executable
# costs roughly 0.1-0.5 MiB of host memory on the CPU, more for big programs).
DEFAULT_EXECUTABLES = 256
DEFAULT_EXECUTABLE_BYTES = 256 << 20


def executable_cache_entries() -> int:
    return _read("STABLEJIT_EXECUTABLE_CACHE_ENTRIES", _positive_int, DEFAULT_EXECUTABLES,
                 "a positive integer, at most 2**63-1")


def executable_cache_bytes() -> int:
    return _read("STABLEJIT_EXECUTABLE_CACHE_BYTES", _positive_int, DEFAULT_EXECUTABLE_BYTES,
                 "a positive number of bytes, at most 2**63-1")


_CLIENT_OPTIONS = (
    ("default_device_id", "STABLEJIT_DEVICE_ID", _nonnegative_int, "a device number"),
    ("preallocate", "STABLEJIT_PREALLOCATE", _flag, "0 or 1"),
    ("memory_fraction", "STABLEJIT_MEMORY_FRACTION", _fraction, "a number in (0, 1]"),
    # (jax's own variable too, for a process where stablejit makes the host client)
    ("async_dispatch", "JAX_CPU_ENABLE_ASYNC_DISPATCH", _flag, "0 or 1"),
    ("async_dispatch", "STABLEJIT_CPU_ASYNC_DISPATCH", _flag, "0 or 1"))


def client_options() -> dict:
    """Client options for scripts: STABLEJIT_DEVICE_ID, STABLEJIT_PREALLOCATE (GPUs),
    STABLEJIT_MEMORY_FRACTION, STABLEJIT_CPU_ASYNC_DISPATCH (the host; over jax's
    JAX_CPU_ENABLE_ASYNC_DISPATCH). Only the variables that are set (and valid) appear."""
    out = {}
    for name, var, parse, what in _CLIENT_OPTIONS:
        value = _read(var, parse, None, what, "of the platform")
        if value is not None:
            out[name] = value
    return out


# Every variable, with the function that reads it (a test goes through all of them with
# hostile values, and config.<reader> = value names the variable).
VARIABLES = {
    "STABLEJIT_PLATFORM": platforms, "STABLEJIT_LOG_COMPILES": log_compiles,
    "STABLEJIT_VERIFY": verify,
    "STABLEJIT_DEBUG_NANS": lambda: _debug_flag("debug_nans"),
    "STABLEJIT_DEBUG_INFS": lambda: _debug_flag("debug_infs"),
    "STABLEJIT_TRACEBACK_FILTERING": lambda: _setting("traceback_filtering"),
    "STABLEJIT_ENABLE_X64": lambda: _setting("enable_x64"),
    "JAX_ENABLE_X64": lambda: _setting("enable_x64"),
    "STABLEJIT_DEFAULT_MATMUL_PRECISION": lambda: _setting("default_matmul_precision"),
    "JAX_DEFAULT_MATMUL_PRECISION": lambda: _setting("default_matmul_precision"),
    "STABLEJIT_LAZY": lazy, "STABLEJIT_LAZY_MAX_OPS": lazy_max_ops, "STABLEJIT_NATIVE": native,
    "STABLEJIT_DUMP_TO": dump_to, "STABLEJIT_CACHE_DIR": cache_dir,
    "STABLEJIT_CACHE": cache_dir, "STABLEJIT_CACHE_MAX_BYTES": cache_max_bytes,
    "STABLEJIT_EXECUTABLE_CACHE_ENTRIES": executable_cache_entries,
    "STABLEJIT_EXECUTABLE_CACHE_BYTES": executable_cache_bytes,
    **{var: client_options for _, var, _, _ in _CLIENT_OPTIONS},
}


class _Config(types.ModuleType):
    """stablejit.config as an object: the settings made in code read and assign as
    attributes (`config.debug_nans = True` is config.update("debug_nans", True)), and
    assigning anything else fails at once instead of replacing a reader function."""

    @property
    def debug_nans(self) -> bool:
        return _debug_flag("debug_nans")

    @property
    def debug_infs(self) -> bool:
        return _debug_flag("debug_infs")

    @property
    def enable_x64(self) -> bool:
        return _setting("enable_x64")

    @property
    def x64_enabled(self) -> bool:  # jax.config.x64_enabled
        return _setting("enable_x64")

    @property
    def traceback_filtering(self) -> str:
        return _setting("traceback_filtering")

    @property
    def default_device(self):
        return _setting("default_device")

    @property
    def default_matmul_precision(self):
        return _setting("default_matmul_precision")

    def __getattr__(self, name):  # only for names the module does not have
        key = _option(name)
        if key is not None:  # JAX's spelling: config.jax_debug_nans
            return _setting(key)
        raise AttributeError(f"module 'stablejit.config' has no attribute {name!r}; the "
                             f"settings are {_known()} (and JAX's jax_* spellings of them)")

    def __setattr__(self, name, value):
        key = _option(name)
        if key is not None:
            update(key, value)
            return
        current = self.__dict__.get(name, _MISSING)
        if name.startswith("_") or (current is not _MISSING
                                    and (callable(value) or not callable(current))):
            super().__setattr__(name, value)  # private state, a monkeypatched function
            return
        if current is _MISSING:
            raise AttributeError(
                f"stablejit.config has no setting {name!r}; the settings made in code are "
                f"{_known()}: config.update(name, value) or config.<name> = value")
        variables = [v for v, reader in VARIABLES.items() if reader is current]
        source = (f"is read from the environment variable {' / '.join(variables)}: set "
                  f"that variable instead" if variables else "is a function")
        raise AttributeError(
            f"stablejit.config.{name} {source}, not by assignment. The settings made in "
            f"code are {_known()}: config.update(name, value) or config.<name> = value")

    def __dir__(self):  # the public names and the settings, not the reader functions
        return sorted(set(__all__) | set(_NAMES))


_MISSING = object()
sys.modules[__name__].__class__ = _Config
