"""Eager and lazy execution against jax in the same process (issue 12's targets).

    python benchmarks/lazy.py

Rows:
  - a chain of 30 elementwise ops with Python scalars on f32[1000]: stablejit lazy (the
    chain recorded, then run as one program when read) against jax's eager ops, and
    against jax.jit of the same chain; and stablejit.jit of the chain against jax.jit
    (the floor: the same compiled program with no recording);
  - single eager ops on f32[1000]: stablejit eager against jax eager; then namespace
    functions made of several primitives (one cached program each, as jax jits its
    jnp functions) on f32[128, 10], for information;
  - an MLP training step (64-128-10, batch 128, SGD) written eagerly and run lazily,
    against the same step under stablejit.jit; the same step run eagerly (not lazy)
    against jax's eager grad, and the eager grad of a small function, for information;
    and examples/digits_mlp.py's step (64-128-10, batch 32, adam) the same way;
  - on the host, the chain's and the two steps' rows again from a child process whose
    host client runs programs on the calling thread (STABLEJIT_CPU_ASYNC_DISPATCH=0),
    marked "(sync)": the same work without the hand-over to XLA's worker thread that
    sets the floor under the default, asynchronous rows (docs/native.md, "The floor
    under a lazy step"); jax shares that client, so its jax.jit is synchronous too.
Medians per call, measured in alternating batches (a busy machine slows both sides
alike); ratio = stablejit / peer (lower is better).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np
import stablejit
import stablejit.numpy as snp
from common import digits_setup, paired_per_call, table

X = np.linspace(-1, 1, 1000, dtype=np.float32)


def chain(m, x):
    for i in range(10):
        x = m.tanh(x * 1.001 + 0.01 * i) - 0.5
    return x


def mlp_step(m, params, x, y):
    def loss(p):
        h = m.maximum(x @ p[0] + p[1], 0.0)
        logits = h @ p[2] + p[3]
        logp = logits - m.log(m.sum(m.exp(logits), axis=1, keepdims=True))
        return -m.mean(m.take_along_axis(logp, y[:, None], axis=1))
    return loss


def main() -> None:
    rows = _chain_rows()
    xs, xj = snp.asarray(X), jnp.asarray(X)
    for name, ours, theirs in [
            ("x + 1.0", lambda: xs + 1.0, lambda: xj + 1.0),
            ("x * 2", lambda: xs * 2, lambda: xj * 2),
            ("sum(x)", lambda: snp.sum(xs), lambda: jnp.sum(xj)),
            ("x + x", lambda: xs + xs, lambda: xj + xj)]:
        t_ours, t_theirs = paired_per_call([lambda o=ours: o().block_until_ready(),
                                            lambda t=theirs: t().block_until_ready()])
        rows.append((f"eager {name}", t_ours, "jax eager", t_theirs, 1.0))
    # composites: several primitives, one cached program each (frontend/composite.py)
    L = np.random.default_rng(1).standard_normal((128, 10)).astype(np.float32)
    Y = np.random.default_rng(2).integers(0, 10, (128, 1)).astype(np.int32)
    ls, lj, ys, yj = snp.asarray(L), jnp.asarray(L), snp.asarray(Y), jnp.asarray(Y)
    for name, ours, theirs in [
            ("mean(l, axis=1, keepdims=True)", lambda: snp.mean(ls, axis=1, keepdims=True),
             lambda: jnp.mean(lj, axis=1, keepdims=True)),
            ("var(l, axis=0)", lambda: snp.var(ls, axis=0), lambda: jnp.var(lj, axis=0)),
            ("nn.log_softmax(l)", lambda: stablejit.nn.log_softmax(ls),
             lambda: jax.nn.log_softmax(lj)),
            ("take_along_axis(l, y, 1)", lambda: snp.take_along_axis(ls, ys, axis=1),
             lambda: jnp.take_along_axis(lj, yj, axis=1))]:
        t_ours, t_theirs = paired_per_call([lambda o=ours: o().block_until_ready(),
                                            lambda t=theirs: t().block_until_ready()])
        rows.append((f"eager {name}", t_ours, "jax eager", t_theirs, None))

    rows.extend(_mlp_rows())
    rows.extend(_digits_rows())
    if stablejit.default_platform() == "host":
        rows.extend(_synchronous_rows())
    table("eager and lazy (median per call; ratio = stablejit / peer)", rows)


def _chain_rows() -> list[tuple]:
    """The 30-op chain in lazy() against jax eager and jax.jit, and its floors."""
    xs, xj = snp.asarray(X), jnp.asarray(X)
    jax_chain = jax.jit(lambda x: chain(jnp, x))

    def lazy_chain():
        with stablejit.lazy():
            out = chain(snp, xs)
        out.block_until_ready()

    our_chain = stablejit.jit(lambda x: chain(snp, x))
    lazy_t, eager_t, jit_t, our_jit_t = paired_per_call(
        [lazy_chain, lambda: chain(jnp, xj).block_until_ready(),
         lambda: jax_chain(xj).block_until_ready(),
         lambda: our_chain(xs).block_until_ready()], inner=20)
    rows = [("30-op chain, lazy vs jax eager", lazy_t, "jax eager", eager_t, 0.2),
            ("30-op chain, lazy vs jax.jit", lazy_t, "jax.jit", jit_t, 1.5),
            # the floor under the two rows above: the same program with nothing recorded
            # (lazy minus this, over the chain's 40 namespace calls, is the recording cost)
            ("30-op chain, stablejit.jit vs jax.jit", our_jit_t, "jax.jit", jit_t, None)]
    # the floor under lazy on this platform: a lazy graph runs after its recording, and
    # PJRT's CPU client runs a program on the calling thread once its thread pool has
    # idled (~10 us), so the same compiled chain called after 50 us of Python (the
    # recording's length) is slower than back to back, as jax.jit is timed above
    after_jax, after_ours = _after_python(lambda: jax_chain(xj).block_until_ready(),
                                          lambda: our_chain(xs).block_until_ready())
    rows.append(("30-op chain program after 50 us of Python", after_ours, "jax.jit",
                 jit_t, None))
    rows.append(("  (jax.jit after 50 us of Python)", after_jax, "jax.jit", jit_t, None))
    return rows


def _mlp_rows(with_jax: bool = True) -> list[tuple]:
    """The MLP step (64-128-10, batch 128, SGD) written eagerly and run lazily, against
    the same step under stablejit.jit and not lazy, and its floor; with_jax, the same step
    not lazy against jax's eager grad, and the eager grad of a small function."""
    rng = np.random.default_rng(0)
    params = [rng.standard_normal((64, 128)).astype(np.float32) * 0.1,
              np.zeros(128, np.float32),
              rng.standard_normal((128, 10)).astype(np.float32) * 0.1,
              np.zeros(10, np.float32)]
    p_s = [snp.asarray(p) for p in params]
    xb = snp.asarray(rng.standard_normal((128, 64)).astype(np.float32))
    yb = snp.asarray(rng.integers(0, 10, 128).astype(np.int32))

    def step(p, x, y):
        g = stablejit.grad(mlp_step(snp, p, x, y))(p)
        return [a - 0.1 * b for a, b in zip(p, g, strict=True)]

    jitted = stablejit.jit(step)

    def lazy_step():
        with stablejit.lazy():
            out = step(p_s, xb, yb)
        out[0].block_until_ready()

    def eager_step():
        step(p_s, xb, yb)[0].block_until_ready()

    t_lazy, t_jit, t_eager = paired_per_call(
        [lazy_step, lambda: jitted(p_s, xb, yb)[0].block_until_ready(), eager_step],
        inner=10)
    # its floor, as the chain's above: the lazy step's program runs after its recording
    # (~15-60 us of Python), and the same jitted step called after that much Python is
    # slower than back to back (docs/native.md, "The floor under a lazy step")
    after_step, = _after_python(lambda: jitted(p_s, xb, yb)[0].block_until_ready(),
                                spin=60e-6)
    rows = [("MLP step written eagerly, lazy", t_lazy, "stablejit.jit", t_jit, 1.5),
            ("  the same, lazy vs not lazy", t_lazy, "not lazy", t_eager, 1.0),
            ("  MLP jitted step after 60 us of Python", after_step, "stablejit.jit", t_jit,
             None)]
    if not with_jax:
        return rows
    p_j, xj_b, yj_b = [jnp.asarray(p) for p in params], jnp.asarray(xb), jnp.asarray(yb)

    def jax_step():
        g = jax.grad(mlp_step(jnp, p_j, xj_b, yj_b))(p_j)
        return [a - 0.1 * b for a, b in zip(p_j, g, strict=True)]

    # (jax's eager step, ~4 ms of dispatch that leaves its thread pool busy, is timed in
    # its own pairing: next to the rows above it slowed whichever call came after it)
    t_eager_j, t_jax = paired_per_call([eager_step,
                                        lambda: jax_step()[0].block_until_ready()], inner=5)
    rows.append(("MLP step written eagerly, not lazy", t_eager_j, "jax eager", t_jax, None))
    # eager grad of a small function: recorded on a grad tape (grad_tape.py), the
    # derivative built once; jax traces it every call
    w, wj = snp.asarray(params[3]), jnp.asarray(params[3])
    small, small_j = stablejit.grad(lambda v: snp.sum(v * v)), jax.grad(lambda v: jnp.sum(v * v))
    t_small, t_small_j = paired_per_call([lambda: small(w).block_until_ready(),
                                          lambda: small_j(wj).block_until_ready()])
    rows.append(("eager grad(sum(v * v)), not lazy", t_small, "jax eager", t_small_j, None))
    return rows


