"""jax's names of the platforms where a ported program uses them: jax.devices("cpu"),
jax.device_count("cpu"), jax.default_backend() (a name), jax.config.update(
"jax_platform_name" / "jax_platforms", ...) — against jax in the same process."""

import jax
import pytest
import stablejit
import stablejit.numpy as snp


@pytest.mark.parametrize("call", ["devices", "local_devices", "device_count",
                                  "local_device_count"])
def test_cpu_names_the_host(call):
    ours = getattr(stablejit, call)(backend="cpu")
    theirs = getattr(jax, call)(backend="cpu")
    assert ours == getattr(stablejit, call)(backend="host")
    if isinstance(ours, list):
        assert [d.id for d in ours] == [d.id for d in theirs]
    else:
        assert ours == theirs


def test_local_devices_takes_jax_s_process_index():
    assert stablejit.local_devices(0) == stablejit.local_devices() == stablejit.local_devices(
        "host")
    with pytest.raises(ValueError, match="process 3 is not this process"):
        stablejit.local_devices(3)


def test_default_backend_with_no_argument_is_jax_s_platform_name():
    assert stablejit.default_backend() == jax.default_backend() == "cpu"
    with stablejit.default_backend("reference"):  # with an argument: a block, as before
        assert snp.ones(2)._backend is stablejit.REFERENCE


@pytest.mark.parametrize("name,value", [("jax_platform_name", "cpu"),
                                        ("jax_platforms", "cpu"),
                                        ("jax_platforms", "cpu,gpu")])
def test_jax_platform_settings_choose_the_host(name, value):
    try:
        stablejit.config.update(name, value)
        assert snp.ones(2)._backend.platform == "host"
    finally:
        stablejit.config.update("default_device", None)


def test_an_unknown_platform_is_named_in_the_error():
    with pytest.raises(Exception, match="unknown platform 'gpux'"):
        stablejit.devices("gpux")
