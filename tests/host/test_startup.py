"""Starting without jax: the host client from jaxlib alone, and one host client shared
with jax whichever of the two is imported first. Each case runs in a fresh process."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest


def run_python(code: str, env=None) -> str:
    """Run `code` in a fresh process whose default platform is the host (also in a GPU
    session's run of the suite: these tests are about the host's start)."""
    full_env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "1", "STABLEJIT_PLATFORM": "host",
                "JAX_PLATFORMS": "cpu", **(env or {})}
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                       text=True, env=full_env, timeout=120)
    assert r.returncode == 0, f"failed ({r.returncode}):\n{r.stdout}\n{r.stderr}"
    return r.stdout


def test_first_result_does_not_import_jax():
    out = run_python("""
        import sys
        import stablejit, stablejit.numpy as snp
        f = stablejit.jit(lambda a, b: a * b + 1)
        print(snp.ones(3) + 1, f(snp.arange(3.0), snp.ones(3)), "jax" in sys.modules)
        """)
    assert out.split() == ["[2.", "2.", "2.]", "[1.", "2.", "3.]", "False"]


@pytest.mark.parametrize("command", [["--help"], ["devices"]])
def test_cli_commands_do_not_import_jax(command):
    out = run_python(f"""
        import sys
        from stablejit.cli import main
        try:
            main({command!r})
        except SystemExit:  # --help exits
            pass
        print("jax imported:", "jax" in sys.modules)
        """)
    assert "jax imported: False" in out


def test_host_device_count_comes_from_xla_flags():
    out = run_python("""
        import sys
        import stablejit
        print(len(stablejit.devices("host")), "jax" in sys.modules)
        """, env={"XLA_FLAGS": "--xla_force_host_platform_device_count=3"})
    assert out.split() == ["3", "False"]


# Buffers made by either library are computed on by the other: the process has one host
# client (a second one would reject the other's buffers as being on another device).
BOTH_ORDERS = """
    import sys
    import numpy as np
    if {jax_first}:
        import jax, jax.numpy as jnp
    import stablejit, stablejit.numpy as snp
    early = snp.arange(3.0) + 1  # made before jax, if stablejit came first
    if not {jax_first}:
        assert "jax" not in sys.modules
        import jax, jax.numpy as jnp
    from stablejit.runtime import client
    assert jax.devices("cpu")[0].client is client.get_client("host")
    s = stablejit.jit(lambda a: a * 3)(snp.arange(3.0))
    print(jax.jit(lambda a: a + 1)(s._data), jnp.asarray(s._data) * 2)
    exe = stablejit.jit(lambda a: a + 1).lower(s).compile().executable
    out = exe.run([jnp.arange(3.0, dtype=jnp.float32)],
                  exe.result_handlers([((3,), np.float32)]))
    print(np.asarray(out[0]), jnp.from_dlpack(early) * 2)
    """


@pytest.mark.parametrize("jax_first", [False, True])
def test_one_host_client_shared_with_jax(jax_first):
    out = run_python(BOTH_ORDERS.format(jax_first=jax_first))
    assert out.split() == ["[1.", "4.", "7.]", "[", "0.", "6.", "12.]",
                           "[1.", "2.", "3.]", "[2.", "4.", "6.]"]
