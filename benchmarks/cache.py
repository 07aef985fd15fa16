"""Persistent compilation cache: the first call of a jitted program in a fresh process,
with a cold cache (XLA compiles) and with a warm one (the executable is loaded from
disk). Programs: a 10-layer 256-wide tanh MLP (XLA compiles it quickly) and the digits
CNN train step of examples/digits_cnn.py (forward, VJP and Adam: compiling it takes
seconds). Target: warm >= 10x faster than cold where the compile takes >= 0.3 s.

Each round starts a new Python process; the client is created, the inputs are put on
the device and one eager op has run before timing, so the figures are what the cache
changes:

    executable   trace + passes + emit + (compile | load from disk)   (jitted.lower().compile())
    first-call   the same plus running it once and waiting for the result

and, for the warm first call, where its time goes: trace, passes+emit, load, first run.

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

HERE = os.path.dirname(os.path.abspath(__file__))

CHILD = r"""
import json, sys, time
import numpy as np
import stablejit, stablejit.numpy as snp
from stablejit import compilation, nn

program, mode = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(0)
if program == "mlp":
    def fn(x, *ws):
        for w in ws:
            x = snp.tanh(x @ w)
        return x
    args = [snp.asarray(rng.standard_normal((64, 256)).astype(np.float32))] + [
        snp.asarray(rng.standard_normal((256, 256)).astype(np.float32) / 16)
        for _ in range(10)]
    f = stablejit.jit(fn)
else:
    sys.path.insert(0, sys.argv[3])
    import digits_cnn
    params = digits_cnn.init_params(rng)
    opt = nn.adam(3e-3)
    args = [params, opt.init(params),
            snp.asarray(rng.random((32, 8, 8, 1)).astype(np.float32)),
            snp.asarray(rng.integers(0, 10, 32).astype(np.int32))]
    f = digits_cnn.make_train_step(opt)
(args[-1] * 2).block_until_ready()  # the runtime's start-up is paid before timing
t0 = time.perf_counter()
if mode == "executable":
    f.lower(*args).compile()
elif mode == "first-call":
    stablejit.tree.leaves(f(*args))[-1].block_until_ready()
else:  # the parts of a first call, one after another
    t = time.perf_counter()
    jitted_fn = f.trace(tuple(args), {})[0]
    trace = time.perf_counter() - t
    t = time.perf_counter()
    compilation.lower(jitted_fn)
    emit = time.perf_counter() - t
    c = f.lower(*args).compile()  # trace, passes and emit again, and the load
    t = time.perf_counter()
    stablejit.tree.leaves(c(*args))[-1].block_until_ready()
    run = time.perf_counter() - t
dt = time.perf_counter() - t0
res = {"seconds": dt, "stats": compilation.stats}
if mode == "parts":
    res.update(trace=trace, emit=emit, run=run)
print(json.dumps(res))
"""


def child(program: str, mode: str, cache_dir: str) -> dict:
    env = {**os.environ, "STABLEJIT_CACHE_DIR": cache_dir, "TF_CPP_MIN_LOG_LEVEL": "1"}
    env.pop("XLA_FLAGS", None)
    examples = os.path.join(os.path.dirname(HERE), "examples")
    r = subprocess.run([sys.executable, "-c", CHILD, program, mode, examples],
                       capture_output=True, text=True, env=env, timeout=600)
    if r.returncode:
        raise RuntimeError(r.stderr)
    return json.loads(r.stdout.splitlines()[-1])


def measure(program: str, mode: str, rounds: int) -> tuple[float, float]:
    cold, warm = [], []
    for _ in range(rounds):
        d = tempfile.mkdtemp(prefix="stablejit-bench-cache-")
        try:
            c = child(program, mode, d)
            w = child(program, mode, d)
        finally:
            shutil.rmtree(d, ignore_errors=True)
        assert c["stats"]["compiled"] >= 1 and w["stats"]["compiled"] == 0, (c, w)
        cold.append(c["seconds"])
        warm.append(w["seconds"])
    return float(np.median(cold)), float(np.median(warm))


def warm_parts(program: str, rounds: int) -> dict:
    """Median seconds of trace, passes+emit and first run in a process with a warm
    cache; load = executable - trace - passes+emit."""
    d = tempfile.mkdtemp(prefix="stablejit-bench-cache-")
    try:
        child(program, "executable", d)
        parts = [child(program, "parts", d) for _ in range(rounds)]
    finally:
        shutil.rmtree(d, ignore_errors=True)
    return {k: float(np.median([p[k] for p in parts])) for k in ("trace", "emit", "run")}


def rows(rounds: int) -> list[tuple[str, float, float]]:
    """(name, cold seconds, warm seconds) for each program and mode."""
    out = []
    for program in ("mlp", "cnn"):
        for mode in ("executable", "first-call"):
            cold, warm = measure(program, mode, rounds)
            out.append((f"{program} {mode}", cold, warm))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ns = ap.parse_args()
    print("persistent cache: first call in a fresh process, cold (compile) vs warm (disk); "
          f"median of {ns.rounds}")
    print(f"{'':<22} {'cold (compile)':>15} {'warm (disk)':>12} {'ratio':>7}")
    results = rows(ns.rounds)
    for name, cold, warm in results:
        print(f"{name:<22} {cold * 1e3:12.1f} ms {warm * 1e3:9.1f} ms {cold / warm:6.1f}x")
    p = warm_parts("cnn", ns.rounds)
    executable = dict((n, w) for n, _, w in results)["cnn executable"]
    print(f"warm cnn first call: trace {p['trace'] * 1e3:.1f} ms, passes+emit "
          f"{p['emit'] * 1e3:.1f} ms, load {(executable - p['trace'] - p['emit']) * 1e3:.1f} "
          f"ms, first run {p['run'] * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
