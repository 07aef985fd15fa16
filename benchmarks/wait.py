"""Waiting for a result: stablejit's wait (a short poll, then sleep) against PJRT's own
(sleep at once), and against jax.jit's wait, in the same process.

    python benchmarks/wait.py

Each row: a jitted tanh(a @ a) on an n x n f32 matrix, called and waited for at once
(block_until_ready), back to back. "no poll" is stablejit with the poll off
(runtime.buffers.WAIT_SPIN_SECONDS = 0, what PJRT does); jax.jit of the same function
waits as PJRT does. Medians per call over alternating batches; ratio = polling first /
peer (lower is better). The small rows show the wake-up the poll saves; the large ones
that a program using every core loses nothing to it.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import stablejit
import stablejit.numpy as snp
from common import table
from stablejit.runtime import buffers


def _timed(fns, batches: int, inner: int) -> list[float]:
    """Median seconds per call of each (fn, poll seconds), alternating batches."""
    import time
    times = [[] for _ in fns]
    for _ in range(batches):
        for (fn, spin), ts in zip(fns, times, strict=True):
            buffers.WAIT_SPIN_SECONDS, buffers._sleep_next = spin, 0
            t0 = time.perf_counter()
            for _ in range(inner):
                fn()
            ts.append((time.perf_counter() - t0) / inner)
    return [float(np.median(ts)) for ts in times]


def main() -> None:
    default = buffers.WAIT_SPIN_SECONDS
    rows = []
    try:
        for n in (64, 256, 512, 1024):
            a = np.random.default_rng(0).random((n, n), dtype=np.float32)
            xs, xj = snp.asarray(a), jnp.asarray(a)
            ours = stablejit.jit(lambda m: snp.tanh(m @ m))
            theirs = jax.jit(lambda m: jnp.tanh(m @ m))
            def call_ours(f=ours, x=xs):
                f(x).block_until_ready()

            def call_jax(f=theirs, x=xj):
                f(x).block_until_ready()

            call_ours(), call_jax()  # compiled
            poll, sleep, jx = _timed([(call_ours, default), (call_ours, 0.0),
                                      (call_jax, default)],
                                     batches=15, inner=max(3, 4000 // n))
            rows.append((f"tanh(a @ a) {n}x{n}, polling first", poll, "no poll",
                         sleep, None))
            rows.append((f"tanh(a @ a) {n}x{n}, polling first", poll, "jax.jit", jx, None))
    finally:
        buffers.WAIT_SPIN_SECONDS, buffers._sleep_next = default, 0
    table("waiting for a result (median per call; ratio = stablejit / peer)", rows)


if __name__ == "__main__":
    main()