def _synchronous_rows() -> list[tuple]:
    """The chain's and the two training steps' rows again in a child process whose host
    client runs each program on the calling thread (STABLEJIT_CPU_ASYNC_DISPATCH=0): no
    hand-over to an idle worker thread, the floor under the rows above (docs/native.md,
    "The floor under a lazy step"). Its jit, jax and eager sides run there too."""
    env = dict(os.environ, STABLEJIT_CPU_ASYNC_DISPATCH="0")
    out = subprocess.run([sys.executable, __file__, "--steps-json"], env=env, check=True,
                         capture_output=True, text=True).stdout
    rows = json.loads(out.strip().splitlines()[-1])
    return [(f"{name} (sync)", ours, peer_name, peer, target)
            for name, ours, peer_name, peer, target in rows]


def _after_python(*fns, spin: float = 50e-6, n: int = 400) -> list[float]:
    """Median seconds of each call made after `spin` seconds of Python work (timed from
    the call only), alternating between the functions."""
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(n):
        for fn, ts in zip(fns, times, strict=True):
            end = time.perf_counter() + spin
            while time.perf_counter() < end:
                pass
            t0 = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t0)
    return [float(np.median(ts)) for ts in times]


def _digits_rows():
    """examples/digits_mlp.py's train step (forward, value_and_grad, adam), written
    eagerly and run lazily, against the example's jitted step and against itself not
    lazy."""
    digits, x, y, opt, params, state = digits_setup()

    def step(p, s, xb, yb):
        loss, grads = stablejit.value_and_grad(digits.loss_fn)(p, xb, yb)
        p, s = opt.update(grads, s, p)
        return p, s, loss

    jitted = digits.make_train_step(opt)

    def lazy_step():
        with stablejit.lazy():
            out = step(params, state, x, y)
        out[2].block_until_ready()

    t_lazy, t_jit, t_eager = paired_per_call(
        [lazy_step, lambda: jitted(params, state, x, y)[2].block_until_ready(),
         lambda: step(params, state, x, y)[2].block_until_ready()], inner=10)
    return [("digits MLP step (adam) written eagerly, lazy", t_lazy, "stablejit.jit", t_jit,
             1.5),
            ("  the same, lazy vs not lazy", t_lazy, "not lazy", t_eager, 1.0)]


if __name__ == "__main__":
    if "--steps-json" in sys.argv:  # (_synchronous_rows' child)
        print(json.dumps(_chain_rows()[1:3] + _mlp_rows(with_jax=False) + _digits_rows()))
    else:
        main()
