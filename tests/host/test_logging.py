"""STABLEJIT_LOG_COMPILES: each trace and compile with its time and cache outcome, why a
function was traced again, and the warning for functions that keep recompiling."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp

SCRIPT = textwrap.dedent("""\
    import numpy as np
    import stablejit
    import stablejit.numpy as snp


    def scale(x, n, *, offset):
        return x * n + offset["b"]


    f = stablejit.jit(scale, static_argnums=1)
    b3 = {"b": np.float32(1.0)}
    print(float(f(np.ones(3, np.float32), 2, offset=b3).sum()))
    f(np.ones(4, np.float32), 2, offset=b3)
    f(np.ones(4, np.float32), 3, offset=b3)
    f(np.ones(4, np.float32), 3, offset={"b": np.int32(1)})
    f.clear_cache()
    f(np.ones(3, np.float32), 2, offset=b3)
    snp.asarray(np.ones(2, np.float32)) - 5.0
    """)


def run(tmp_path, cache):
    path = tmp_path / "prog.py"
    path.write_text(SCRIPT)
    r = subprocess.run([sys.executable, str(path)], capture_output=True, text=True,
                       timeout=120, env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "1",
                                         "STABLEJIT_LOG_COMPILES": "1",
                                         "STABLEJIT_CACHE_DIR": str(cache)})
    assert r.returncode == 0, r.stderr
    assert float(r.stdout.split()[0]) == 9.0
    return str(path), [ln for ln in r.stderr.splitlines() if ln.startswith("stablejit:")]


@pytest.mark.host_default
def test_log_compiles(tmp_path):
    cache = tmp_path / "cache"
    path, lines = run(tmp_path, cache)
    traces = [ln for ln in lines if "traced scale" in ln]
    assert len(traces) == 5
    assert re.match(rf"stablejit: traced scale \(trace #1\) for f32\[3\], f32\[\] at "
                    rf"{re.escape(path)}:12:\d+ in [\d.]+ ms: first call$", traces[0])
    assert traces[1].endswith("argument x changed from f32[3] to f32[4]")
    assert traces[2].endswith("static argument 1 changed from 2 to 3")
    assert traces[3].endswith("argument offset['b'] changed from f32[] to i32[]")
    compiles = [ln for ln in lines if re.match(r"stablejit: \w[\w ]* scale for", ln)]
    outcomes = [re.match(r"stablejit: (compiled|disk hit|memory hit) scale for host:0 in "
                         r"[\d.]+ ms \(passes\+emit [\d.]+ ms\)$", ln).group(1)
                for ln in compiles]
    assert outcomes == ["compiled"] * 4 + ["memory hit"]  # after clear_cache: in memory
    assert any(re.match(r"stablejit: (compiled|disk hit) subtract for host:0", ln)
               for ln in lines)  # eager ops are logged too
    _, lines2 = run(tmp_path, cache)  # a new process: everything from disk
    outcomes2 = [re.match(r"stablejit: (\w+ ?\w*) scale", ln).group(1) for ln in lines2
                 if re.match(r"stablejit: (compiled|disk hit|memory hit) scale", ln)]
    assert outcomes2 == ["disk hit"] * 4 + ["memory hit"]


def test_repeated_recompilation_warns_with_the_reason():
    f = stablejit.jit(lambda v: snp.sum(v * 2.0))
    for n in range(1, 8):
        assert float(f(np.ones(n, np.float32))) == 2.0 * n
    with pytest.warns(stablejit.RecompileWarning,
                      match=r"traced and compiled 8 times; the latest because argument v "
                            r"changed from f32\[\d\] to f32\[8\].*pad inputs") as rec:
        f(np.ones(8, np.float32))
    assert rec[0].filename == __file__
    assert f.traces == 8
