"""stablejit.config: every STABLEJIT_* variable against hostile values (read, validate, warn
once on a bad value and use the default; never raise), and the settings made in code read
and assign as attributes (JAX's config.update and jax_* spellings too)."""

import os
import re
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp
from stablejit import config

PATHS = {"STABLEJIT_DUMP_TO", "STABLEJIT_CACHE_DIR"}  # any non-blank text is a directory
HOSTILE = ["inf", "-inf", "nan", "1e400", "-1e400", "-0", "-1", str(10**30), str(2**63),
           "\u0661\u0662", "\uff11", "\u00e9t\u00e9", "1.5", "0x10", "", " ", "\t\n"]


@pytest.fixture
def fresh(monkeypatch):
    """Nothing parsed yet, no setting made in code, and none of the variables set."""
    monkeypatch.setattr(config, "_parsed", {})
    monkeypatch.setattr(config, "_overrides", {})
    monkeypatch.setattr(config, "_checks", None)
    for var in config.VARIABLES:
        monkeypatch.delenv(var, raising=False)
    return monkeypatch


def test_the_table_names_every_variable_config_reads():
    source = open(config.__file__).read()
    assert set(re.findall(r'"((?:STABLEJIT|JAX)_[A-Z0-9_]+)"', source)) == set(config.VARIABLES)


def _expected(var: str, raw: str, default):
    """What reading `var`=`raw` gives, and whether it warns."""
    if not raw.strip():
        return (None if var == "STABLEJIT_CACHE_DIR" else default), False  # blank: unset
    if var in PATHS:
        return raw, False
    if var == "STABLEJIT_DEVICE_ID" and raw == "-0":
        return {"default_device_id": 0}, False
    return default, True


@pytest.mark.parametrize("raw", HOSTILE, ids=repr)
@pytest.mark.parametrize("var", sorted(config.VARIABLES))
def test_a_hostile_value_warns_once_and_the_default_applies(fresh, var, raw):
    read = config.VARIABLES[var]
    if var == "STABLEJIT_CACHE":
        fresh.setenv("XDG_CACHE_HOME", "/tmp/xdg")
    default = read()
    config._overrides.clear()  # the debug flags are read once: forget the first read
    fresh.setenv(var, raw)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        first, second = read(), read()
    want, warns = _expected(var, raw, default)
    assert first == want and second == want
    ours = [str(x.message) for x in w if issubclass(x.category, config.ConfigWarning)]
    if warns:
        assert len(ours) == 1, ours  # once, not at every read
        assert ours[0].startswith(f"{var}={raw!r} is not valid (")
        assert "using the default" in ours[0]
    else:
        assert ours == []


@pytest.mark.parametrize("var,raw,want", [
    ("STABLEJIT_CACHE_MAX_BYTES", "1e9", 10**9),
    ("STABLEJIT_CACHE_MAX_BYTES", " 9223372036854775807 ", 2**63 - 1),
    ("STABLEJIT_LAZY_MAX_OPS", "+12", 12),
    ("STABLEJIT_EXECUTABLE_CACHE_ENTRIES", "3.0", 3),
    ("STABLEJIT_LOG_COMPILES", " Yes ", True),
    ("STABLEJIT_NATIVE", "off", False),
    ("STABLEJIT_PLATFORM", "CUDA, host", ("cuda", "host")),
    ("STABLEJIT_DEVICE_ID", "2", {"default_device_id": 2}),
    ("STABLEJIT_MEMORY_FRACTION", "0.5", {"memory_fraction": 0.5}),
    ("STABLEJIT_PREALLOCATE", "off", {"preallocate": False}),
])
def test_good_values_still_read(fresh, var, raw, want):
    fresh.setenv(var, raw)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert config.VARIABLES[var]() == want


