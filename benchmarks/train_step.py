"""MLP training step (forward + backward + Adam) at batch 128: stablejit vs jax.

    python benchmarks/train_step.py [--runs 200] [--sizes 64,128,10 784,512,512,10]

For each model it prints the steady-state time of one jitted step (median of --runs
calls, each waited for) and the time to trace + differentiate + emit the step
(stablejit: jit(step).lower(...), i.e. trace, the VJP transform, passes and StableHLO
text; jax: jax.jit(step).lower(...)), median of --lower-runs fresh traces. Both sides
write the same model and the same Adam update by hand; jax is the peer to beat.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np


def _median_time(fn, runs: int) -> float:
    fn()  # warm
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _init(sizes, seed=0):
    rng = np.random.default_rng(seed)
    return [{"w": (rng.standard_normal((m, n)) * np.sqrt(2.0 / m)).astype(np.float32),
             "b": np.zeros((n,), np.float32)} for m, n in zip(sizes[:-1], sizes[1:], strict=True)]


def _data(sizes, batch, seed=1):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, sizes[0])).astype(np.float32)
    y = rng.integers(0, sizes[-1], size=batch).astype(np.int32)
    return x, y


B1, B2, EPS, LR = 0.9, 0.999, 1e-8, 1e-3


def stablejit_step():
    import stablejit
    import stablejit.numpy as snp
    from stablejit import nn

    def loss_fn(params, x, y):
        h = x
        for layer in params[:-1]:
            h = nn.relu(h @ layer["w"] + layer["b"])
        logits = h @ params[-1]["w"] + params[-1]["b"]
        return nn.cross_entropy(logits, y)

    opt = nn.adam(LR, B1, B2, EPS)

    def step(params, state, x, y):
        loss, grads = stablejit.value_and_grad(loss_fn)(params, x, y)
        params, state = opt.update(grads, state, params)
        return params, state, loss

    def setup(params_np, x, y):
        params = stablejit.tree_map(snp.asarray, params_np)
        return params, opt.init(params), snp.asarray(x), snp.asarray(y)

    return step, setup, stablejit.jit


def jax_step():
    import jax
    import jax.numpy as jnp

    def loss_fn(params, x, y):
        h = x
        for layer in params[:-1]:
            h = jax.nn.relu(h @ layer["w"] + layer["b"])
        logits = h @ params[-1]["w"] + params[-1]["b"]
        logp = jax.nn.log_softmax(logits)
        return -jnp.mean(jnp.sum(jax.nn.one_hot(y, logits.shape[-1]) * logp, axis=-1))

    def step(params, state, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        t, m, v = state
        t = t + 1
        m = jax.tree.map(lambda m_, g: B1 * m_ + (1 - B1) * g, m, grads)
        v = jax.tree.map(lambda v_, g: B2 * v_ + (1 - B2) * g * g, v, grads)
        tf = t.astype(jnp.float32)
        alpha = LR * jnp.sqrt(1 - B2 ** tf) / (1 - B1 ** tf)
        params = jax.tree.map(lambda p, m_, v_: p - alpha * m_ / (jnp.sqrt(v_) + EPS),
                              params, m, v)
        return params, (t, m, v), loss

    def setup(params_np, x, y):
        params = jax.tree.map(jnp.asarray, params_np)
        zeros = jax.tree.map(jnp.zeros_like, params)
        return params, (jnp.zeros((), jnp.int32), zeros, zeros), jnp.asarray(x), jnp.asarray(y)

    return step, setup, jax.jit


def measure(sizes, batch: int, runs: int, lower_runs: int) -> dict:
    params_np = _init(sizes)
    x, y = _data(sizes, batch)
    out = {}
    for name, make in (("stablejit", stablejit_step), ("jax", jax_step)):
        step, setup, jit = make()
        args = setup(params_np, x, y)
        jitted = jit(step)
        state = {"args": args}

        def run(jitted=jitted, state=state):
            p, s, xx, yy = state["args"]
            p, s, loss = jitted(p, s, xx, yy)
            loss.block_until_ready()
            state["args"] = (p, s, xx, yy)

        out[(name, "step")] = _median_time(run, runs)
        # trace + transform + emit, from a fresh jit wrapper each time (no trace cache)
        out[(name, "lower")] = _median_time(
            lambda step=step, jit=jit, args=args: jit(lambda *a: step(*a)).lower(*args)
            .as_text(), lower_runs)
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=300)
    ap.add_argument("--lower-runs", type=int, default=15)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--sizes", nargs="*", default=["64,128,10", "784,512,512,10"])
    args = ap.parse_args(argv)
    print(f"MLP train step (forward + backward + adam), batch {args.batch}, host CPU; "
          f"median of {args.runs} steps / {args.lower_runs} lowerings")
    print(f"{'model':<18} {'what':<16} {'stablejit':>12} {'jax':>12} {'ratio':>7}")
    for spec in args.sizes:
        sizes = tuple(int(s) for s in spec.split(","))
        r = measure(sizes, args.batch, args.runs, args.lower_runs)
        for what, label in (("step", "step"), ("lower", "trace+emit")):
            a, b = r[("stablejit", what)], r[("jax", what)]
            print(f"{spec:<18} {label:<16} {a * 1e3:>10.3f}ms {b * 1e3:>10.3f}ms "
                  f"{a / b:>6.2f}x")


if __name__ == "__main__":
    main()
