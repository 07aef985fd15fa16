"""The `stablejit` command, run in subprocesses: dump (stages, files, dot, bundle),
explain, devices, cache."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap

import pytest

from tests.support.mlir_check import parse_and_verify

MODEL = textwrap.dedent("""\
    import stablejit.numpy as snp


    def predict(x, w):
        y = x @ w
        return snp.tanh(y) + snp.tanh(y)


    def mlp(x, w1, w2):
        h = snp.tanh(x @ w1)
        return snp.sum(snp.exp(h @ w2), axis=1)
    """)


def run_cli(*args, env=None, cwd=None, check=True):
    full_env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "1", **(env or {})}
    r = subprocess.run([sys.executable, "-m", "stablejit.cli", *args], capture_output=True,
                       text=True, env=full_env, cwd=cwd, timeout=120)
    if check and r.returncode != 0:
        raise AssertionError(f"stablejit {' '.join(args)} failed ({r.returncode}):\n"
                             f"{r.stdout}\n{r.stderr}")
    return r


@pytest.fixture()
def model(tmp_path):
    path = tmp_path / "model.py"
    path.write_text(MODEL)
    return str(path)


@pytest.fixture()
def cache_env(tmp_path):
    return {"STABLEJIT_CACHE_DIR": str(tmp_path / "cache")}


def test_dump_all_stages_to_stdout(model, cache_env):
    r = run_cli("dump", f"{model}:predict", "--args", "f32[100,784]", "f32[784,10]",
                "--stage", "all", env=cache_env)
    out = r.stdout
    for title in ("our IR, before passes", "our IR, after passes", "StableHLO",
                  "HLO, before XLA's optimisations", "HLO, after XLA's optimisations"):
        assert title in out
    ir_before = out.split("// ===== our IR, after passes")[0]
    ir_after = out.split("// ===== our IR, after passes")[1].split("// =====")[0]
    assert ir_before.count("= tanh(") == 2 and ir_after.count("= tanh(") == 1  # CSE
    assert "-> (f32[100,10])" in ir_after
    assert '"stablehlo.dot_general"' in out
    # the user's file, line and column
    assert re.search(rf'loc\("dot_general"\("{re.escape(str(model))}":5:[1-9]\d*\)\)', out)
    assert re.search(r"ENTRY .*\{", out) and "HloModule predict" in out


def test_dump_single_stage_and_out_dir(model, cache_env, tmp_path):
    r = run_cli("dump", f"{model}:predict", "--args", "f32[8,4]", "f32[4,2]", "--stage",
                "stablehlo", env=cache_env)
    assert "func.func public @main" in r.stdout and "HloModule" not in r.stdout
    assert "our IR" not in r.stdout
    out = tmp_path / "out"
    run_cli("dump", f"{model}:predict", "--args", "f32[8,4]", "f32[4,2]", "--out", str(out),
            env=cache_env)
    names = sorted(os.listdir(out))
    assert names == sorted(f"predict.{n}" for n in (
        "ir-before.txt", "ir-after.txt", "stablehlo.mlir", "hlo-before-optimizations.txt",
        "hlo-after-optimizations.txt"))
    # the StableHLO written parses and verifies with jaxlib's MLIR bindings
    parse_and_verify((out / "predict.stablehlo.mlir").read_text())


@pytest.mark.host_default
def test_dump_dot_has_xla_fusions_as_clusters(model, cache_env, tmp_path):
    r = run_cli("dump", f"{model}:mlp", "--args", "f32[16,32]", "f32[32,64]", "f32[64,8]",
                "--format", "dot", env=cache_env)
    dot = r.stdout
    assert dot.startswith('digraph "mlp"')
    # exp and its reduction are fused by XLA: they share a cluster
    clusters = re.findall(r"subgraph (cluster_\d+) \{(.*?)\n  \}", dot, re.S)
    assert clusters
    assert any("exp" in body and "reduce_sum" in body for _, body in clusters)
    assert "p0 -> n0;" in dot and "-> out0;" in dot
    out = tmp_path / "dot"
    r = run_cli("dump", f"{model}:mlp", "--args", "f32[16,32]", "f32[32,64]", "f32[64,8]",
                "--format", "dot", "--out", str(out), env=cache_env)
    assert (out / "mlp.dot").read_text() == dot
    assert (out / "mlp.svg").exists() == bool(shutil.which("dot"))


def test_dump_bundle_recompiles_without_stablejit(model, cache_env, tmp_path):
    bundle = tmp_path / "bundle"
    run_cli("dump", f"{model}:predict", "--args", "f32[8,4]", "f32[4,2]", "--bundle",
            str(bundle), env={**cache_env, "XLA_FLAGS": "--xla_cpu_enable_fast_math=false"})
    files = set(os.listdir(bundle))
    assert {"stablehlo.mlir", "hlo-before-optimizations.txt", "hlo-after-optimizations.txt",
            "flags.json", "versions.json", "recompile.py", "ir-before.txt",
            "ir-after.txt", "explain.txt"} <= files
    import json

    import jaxlib

    assert json.loads((bundle / "versions.json").read_text())["jaxlib"] == jaxlib.__version__
    assert "--xla_cpu_enable_fast_math=false" in (bundle / "flags.json").read_text()
    r = subprocess.run([sys.executable, str(bundle / "recompile.py")], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("HloModule predict")


PROFILE_STAGES = ("trace", "passes", "emit", "compile or load", "first run",
                  "steady-state run", "jit call")


def _profile_times(out: str) -> dict[str, float]:
    return {stage: float(re.search(rf"^  {stage}\s+([\d.]+) ms", out, re.M).group(1))
            for stage in PROFILE_STAGES}


@pytest.mark.host_default
def test_profile_times_every_stage_then_loads_from_disk(model, cache_env):
    args = ("profile", f"{model}:mlp", "--args", "f32[8,16]", "f32[16,4]", "f32[4,3]",
            "--runs", "5")
    first = run_cli(*args, env=cache_env).stdout
    assert "profile of mlp on host:0 (f32[8,16], f32[16,4], f32[4,3])" in first
    assert re.search(r"^  passes .* (\d+) -> (\d+) ops", first, re.M)
    assert "XLA compiled it" in first and "median of 5" in first
    times = _profile_times(first)
    assert all(t > 0 for t in times.values()), times
    assert times["compile or load"] > times["steady-state run"]
    second = run_cli(*args, env=cache_env).stdout
    assert "loaded from the disk cache" in second


def test_profile_takes_python_scalars_and_reports_bad_specs(model, cache_env, tmp_path):
    scaled = tmp_path / "scaled.py"
    scaled.write_text("def scaled(x, k):\n    return x * k\n")
    out = run_cli("profile", f"{scaled}:scaled", "--args", "f32[3]", "2.5", "--runs", "2",
                  env=cache_env).stdout
    assert "(f32[3], f32[])" in out and set(_profile_times(out)) == set(PROFILE_STAGES)
    r = run_cli("profile", f"{model}:predict", "--args", "q9[2]", "f32[3,2]",
                env=cache_env, check=False)
    assert r.returncode == 2 and "unknown dtype 'q9'" in r.stderr


def test_explain_reports_ops_fusions_cost_memory(model, cache_env):
    r = run_cli("explain", f"{model}:predict", "--args", "f32[100,784]", "f32[784,10]",
                env=cache_env)
    out = r.stdout
    m = re.search(r"our IR: (\d+) ops before passes, (\d+) after", out)
    assert m and int(m.group(1)) == int(m.group(2)) + 1  # one tanh removed by CSE
    assert re.search(r"tanh\s+2 -> 1", out)
    assert re.search(r"XLA \((compiled|disk hit|memory hit)", out)
    flops = int(re.search(r"flops\s+([\d,]+)", out).group(1).replace(",", ""))
    assert flops >= 2 * 100 * 784 * 10  # the matmul alone
    arg_bytes = int(re.search(r"argument\s+([\d,]+)", out).group(1).replace(",", ""))
    assert arg_bytes == 4 * (100 * 784 + 784 * 10)
    # our fusion pass's clusters, each mapped to the XLA fusions its ops ended up in
    n = int(re.search(r"our fusion pass: (\d+) cluster", out).group(1))
    assert n >= 2 and len(re.findall(r"^  cluster \d+: .* -> ", out, re.M)) == n


@pytest.mark.host_default
def test_devices_lists_platforms_and_default():
    r = run_cli("devices", env={"XLA_FLAGS": "--xla_force_host_platform_device_count=3"})
    out = r.stdout
    assert "default platform: host" in out
    assert "host:0  cpu (default)" in out and "host:2  cpu" in out
    assert "host:2  cpu (default)" not in out
    for p in ("cuda", "rocm", "tpu"):
        assert re.search(rf"^{p}: ", out, re.M)
    r = run_cli("devices", env={"STABLEJIT_PLATFORM": "tpu,host"})
    assert "default platform: host (STABLEJIT_PLATFORM=tpu,host)" in r.stdout


def test_console_script_is_installed():
    exe = shutil.which("stablejit")
    if exe is None:
        pytest.skip("the stablejit console script is not on PATH (package not installed)")
    r = subprocess.run([exe, "--help"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "dump" in r.stdout and "devices" in r.stdout


def test_errors_are_clear(model, cache_env):
    r = run_cli("dump", f"{model}:predict", "--args", "q32[3]", env=cache_env, check=False)
    assert r.returncode == 2 and "unknown dtype 'q32'" in r.stderr
    r = run_cli("dump", f"{model}:nope", "--args", "f32[3]", env=cache_env, check=False)
    assert r.returncode == 2 and "has no function 'nope'" in r.stderr
    r = run_cli("dump", f"{model}:predict", "--args", "f32[3,4]", "f32[5,2]", env=cache_env,
                check=False)
    assert r.returncode == 2 and "model.py:5" in r.stderr  # the shape error names the line


@pytest.mark.host_default
def test_cache_info_list_clear(model, cache_env):
    run_cli("dump", f"{model}:predict", "--args", "f32[8,4]", "f32[4,2]", "--stage", "hlo",
            env=cache_env)
    r = run_cli("cache", "list", env=cache_env)
    assert re.search(r"^[0-9a-f]{16}\s+[\d,]+\s+\S+ \S+\s+host\s+predict$", r.stdout, re.M)
    r = run_cli("cache", "info", env=cache_env)
    n = int(re.search(r"entries:\s+(\d+)", r.stdout).group(1))
    assert n >= 1 and cache_env["STABLEJIT_CACHE_DIR"] in r.stdout
    r = run_cli("cache", "clear", env=cache_env)
    assert f"removed {n} entries" in r.stdout
    r = run_cli("cache", "info", env=cache_env)
    assert re.search(r"entries:\s+0\b", r.stdout)
    r = run_cli("cache", "info", env={"STABLEJIT_CACHE_DIR": ""})
    assert "disabled" in r.stdout
