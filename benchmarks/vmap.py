"""vmap against jax in the same process: per-example gradients, Jacobians, trace time.

    python benchmarks/vmap.py

Cases (issue 11's targets in the last column):
  - per-example gradients of the digits MLP (64-128-10), vmap(grad(loss),
    in_axes=(None, 0, 0)) at batch 128, jitted: steady-state time per call;
  - jacrev of tanh(W x) for R^200 -> R^200 and hessian of a scalar function of R^100,
    jitted: steady-state time per call;
  - trace + transform time: jit(vmap(f)).lower(...) of an MLP, median of fresh traces.
The ratio is stablejit / jax (lower is better).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import stablejit
import stablejit.numpy as snp
from common import once_each, per_call, table

rng = np.random.default_rng(0)
SIZES = (64, 128, 10)
PARAMS = [{"w": (rng.standard_normal((m, n)) * np.sqrt(2.0 / m)).astype(np.float32),
           "b": np.zeros((n,), np.float32)} for m, n in zip(SIZES[:-1], SIZES[1:], strict=True)]
X = rng.standard_normal((128, SIZES[0])).astype(np.float32)
Y = rng.integers(0, SIZES[-1], 128).astype(np.int32)
A = (rng.standard_normal((200, 200)) / 15).astype(np.float32)
V200 = rng.standard_normal(200).astype(np.float32)
V100 = rng.standard_normal(100).astype(np.float32)


def mlp_loss(m, log_softmax):
    def loss(params, x, y):
        h = x
        for layer in params[:-1]:
            h = m.maximum(h @ layer["w"] + layer["b"], 0.0)
        logits = h @ params[-1]["w"] + params[-1]["b"]
        return -log_softmax(logits)[y]
    return loss


def _block(out):
    for leaf in jax.tree_util.tree_leaves(out):
        leaf.block_until_ready()


def main() -> None:
    ours_pe = stablejit.jit(stablejit.vmap(
        stablejit.grad(mlp_loss(snp, stablejit.nn.log_softmax)), in_axes=(None, 0, 0)))
    jax_pe = jax.jit(jax.vmap(jax.grad(mlp_loss(jnp, jax.nn.log_softmax)),
                              in_axes=(None, 0, 0)))
    p_ours = stablejit.tree_map(snp.asarray, PARAMS)
    x_ours, y_ours = snp.asarray(X), snp.asarray(Y)
    p_jax = jax.tree_util.tree_map(jnp.asarray, PARAMS)
    x_jax, y_jax = jnp.asarray(X), jnp.asarray(Y)

    ours_jr = stablejit.jit(stablejit.jacrev(lambda v: snp.tanh(snp.asarray(A) @ v)))
    jax_jr = jax.jit(jax.jacrev(lambda v: jnp.tanh(jnp.asarray(A) @ v)))
    ours_h = stablejit.jit(stablejit.hessian(lambda v: snp.sum(snp.sin(v) * v ** 3)))
    jax_h = jax.jit(jax.hessian(lambda v: jnp.sum(jnp.sin(v) * v ** 3)))

    rows = [
        ("per-example grads, MLP 64-128-10, batch 128",
         per_call(lambda: _block(ours_pe(p_ours, x_ours, y_ours)), inner=20),
         "jax", per_call(lambda: _block(jax_pe(p_jax, x_jax, y_jax)), inner=20), 1.1),
        ("jacrev R^200 -> R^200",
         per_call(lambda: _block(ours_jr(snp.asarray(V200))), inner=20),
         "jax", per_call(lambda: _block(jax_jr(jnp.asarray(V200))), inner=20), 1.2),
        ("hessian of R^100 -> R",
         per_call(lambda: _block(ours_h(snp.asarray(V100))), inner=20),
         "jax", per_call(lambda: _block(jax_h(jnp.asarray(V100))), inner=20), 1.2),
    ]

    def ours_lower():
        f = stablejit.jit(stablejit.vmap(mlp_loss(snp, stablejit.nn.log_softmax),
                                         in_axes=(None, 0, 0)))
        return lambda: f.lower(p_ours, x_ours, y_ours)

    def jax_lower():
        f = jax.jit(jax.vmap(mlp_loss(jnp, jax.nn.log_softmax), in_axes=(None, 0, 0)))
        return lambda: f.lower(p_jax, x_jax, y_jax)

    rows.append(("trace + transform: jit(vmap(mlp)).lower", once_each(ours_lower, repeat=9),
                 "jax", once_each(jax_lower, repeat=9), 1.0))
    table("vmap (median per call; ratio = stablejit / jax)", rows)


if __name__ == "__main__":
    main()
