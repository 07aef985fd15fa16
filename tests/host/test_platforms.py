"""Clients and platforms: one client per platform shared with jax, options before the
client exists, the preference list, environment variables for scripts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp
from stablejit.runtime import client


def run(code: str, env=None) -> str:
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                       text=True, timeout=120,
                       env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "1", **(env or {})})
    assert r.returncode == 0, r.stderr
    return r.stdout


@pytest.mark.host_default
def test_one_client_per_platform_shared_with_jax():
    import jax

    c = client.get_client("host")
    assert c is client.get_client("host")
    assert jax.devices("cpu")[0].client is c
    x = snp.asarray(np.arange(4.0, dtype=np.float32))
    assert x.device.client is c
    # a jax array and a stablejit tensor live on the same PJRT device objects
    assert jax.device_put(np.ones(2), jax.devices("cpu")[0]).devices() == {x.device}


@pytest.mark.host_default
def test_options_after_the_client_exists_raise():
    client.get_client("host")
    with pytest.raises(client.PlatformError, match="already exists.*before the first"):
        stablejit.configure_client("host", default_device_id=0)
    with pytest.raises(client.PlatformError, match="unknown platform 'gpu'.*host, cuda"):
        stablejit.configure_client("gpu", preallocate=False)
    with pytest.raises(ValueError, match="memory_fraction"):
        stablejit.configure_client("cuda", memory_fraction=1.5)


def test_set_default_platform_picks_the_first_available(capsys):
    chosen = stablejit.set_default_platform(["tpu", "cuda", "rocm", "host"], verbose=True)
    available = [p for p in ("tpu", "cuda", "rocm") if client.is_available(p)]
    assert chosen == (available[0] if available else "host")
    printed = capsys.readouterr().out
    assert f"default platform is {chosen}" in printed
    if chosen == "host":
        assert "not available: tpu" in printed
    assert stablejit.default_platform() == chosen
    assert snp.ones(3).device.client.platform == client.get_client(chosen).platform
    with pytest.raises(client.PlatformError, match="unknown platform 'metal'"):
        stablejit.set_default_platform(["metal", "host"])
    stablejit.set_default_platform("host")


@pytest.mark.host_default
def test_default_device_id_option_and_env_in_a_script():
    out = run("""
        import stablejit, stablejit.numpy as snp
        stablejit.configure_client("host", default_device_id=2)
        x = snp.arange(3.0)
        print(x.device.id, (x * 2).device.id, stablejit.jit(lambda a: a + 1)(x).device.id)
        """, env={"XLA_FLAGS": "--xla_force_host_platform_device_count=4"})
    assert out.split() == ["2", "2", "2"]
    out = run("""
        import stablejit, stablejit.numpy as snp
        print(snp.ones(2).device.id)
        """, env={"XLA_FLAGS": "--xla_force_host_platform_device_count=4",
                  "STABLEJIT_DEVICE_ID": "3"})
    assert out.split() == ["3"]
    out = run("""
        import os
        from stablejit.runtime import client
        print(client.options("cuda"))
        os.environ["STABLEJIT_DEVICE_ID"] = "one"
        import warnings
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            print(client.options("host"))
        print(w[0].message)
        """, env={"STABLEJIT_PREALLOCATE": "false", "STABLEJIT_MEMORY_FRACTION": "0.25"})
    lines = out.splitlines()
    assert "'preallocate': False" in lines[0] and "'memory_fraction': 0.25" in lines[0]
    assert "default_device_id" not in lines[1]  # a bad value: warned about, default used
    assert lines[2].startswith("STABLEJIT_DEVICE_ID='one' is not valid (a device number)")


def test_platform_env_var_and_clear_errors():
    out = run("""
        import stablejit
        stablejit.configure_client("host", default_device_id=7)
        print(stablejit.default_platform())
        try:
            import stablejit.numpy as snp
            snp.ones(2)
        except stablejit.runtime.client.PlatformError as e:
            print("ERR", e)
        """, env={"STABLEJIT_PLATFORM": "tpu,host"})
    lines = out.splitlines()
    assert lines[0] == "host"
    assert lines[1].startswith("ERR default_device_id 7 is out of range: host has 1 device")
    r = subprocess.run([sys.executable, "-c", "import stablejit.numpy as snp; snp.ones(2)"],
                       capture_output=True, text=True, timeout=120,
                       env={**os.environ, "STABLEJIT_PLATFORM": "tpu"})
    if not client.is_available("tpu"):
        assert r.returncode != 0 and "STABLEJIT_PLATFORM='tpu'" in r.stderr


@pytest.mark.skipif(not client.is_available("cuda"), reason="needs a CUDA GPU and jax[cuda]")
def test_gpu_client_options_in_a_script():
    # (jaxlib's client says "gpu" (jax 0.11 on an H200); stablejit's name is "cuda")
    out = run("""
        import os, stablejit, stablejit.numpy as snp
        from stablejit.runtime.client import platform_of
        stablejit.configure_client("cuda", preallocate=False, memory_fraction=0.5)
        stablejit.set_default_platform(["cuda", "host"])
        x = snp.ones(1000)
        print(platform_of(x.device), os.environ["XLA_PYTHON_CLIENT_PREALLOCATE"],
              os.environ["XLA_CLIENT_MEM_FRACTION"])
        stats = x.device.memory_stats() or {}
        print(stats.get("bytes_limit", 0) > 0)
        """)
    assert out.split()[:3] == ["cuda", "false", "0.5"]


def test_client_options_are_checked_before_use():
    with pytest.raises(TypeError, match="preallocate must be True or False, not 'false'"):
        stablejit.configure_client("cuda", preallocate="false")
    with pytest.raises(TypeError, match=r"memory_fraction must be a number in \(0, 1\]"):
        stablejit.configure_client("cuda", memory_fraction="0.5")
    with pytest.raises(TypeError, match="default_device_id must be a device number"):
        stablejit.configure_client("cuda", default_device_id=1.0)


def test_gpu_options_reach_the_gpu_allocator_when_its_client_starts():
    """Without a GPU the client fails to start, after the options were handed on as the
    variables jaxlib's GPU plugin reads (the deprecated spelling of the fraction is
    dropped: jaxlib refuses both at once)."""
    out = run("""
        import os, stablejit
        from stablejit.runtime import client
        stablejit.configure_client("cuda", preallocate=False, memory_fraction=0.3)
        client.is_available("cuda")
        print(os.environ.get("XLA_PYTHON_CLIENT_PREALLOCATE"),
              os.environ.get("XLA_CLIENT_MEM_FRACTION"),
              os.environ.get("XLA_PYTHON_CLIENT_MEM_FRACTION"))
        """, env={"XLA_PYTHON_CLIENT_MEM_FRACTION": "0.7"})
    assert out.split() == ["false", "0.3", "None"]


# ---- on a GPU (skipped elsewhere) ----------------------------------------------------------
# Each runs a fresh process, since options apply only when the client is created. None of
# these has run on a GPU yet: no GPU was lent while they were written.

GPUS = [p for p in ("cuda", "rocm") if client.is_available(p)]
needs_gpu = pytest.mark.skipif(
    not GPUS, reason="needs a CUDA or ROCm GPU with jax's plugin (pip install "
                     "'jax[cuda13]'); tests/host/test_lowering_platforms.py checks GPU "
                     "lowering without one")


def _gpu_memory_stats(options: str) -> dict:
    """memory_stats() of the default GPU after one small array, in a process whose GPU
    client was created with `options` (configure_client keyword text)."""
    out = run(f"""
        import json, stablejit, stablejit.numpy as snp
        stablejit.configure_client({GPUS[0]!r}, {options})
        stablejit.set_default_platform([{GPUS[0]!r}])
        x = snp.ones(1000)
        x.numpy()
        print(json.dumps(x.device.memory_stats() or {{}}))
        """)
    return json.loads(out.splitlines()[-1])


@needs_gpu
def test_gpu_memory_fraction_sets_the_allocator_limit():
    small = _gpu_memory_stats("memory_fraction=0.2")
    large = _gpu_memory_stats("memory_fraction=0.4")
    assert large["bytes_limit"] == pytest.approx(2 * small["bytes_limit"], rel=0.05)


@needs_gpu
def test_gpu_preallocate_reserves_the_pool_when_the_client_starts():
    on = _gpu_memory_stats("preallocate=True, memory_fraction=0.3")
    off = _gpu_memory_stats("preallocate=False, memory_fraction=0.3")
    key = next((k for k in ("pool_bytes", "bytes_reserved") if k in on), None)
    if key is None:
        pytest.skip(f"this GPU client's memory_stats() report no pool size: {sorted(on)}")
    assert on[key] >= 0.9 * on["bytes_limit"], on
    assert off[key] < 0.5 * off["bytes_limit"], off


@needs_gpu
def test_gpu_default_device_id():
    last = len(client.devices(GPUS[0])) - 1
    out = run(f"""
        import stablejit, stablejit.numpy as snp
        stablejit.configure_client({GPUS[0]!r}, default_device_id={last})
        stablejit.set_default_platform([{GPUS[0]!r}])
        x = snp.ones(3)
        print(x.device.id, stablejit.jit(lambda a: a * 2)(x).device.id)
        """)
    assert out.split() == [str(last), str(last)]
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(f"""
        import stablejit, stablejit.numpy as snp
        stablejit.configure_client({GPUS[0]!r}, default_device_id={last + 1})
        stablejit.set_default_platform([{GPUS[0]!r}])
        snp.ones(3)
        """)], capture_output=True, text=True, timeout=120)
    assert r.returncode != 0 and f"default_device_id {last + 1} is out of range" in r.stderr


# ---- the host's dispatch -------------------------------------------------------------------
# With async_dispatch=False the host client runs a program on the calling thread, so
# its outputs are ready when the call returns; a program this large (a 600x600 matmul
# chain) is still running then on the default, asynchronous client.
_SYNC_PROBE = """
    import numpy as np, stablejit, stablejit.numpy as snp
    {configure}
    f = stablejit.jit(lambda a: ((a @ a) @ a) @ a)
    a = snp.asarray(np.full((600, 600), 1e-3, np.float32), device=stablejit.devices("host")[0])
    f(a).block_until_ready()
    ready = []
    for _ in range(5):
        out = f(a)
        ready.append(out._data.is_ready())
        out.block_until_ready()
    print(all(ready), stablejit.runtime.client.options("host").get("async_dispatch"))
