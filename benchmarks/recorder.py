"""What recording one op costs in lazy(), on the native recorder and on the Python one
(docs/native.md), in the same process (recorder_native.install switches them).

    python benchmarks/recorder.py

Each row: a graph of 200 copies of the op on a pending f32[1000] value (or
f32[100, 10]), the median time per op over 300 graphs (the graph's flush not timed);
then the 30-op chain of benchmarks/lazy.py split into recording, flush (its program
run included) and total; then benchmarks/lazy.py's two training steps split into
recording, flush and the wait for their program, and the MLP step as a training loop
runs it (each step reading the weights the previous step's graph computed).
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
       ("reshape(x, (10, 100))", lambda x: snp.reshape(x, (10, 100))),
       # what a training step's Python also calls (views, indexing, products), on a
       # pending f32[100, 10]
       ("m.T", lambda x: x.T, (100, 10)), ("m[3]", lambda x: x[3], (100, 10)),
       ("m[:, None]", lambda x: x[:, None], (100, 10)),
       ("m @ m.T", lambda x: x @ x.T, (100, 10)),
       ("mean(m, axis=1)", lambda x: snp.mean(x, axis=1), (100, 10)),
       ("sum(m, 1, keepdims=True)", lambda x: snp.sum(x, axis=1, keepdims=True),
        (100, 10))]


def per_op(fn, shape=None, n: int = 200, graphs: int = 300) -> float:
    times = []
    x0 = X if shape is None else snp.reshape(X, shape)
    for _ in range(graphs):
        with stablejit.lazy():
            x = x0 + 0.0
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


def _steps() -> list[tuple[str, object, object]]:
    """(name, run the step's Python in the current lazy block, read its result) for the
    two training steps of benchmarks/lazy.py: the MLP step written eagerly (also as a
    loop carrying its weights) and examples/digits_mlp.py's step with adam."""
    from common import digits_setup
    rng = np.random.default_rng(0)
    p = [snp.asarray(rng.standard_normal((64, 128)).astype(np.float32) * 0.1),
         snp.zeros(128), snp.asarray(rng.standard_normal((128, 10)).astype(np.float32)
                                     * 0.1), snp.zeros(10)]
    xb = snp.asarray(rng.standard_normal((128, 64)).astype(np.float32))
    yb = snp.asarray(rng.integers(0, 10, 128).astype(np.int32))

    def loss(q):
        h = snp.maximum(xb @ q[0] + q[1], 0.0)
        logits = h @ q[2] + q[3]
        logp = logits - snp.log(snp.sum(snp.exp(logits), axis=1, keepdims=True))
        return -snp.mean(snp.take_along_axis(logp, yb[:, None], axis=1))

    def mlp():
        g = stablejit.grad(loss)(p)
        return [a - 0.1 * b for a, b in zip(p, g, strict=True)]

    carried = [list(p)]

    def mlp_loop():  # as a training loop runs it: each step reads the last step's weights
        q = carried[0]
        g = stablejit.grad(loss)(q)
        carried[0] = [a - 0.1 * b for a, b in zip(q, g, strict=True)]
        return carried[0]

    digits, x, y, opt, params, state = digits_setup()

    def adam():
        value, grads = stablejit.value_and_grad(digits.loss_fn)(params, x, y)
        return opt.update(grads, state, params)[0], value

    return [("MLP step (SGD)", mlp, lambda out: out[0]),
            ("MLP, weights carried", mlp_loop, lambda out: out[0]),
            ("digits step (adam)", adam, lambda out: out[1])]


def step_split(run, result, steps: int = 1500) -> tuple[float, ...]:
    """Median (record, flush, run) of one training step in lazy(): its Python recorded;
    the flush (graph key, program lookup, PJRT's dispatch); the wait for the program.
    grad's derivative does not start the graph early (the default: LazyBackend._START_AT),
    so the record column is the recording alone."""
    rec, flush, wait = [], [], []
    for _ in range(steps):
        _one_step(run, result, rec, flush, wait)
    return tuple(float(np.median(v)) for v in (rec, flush, wait))


def _one_step(run, result, rec, flush, wait) -> None:
    t0 = time.perf_counter()
    with stablejit.lazy() as backend:
        out = run()
        t1 = time.perf_counter()
        backend.flush()
        t2 = time.perf_counter()
    result(out).block_until_ready()
    t3 = time.perf_counter()
    rec.append(t1 - t0)
    flush.append(t2 - t1)
    wait.append(t3 - t2)


def main() -> None:
    if not recorder_native.available():
        print(f"the native recorder is not built: {recorder_native.unavailable}")
        return
    was = recorder_native.installed()
    rows = []
    try:
        for name, fn, *shape in OPS:
            t = {}
            for native in (True, False, True, False):  # alternating, twice
                recorder_native.install(native)
                t.setdefault(native, []).append(per_op(fn, *shape))
            rows.append((name, min(t[True]), min(t[False])))
        splits, step_rows = {}, []
        for native in (True, False):
            recorder_native.install(native)
            splits[native] = chain_split()
            for name, run, result in _steps():
                step_rows.append((name, native, *step_split(run, result)))
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
    print("\ntraining steps written eagerly, in lazy() (median per step: the step's Python "
          "recorded, the flush, the wait for its program)")
    print(f"{'step':<22}{'path':<8}{'record':>12}{'flush':>12}{'run':>12}")
    for name, native, r, f, w in step_rows:
        print(f"{name:<22}{'native' if native else 'Python':<8}{r * 1e6:9.1f} us"
              f"{f * 1e6:9.1f} us{w * 1e6:9.1f} us")


if __name__ == "__main__":
    main()
