"""What recording one op costs in lazy(), on the native recorder and on the Python one
(docs/native.md), in the same process (recorder_native.install switches them).

    python benchmarks/recorder.py

Each row: a graph of 200 copies of the op on a pending f32[1000] value, the median time
per op over 300 graphs (the graph's flush not timed), then the 30-op chain of
benchmarks/lazy.py split into recording, flush (its program run included) and total.
Ratio = native / Python (lower is better).
"""

from __future__ import annotations

import time

import numpy as np
import stablejit
import stablejit.numpy as snp
from stablejit import recorder_native

X = snp.asarray(np.linspace(-1, 1, 1000, dtype=np.float32))
OPS = [("x * 1.001", lambda x: x * 1.001), ("1.0 - x", lambda x: 1.0 - x),
       ("x + x", lambda x: x + x), ("tanh(x)", snp.tanh), ("sum(x)", snp.sum),
       ("maximum(x, 0.0)", lambda x: snp.maximum(x, 0.0)),
       ("reshape(x, (10, 100))", lambda x: snp.reshape(x, (10, 100)))]


def per_op(fn, n: int = 200, graphs: int = 300) -> float:
    times = []
    for _ in range(graphs):
        with stablejit.lazy():
            x = X + 0.0
            t0 = time.perf_counter()
            for _ in range(n):
                fn(x)
            times.append((time.perf_counter() - t0) / n)
    return float(np.median(times))


def chain_split(graphs: int = 2000) -> tuple[float, float, float]:
    rec, flush, total = [], [], []
    for _ in range(graphs):
        t0 = time.perf_counter()
        with stablejit.lazy() as backend:
            x = X
            for i in range(10):
                x = snp.tanh(x * 1.001 + 0.01 * i) - 0.5
            t1 = time.perf_counter()
            backend.flush()
            t2 = time.perf_counter()
        x.block_until_ready()
        t3 = time.perf_counter()
        rec.append(t1 - t0)
        flush.append(t2 - t1)
        total.append(t3 - t0)
    return float(np.median(rec)), float(np.median(flush)), float(np.median(total))


def main() -> None:
    if not recorder_native.available():
        print(f"the native recorder is not built: {recorder_native.unavailable}")
        return
    was = recorder_native.installed()
    rows = []
    try:
        for name, fn in OPS:
            t = {}
            for native in (True, False, True, False):  # alternating, twice
                recorder_native.install(native)
                t.setdefault(native, []).append(per_op(fn))
            rows.append((name, min(t[True]), min(t[False])))
        splits = {}
        for native in (True, False):
            recorder_native.install(native)
            splits[native] = chain_split()
    finally:
        recorder_native.install(was)
    print("\nrecording one op in lazy() (median per op; ratio = native / Python)")
    print(f"{'op':<26}{'native':>10}{'Python':>10}{'ratio':>8}")
    for name, n, p in rows:
        print(f"{name:<26}{n * 1e6:8.2f} us{p * 1e6:8.2f} us{n / p:7.2f}x")
    print("\n30-op chain in lazy() (median per graph)")
    print(f"{'path':<10}{'record':>12}{'flush+run':>12}{'total':>12}")
    for native in (True, False):
        r, f, tot = splits[native]
        print(f"{'native' if native else 'Python':<10}{r * 1e6:9.1f} us{f * 1e6:9.1f} us"
              f"{tot * 1e6:9.1f} us")


if __name__ == "__main__":
    main()
