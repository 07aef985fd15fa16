"""The foundation benchmark: stablejit against jax (and NumPy) in one process.

    python benchmarks/run.py            (or: make bench)

Prints medians and ratios (stablejit / peer; lower is better) for: a cached jit call
of x+y on f32[4], with PJRT's own share of it; one eager add on f32[4]; the 64-128-10
MLP train step at batch 128; trace+emit of a 10-layer 256-wide tanh MLP
against jax.jit(f).lower; the first call (trace+compile); the steady-state MLP forward
at batch 32; and the {10000,784}.{784,10} matmul.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
# Cold compiles on both sides: no persistent cache (benchmarks/cache.py measures that).
os.environ.setdefault("STABLEJIT_CACHE", "0")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import stablejit  # noqa: E402
import stablejit.numpy as snp  # noqa: E402
from common import once_each, paired_per_call, per_call, table  # noqa: E402
from stablejit import compilation  # noqa: E402

LAYERS, WIDTH = 10, 256


def mlp(np_mod):
    def forward(params, x):
        for w, b in params:
            x = np_mod.tanh(x @ w + b)
        return x
    return forward


def train_step_row() -> tuple:
    """The 64-128-10 MLP train step (forward, backward, Adam; 15 argument leaves) at
    batch 128, both sides alternating (benchmarks/train_step.py has the larger model)."""
    import train_step as ts  # noqa: PLC0415

    sizes = (64, 128, 10)
    params_np, (x, y) = ts._init(sizes), ts._data(sizes, 128)
    runs = []
    for make in (ts.stablejit_step, ts.jax_step):
        step, setup, jit = make()
        jitted, state = jit(step), {"args": setup(params_np, x, y)}

        def run(jitted=jitted, state=state):
            p, s, xx, yy = state["args"]
            p, s, loss = jitted(p, s, xx, yy)
            loss.block_until_ready()
            state["args"] = (p, s, xx, yy)
        runs.append(run)
    ours, peer = paired_per_call(runs, inner=50)
    return ("train step MLP 64-128-10, batch 128", ours, "jax", peer, 1.05)


def main() -> None:
    rng = np.random.default_rng(0)
    x4 = np.arange(4, dtype=np.float32)
    sx, sy = snp.asarray(x4), snp.asarray(x4 + 1)
    jx, jy = jnp.asarray(x4), jnp.asarray(x4 + 1)

    s_add = stablejit.jit(lambda a, b: a + b)
    j_add = jax.jit(lambda a, b: a + b)
    s_add(sx, sy), j_add(jx, jy)
    # the floor under our cached call: PJRT's execute alone, and with the C++ result
    # handlers that make the output buffers (what Program.run calls)
    prog = next(iter(s_add._fast.values())).prog
    execute, handlers, bufs = prog.execute, prog.handlers, [sx._data, sy._data]
    call, j_call, pjrt, pjrt_out = paired_per_call(
        [lambda: s_add(sx, sy), lambda: j_add(jx, jy), lambda: execute(bufs),
         lambda: execute(bufs).consume_with_handlers(handlers)], inner=2000)
    rows = [("cached jit call x+y f32[4]", call, "jax", j_call, 1.0),
            ("  of which PJRT execute_sharded alone", pjrt, "jax", j_call, None),
            ("  of which execute + C++ result handlers", pjrt_out, "jax", j_call, None),
            ("  our Python on top (target <= 1 us)", call - pjrt_out, "jax", j_call, None),
            ("eager add f32[4]", per_call(lambda: sx + sy, inner=2000),
             "jax", per_call(lambda: jx + jy, inner=2000), 1.0)]
    rows.append(train_step_row())

    params_np = [((rng.standard_normal((WIDTH, WIDTH)) / np.sqrt(WIDTH)).astype(np.float32),
                  np.zeros(WIDTH, np.float32)) for _ in range(LAYERS)]
    s_params = [(snp.asarray(w), snp.asarray(b)) for w, b in params_np]
    j_params = [(jnp.asarray(w), jnp.asarray(b)) for w, b in params_np]
    xb = rng.standard_normal((32, WIDTH)).astype(np.float32)
    s_xb, j_xb = snp.asarray(xb), jnp.asarray(xb)
    s_fwd, j_fwd = mlp(snp), mlp(jnp)

    # fresh functions each round, so neither side reuses a cached trace
    rows.append(("trace+emit MLP 10x256 (vs jax lower)",
                 once_each(lambda: lambda: stablejit.jit(mlp(snp)).lower(s_params, s_xb)
                           .as_text(), repeat=15),
                 "jax", once_each(lambda: lambda: jax.jit(mlp(jnp)).lower(j_params, j_xb)
                                  .as_text(), repeat=15), 1.0))

    def s_first():
        compilation.clear_memory_cache()  # a real compile, not the process-wide cache
        f = stablejit.jit(lambda p, x: s_fwd(p, x))
        return lambda: f(s_params, s_xb).block_until_ready()

    def j_first():
        f = jax.jit(lambda p, x: j_fwd(p, x))
        return lambda: f(j_params, j_xb).block_until_ready()

    rows.append(("first call MLP (trace+compile)", once_each(s_first, repeat=5), "jax",
                 once_each(j_first, repeat=5), None))

    s_mlp, j_mlp = stablejit.jit(s_fwd), jax.jit(j_fwd)
    rows.append(("steady-state MLP forward, batch 32",
                 per_call(lambda: s_mlp(s_params, s_xb).block_until_ready(), inner=50),
                 "jax", per_call(lambda: j_mlp(j_params, j_xb).block_until_ready(), inner=50),
                 1.1))

    a = rng.standard_normal((10_000, 784), dtype=np.float32)
    b = rng.standard_normal((784, 10), dtype=np.float32)
    sa, sb, ja, jb = snp.asarray(a), snp.asarray(b), jnp.asarray(a), jnp.asarray(b)
    s_mm, j_mm = stablejit.jit(lambda p, q: p @ q), jax.jit(lambda p, q: p @ q)
    s_mm_t = per_call(lambda: s_mm(sa, sb).block_until_ready(), inner=10)
    rows.append(("matmul {10000,784}.{784,10} jit", s_mm_t, "jax",
                 per_call(lambda: j_mm(ja, jb).block_until_ready(), inner=10), None))
    rows.append(("matmul {10000,784}.{784,10} jit", s_mm_t, "numpy",
                 per_call(lambda: a @ b, inner=10), None))
    table(f"stablejit {stablejit.__version__} vs jax {jax.__version__} "
          f"({jax.devices()[0].platform})", rows)


if __name__ == "__main__":
    main()