"""


@pytest.mark.parametrize("how, env, configure", [
    ("configure_client", {}, 'stablejit.configure_client("host", async_dispatch=False)'),
    ("STABLEJIT_CPU_ASYNC_DISPATCH", {"STABLEJIT_CPU_ASYNC_DISPATCH": "0"}, ""),
    ("jax's variable", {"JAX_CPU_ENABLE_ASYNC_DISPATCH": "0"}, ""),
    ("ours over jax's", {"JAX_CPU_ENABLE_ASYNC_DISPATCH": "1",
                         "STABLEJIT_CPU_ASYNC_DISPATCH": "0"}, ""),
    ("jax imported first", {}, 'import jax; stablejit.configure_client("host", '
                               'async_dispatch=False)')])
def test_host_programs_run_on_the_calling_thread_when_asked(how, env, configure):
    out = run(_SYNC_PROBE.format(configure=configure), env=env)
    assert out.split() == ["True", "False"], how


def test_async_dispatch_is_a_host_option_checked_before_use():
    with pytest.raises(TypeError, match="async_dispatch must be True or False, not 0"):
        stablejit.configure_client("host", async_dispatch=0)
    with pytest.raises(ValueError, match="async_dispatch is an option of the host client"):
        stablejit.configure_client("cuda", async_dispatch=False)
    with pytest.raises(client.PlatformError, match="the host client already exists"):
        snp.ones(2)
        stablejit.configure_client("host", async_dispatch=False)
