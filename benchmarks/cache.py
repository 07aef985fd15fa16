"""Persistent compilation cache: the first call of a jitted MLP (10 layers, 256 wide,
tanh) in a fresh process, with a cold cache (XLA compiles) and with a warm one (the
executable is loaded from disk). Target: warm >= 10x faster than cold.

Each round starts a new Python process; the client is created and the inputs are put
on the device before timing, so the figures are what the cache changes:

    executable   trace + passes + emit + (compile | load from disk)   (jitted.lower().compile())
    first-call   the same plus running it once and waiting for the result; this includes
                 the runtime's one-off cost of a process's first execution
    warm-call    first-call in a process that already ran one (eager) op

    python benchmarks/cache.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

CHILD = r"""
import json, sys, time
import numpy as np
import stablejit, stablejit.numpy as snp
from stablejit import compilation

def mlp(x, *ws):
    for w in ws:
        x = snp.tanh(x @ w)
    return x

rng = np.random.default_rng(0)
ws = [snp.asarray(rng.standard_normal((256, 256)).astype(np.float32) / 16) for _ in range(10)]
x = snp.asarray(rng.standard_normal((64, 256)).astype(np.float32))
x.block_until_ready()
mode = sys.argv[1]
if mode == "warm-call":  # something else ran first: the runtime's start-up is paid
    (x * 2.0).block_until_ready()
f = stablejit.jit(mlp)
t0 = time.perf_counter()
if mode == "executable":
    f.lower(x, *ws).compile()
else:
    f(x, *ws).block_until_ready()
dt = time.perf_counter() - t0
print(json.dumps({"seconds": dt, "stats": compilation.stats}))
"""


def child(mode: str, cache_dir: str) -> dict:
    env = {**os.environ, "STABLEJIT_CACHE_DIR": cache_dir, "TF_CPP_MIN_LOG_LEVEL": "1"}
    env.pop("XLA_FLAGS", None)
    r = subprocess.run([sys.executable, "-c", CHILD, mode], capture_output=True, text=True,
                       env=env, timeout=300)
    if r.returncode:
        raise RuntimeError(r.stderr)
    return json.loads(r.stdout.splitlines()[-1])


def measure(mode: str, rounds: int) -> tuple[float, float]:
    cold, warm = [], []
    for _ in range(rounds):
        d = tempfile.mkdtemp(prefix="stablejit-bench-cache-")
        try:
            c = child(mode, d)
            w = child(mode, d)
        finally:
            shutil.rmtree(d, ignore_errors=True)
        assert c["stats"]["compiled"] >= 1 and w["stats"]["compiled"] == 0, (c, w)
        cold.append(c["seconds"])
        warm.append(w["seconds"])
    return float(np.median(cold)), float(np.median(warm))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ns = ap.parse_args()
    print("MLP 10 x (256x256 matmul + tanh), batch 64, fresh process per measurement, "
          f"median of {ns.rounds}")
    print(f"{'':<12} {'cold (compile)':>15} {'warm (disk)':>12} {'ratio':>7}")
    for mode in ("executable", "first-call", "warm-call"):
        cold, warm = measure(mode, ns.rounds)
        print(f"{mode:<12} {cold * 1e3:12.1f} ms {warm * 1e3:9.1f} ms {cold / warm:6.1f}x")


if __name__ == "__main__":
    main()