def test_an_infinite_cache_size_does_not_break_jit():
    code = textwrap.dedent("""
        import warnings
        import stablejit, stablejit.numpy as snp
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            f = stablejit.jit(lambda x: x + 1)
            print(f(snp.ones(2)), f(snp.ones(2)))
        print(sum("STABLEJIT_CACHE_MAX_BYTES='1e400' is not valid" in str(x.message)
                  for x in w))
    """)
    env = {**os.environ, "STABLEJIT_CACHE_MAX_BYTES": "1e400"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[-2] == "1"


# ---- settings made in code ----------------------------------------------------------------

@pytest.fixture
def settings(fresh):
    yield
    config.update("debug_nans", False)
    config.update("debug_infs", False)


@pytest.mark.parametrize("name", ["debug_nans", "debug_infs"])
@pytest.mark.parametrize("spelling", ["{}", "jax_{}"])
def test_a_setting_assigns_and_reads_as_an_attribute(settings, name, spelling):
    assert getattr(config, name) is False and getattr(config, "jax_" + name) is False
    setattr(config, spelling.format(name), True)
    assert getattr(config, name) is True and getattr(config, "jax_" + name) is True
    assert config.debug_checks() is True
    config.update(spelling.format(name), False)
    assert getattr(config, name) is False and config.debug_checks() is False


def test_debug_nans_set_by_assignment_checks_eager_ops(settings):
    stablejit.config.debug_nans = True  # replaced a function with a bool before
    with pytest.raises(FloatingPointError, match=r"invalid value \(nan\) encountered in sqrt"):
        snp.sqrt(snp.asarray([-1.0, 4.0]))
    stablejit.config.debug_nans = False
    np.testing.assert_array_equal(np.asarray(snp.sqrt(snp.asarray([4.0]))), [2.0])


@pytest.mark.parametrize("name", ["debug_nan", "jax_enable_checks", "nans"])
def test_assigning_an_unknown_setting_names_the_known_ones(settings, name):
    with pytest.raises(AttributeError, match=rf"no setting '{name}'.*debug_infs, debug_nans"):
        setattr(config, name, True)
    assert name not in vars(config)


@pytest.mark.parametrize("var", sorted(config.VARIABLES))
def test_assigning_a_variable_reader_names_the_variable_and_update(settings, var):
    reader = config.VARIABLES[var]
    name = getattr(reader, "__name__", "<lambda>")
    if name == "<lambda>":  # the debug flags: settable, tested above
        return
    with pytest.raises(AttributeError, match=rf"config\.{name} is read from the environment "
                                             rf"variable .*{var}.*config\.update"):
        setattr(config, name, True)
    assert getattr(config, name) is reader  # still the function


@pytest.mark.parametrize("value", ["yes", "False", None, 2, 1.0])
def test_a_setting_takes_a_bool(settings, value):
    with pytest.raises(TypeError, match="takes True or False"):
        config.update("debug_nans", value)
    with pytest.raises(TypeError, match="takes True or False"):
        config.debug_nans = value
    assert config.debug_nans is False


def test_reading_an_unknown_setting_names_the_known_ones():
    with pytest.raises(AttributeError, match="no attribute 'jax_enable_checks'.*debug_nans"):
        config.jax_enable_checks  # noqa: B018


def test_settings_are_listed_by_dir():
    assert {"debug_nans", "debug_infs", "enable_x64", "update"} <= set(dir(config))


@pytest.mark.parametrize("how", ["unset", "set", "blank", "non-ascii", "changed", "deleted",
                                 "os.environ replaced"])
def test_reading_a_variable_sees_what_os_environ_holds(how, monkeypatch):
    """config's own read of os.environ (a fast path past its Mapping layers) gives what
    os.environ.get gives, whichever way the variable was set, changed or removed."""
    var = "STABLEJIT_LAZY_MAX_OPS"
    monkeypatch.delenv(var, raising=False)
    if how in ("set", "changed", "deleted", "os.environ replaced"):
        monkeypatch.setenv(var, "17")
        assert config.lazy_max_ops() == 17
    if how == "blank":
        monkeypatch.setenv(var, "  ")
    if how == "non-ascii":
        monkeypatch.setenv(var, "１２")
    if how == "changed":
        os.environ[var] = "23"
    if how == "deleted":
        del os.environ[var]
    if how == "os.environ replaced":
        monkeypatch.setattr(os, "environ", {var: "31"})
    assert config._getenv(var) == os.environ.get(var)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", config.ConfigWarning)
        want = {"unset": 4096, "set": 17, "blank": 4096, "non-ascii": 4096, "changed": 23,
                "deleted": 4096, "os.environ replaced": 31}[how]
        assert config.lazy_max_ops() == want
