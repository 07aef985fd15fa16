"""Dumps, in subprocesses: STABLEJIT_DUMP_TO for jit and eager compilations (also when
the executable comes from the disk cache), and XLA's own XLA_FLAGS=--xla_dump_to,
whose HLO names the user's file and line, and which a warm cache never skips."""

from __future__ import annotations

import glob
import json
import os
import re
import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent("""\
    import numpy as np
    import stablejit
    import stablejit.numpy as snp


    @stablejit.jit
    def layer(x, w):
        y = x @ w
        return snp.tanh(y) + 1.0


    x = np.arange(12, dtype=np.float32).reshape(4, 3) / 10
    w = np.ones((3, 2), np.float32)
    print(np.asarray(layer(x, w)).tolist())
    e = snp.asarray(x) * 3.0                       # an eager op compiles too
    print(np.asarray(e).sum())
    """)


def run_script(tmp_path, env):
    path = tmp_path / "prog.py"
    path.write_text(SCRIPT)
    r = subprocess.run([sys.executable, str(path)], capture_output=True, text=True,
                       env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "1", **env}, timeout=120)
    assert r.returncode == 0, r.stderr
    return str(path), r


def expected(tmp_path=None):
    import numpy as np

    x = np.arange(12, dtype=np.float32).reshape(4, 3) / 10
    return (np.tanh(x @ np.ones((3, 2), np.float32)) + 1.0), float((x * 3.0).sum())


@pytest.mark.host_default
def test_stablejit_dump_to_writes_every_compilation(tmp_path):
    dump = tmp_path / "dump"
    env = {"STABLEJIT_DUMP_TO": str(dump), "STABLEJIT_CACHE_DIR": str(tmp_path / "cache")}
    path, r = run_script(tmp_path, env)
    import numpy as np

    want, total = expected()
    lines = r.stdout.splitlines()
    np.testing.assert_allclose(np.array(eval(lines[0])), want, rtol=1e-6)
    assert abs(float(lines[1]) - total) < 1e-4
    prefixes = sorted({f.rsplit(".", 2)[0] if f.endswith(".txt") and ".ir" in f
                       else f.rsplit(".", 1)[0] for f in glob.glob(str(dump / "*.json"))})
    names = [os.path.basename(p).split(".", 2)[2] for p in prefixes]
    assert "layer" in names and "multiply" in names  # jit and the eager multiply
    layer = prefixes[names.index("layer")]
    for ext in ("ir-before.txt", "ir.txt", "stablehlo.mlir", "hlo.txt", "json"):
        assert os.path.getsize(f"{layer}.{ext}") > 0, ext
    ir = open(f"{layer}.ir.txt").read()
    assert "dot_general" in ir and "tanh" in ir and "prog.py:8" in ir
    assert re.search(rf'"{re.escape(str(path))}":8:[1-9]\d*\)',
                     open(f"{layer}.stablehlo.mlir").read())  # line and column
    assert open(f"{layer}.hlo.txt").read().startswith("HloModule layer")
    meta = json.load(open(f"{layer}.json"))
    assert meta["name"] == "layer" and meta["platform"] == "host"
    assert meta["cache"] == "compiled" and meta["ops_after"] <= meta["ops_before"]

    # a second process loads from the disk cache and still writes the dump
    dump2 = tmp_path / "dump2"
    run_script(tmp_path, {**env, "STABLEJIT_DUMP_TO": str(dump2)})
    metas = [json.load(open(f)) for f in glob.glob(str(dump2 / "*.layer.json"))]
    assert [m["cache"] for m in metas] == ["disk hit"]
    hlo2 = open(glob.glob(str(dump2 / "*.layer.hlo.txt"))[0]).read()
    hlo1 = open(f"{layer}.hlo.txt").read()
    # the same optimised program (a loaded executable may order its name tables anew)
    assert hlo2.splitlines()[0] == hlo1.splitlines()[0]
    assert sorted(re.findall(r" ([a-z-]+)\(", hlo2)) == sorted(re.findall(r" ([a-z-]+)\(", hlo1))


def test_xla_dump_names_the_user_line_and_is_not_skipped_by_the_cache(tmp_path):
    cache = str(tmp_path / "cache")
    run_script(tmp_path, {"STABLEJIT_CACHE_DIR": cache})  # warm the cache, no dump
    xla = tmp_path / "xla"
    dump = tmp_path / "ours"
    path, _ = run_script(tmp_path, {"STABLEJIT_CACHE_DIR": cache,
                                    "XLA_FLAGS": f"--xla_dump_to={xla}",
                                    "STABLEJIT_DUMP_TO": str(dump)})
    before = glob.glob(str(xla / "*layer*before_optimizations.txt"))
    after = [f for f in glob.glob(str(xla / "*layer*after_optimizations.txt"))]
    assert before and after, os.listdir(xla)
    text = open(before[0]).read()
    # XLA's HLO keeps our locations: the user's file, and the lines of the matmul and tanh
    assert f'"{path}"' in text
    lines = {int(m) for m in re.findall(r"\bline=(\d+)", text)}
    assert {8, 9} <= lines
    assert re.search(r'op_name="dot_general" stack_frame_id=\d+', text)
    # the run that asked for an XLA dump compiled instead of loading from the cache
    meta = json.load(open(glob.glob(str(dump / "*.layer.json"))[0]))
    assert meta["cache"] == "compiled"
    assert "--xla_dump_to" in meta["xla_flags"]
