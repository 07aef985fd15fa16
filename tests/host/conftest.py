"""Tests over several host devices.

A module marked `pytestmark = pytest.mark.host_devices(8)` needs 8 host CPU devices,
which XLA only makes when XLA_FLAGS=--xla_force_host_platform_device_count=8 is set
before the client starts. In a run without that flag, its tests are collected as one
test that runs the module in a subprocess with the flag (one process start per module,
not per test); in a run with it they run here as usual.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from tests.conftest import another_default

FLAG = "--xla_force_host_platform_device_count"


def forced_devices() -> int:
    m = re.search(FLAG + r"=(\d+)", os.environ.get("XLA_FLAGS", ""))
    return int(m.group(1)) if m else 1


def device_env(n: int) -> dict:
    """The environment of a subprocess with `n` host devices."""
    flags = re.sub(FLAG + r"=\d+", "", os.environ.get("XLA_FLAGS", "")).strip()
    # (host devices: in a GPU session's run too, the host is these tests' platform, and
    # jax's, whose meshes they compare with)
    return {**os.environ, "XLA_FLAGS": f"{flags} {FLAG}={n}".strip(),
            "TF_CPP_MIN_LOG_LEVEL": "1", "STABLEJIT_PLATFORM": "host", "JAX_PLATFORMS": "cpu"}


def pytest_configure(config):
    config.addinivalue_line("markers", "host_devices(n): the module needs n host devices")
    config.addinivalue_line("markers", "host_default: the test is about the host being the "
                                       "default platform (skipped in a run whose "
                                       "STABLEJIT_PLATFORM puts another first)")


class _InSubprocess(pytest.Item):
    def __init__(self, *, devices: int, node_ids: list[str], **kw):
        super().__init__(**kw)
        self.devices, self.node_ids = devices, node_ids

    def runtest(self):
        r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                            "-p", "no:xdist", *self.node_ids], capture_output=True, text=True,
                           env=device_env(self.devices), timeout=900,
                           cwd=str(self.config.rootpath))
        if r.returncode != 0:
            raise AssertionError(f"tests on {self.devices} host devices failed:\n"
                                 f"{r.stdout[-8000:]}\n{r.stderr[-3000:]}")

    def reportinfo(self):
        return self.path, None, f"{self.name} ({len(self.node_ids)} tests in a subprocess)"


def pytest_collection_modifyitems(session, config, items):
    other = another_default()
    if other is not None:
        skip = pytest.mark.skip(reason=f"about the host as the default platform; this run's "
                                       f"default is {other}")
        for item in items:
            if item.get_closest_marker("host_default") is not None:
                item.add_marker(skip)
    groups: dict = {}
    for item in items:
        mark = item.get_closest_marker("host_devices")
        if mark is not None and forced_devices() < mark.args[0]:
            groups.setdefault(item.module, (mark.args[0], []))[1].append(item)
    if not groups:
        return
    replaced = {id(i) for _, its in groups.values() for i in its}
    kept = [i for i in items if id(i) not in replaced]
    for n, its in groups.values():
        parent = its[0].getparent(pytest.Module)
        kept.append(_InSubprocess.from_parent(
            parent, name=f"on_{n}_host_devices", devices=n,
            node_ids=[i.nodeid for i in its]))
    items[:] = kept


# The 4x2 mesh of the 8 host devices, ours and jax's, for the sharding test modules.
@pytest.fixture(scope="module")
def mesh():
    from stablejit.sharding import make_mesh
    return make_mesh((4, 2), ("x", "y"))


@pytest.fixture(scope="module")
def jmesh():
    import jax
    return jax.make_mesh((4, 2), ("x", "y"), axis_types=(jax.sharding.AxisType.Auto,) * 2)


@pytest.fixture(autouse=True)
def _x64_mode_is_restored():
    """x64 mode is one setting for the whole process: a test that changes it must change
    it back (stablejit.experimental.enable_x64() as a `with` block does), or the tests
    after it would run with the other default float."""
    from stablejit import config  # (here, not at the top: this module sets up devices)

    before = config.enable_x64
    yield
    if config.enable_x64 != before:
        config.update("enable_x64", before)
        pytest.fail(f"the test left x64 mode {'on' if not before else 'off'}; use "
                    f"`with stablejit.experimental.enable_x64():` around what needs it")
