"""Differentially private SGD on scikit-learn's 8x8 digits, with per-example gradients
from stablejit.vmap (as JAX's examples/differentially_private_sgd.py does it).

Each step takes one gradient per example (`vmap(grad(loss), in_axes=(None, 0, 0))`),
clips each to an L2 norm of at most `CLIP`, sums them, adds Gaussian noise of scale
`NOISE * CLIP`, and averages: the update no longer depends much on any one example. The
whole step is one jitted, compiled program.

    python examples/per_example_gradients.py   # loss per epoch, then test accuracy
"""

from __future__ import annotations

import time

import numpy as np
import stablejit
import stablejit.numpy as snp
from stablejit import nn, random

CLIP = 1.0        # the largest L2 norm one example's gradient may have
NOISE = 0.5       # noise multiplier (standard deviation / CLIP)
LEARNING_RATE = 0.5
BATCH = 128
EPOCHS = 12


def load(seed: int = 0, test_fraction: float = 0.2):
    from sklearn.datasets import load_digits

    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float32)
    y = digits.target.astype(np.int32)
    order = np.random.default_rng(seed).permutation(len(x))
    n_test = int(len(x) * test_fraction)
    return x[order[n_test:]], y[order[n_test:]], x[order[:n_test]], y[order[:n_test]]


def init_params(rng: np.random.Generator, sizes):
    return [{"w": nn.he_normal(rng, (m, n)), "b": snp.zeros((n,), snp.float32)}
            for m, n in zip(sizes[:-1], sizes[1:], strict=True)]


def forward(params, x):
    for layer in params[:-1]:
        x = nn.relu(x @ layer["w"] + layer["b"])
    return x @ params[-1]["w"] + params[-1]["b"]


def loss(params, x, y):
    """The loss of ONE example (x: [64], y: a scalar label)."""
    logits = forward(params, x[None])
    return nn.cross_entropy(logits, y[None])


def clipped(grads):
    """One example's gradient scaled down to an L2 norm of at most CLIP."""
    leaves = stablejit.tree.leaves(grads)
    norm = snp.sqrt(sum(snp.sum(g * g) for g in leaves))
    scale = snp.minimum(1.0, CLIP / (norm + 1e-12))
    return stablejit.tree_map(lambda g: g * scale, grads)


@stablejit.jit
def private_step(params, key, x, y):
    per_example = stablejit.vmap(stablejit.grad(loss), in_axes=(None, 0, 0))(params, x, y)
    clipped_each = stablejit.vmap(clipped)(per_example)
    summed = stablejit.tree_map(lambda g: g.sum(axis=0), clipped_each)
    leaves, tree = stablejit.tree.flatten(summed)
    keys = random.split(key, len(leaves))
    noisy = [g + NOISE * CLIP * random.normal(keys[i], g.shape) for i, g in enumerate(leaves)]
    grads = stablejit.tree.unflatten(tree, [g / x.shape[0] for g in noisy])
    return stablejit.tree_map(lambda p, g: p - LEARNING_RATE * g, params, grads)


@stablejit.jit
def batch_loss(params, x, y):
    return nn.cross_entropy(forward(params, x), y)


def main() -> float:
    x_train, y_train, x_test, y_test = load()
    rng = np.random.default_rng(0)
    params = init_params(rng, [64, 64, 10])
    key = random.PRNGKey(0)
    steps = len(x_train) // BATCH
    start = time.perf_counter()
    for epoch in range(EPOCHS):
        order = rng.permutation(len(x_train))
        for s in range(steps):
            idx = order[s * BATCH:(s + 1) * BATCH]
            key, sub = random.split(key)
            params = private_step(params, sub, x_train[idx], y_train[idx])
        print(f"epoch {epoch + 1:2d}  train loss {float(batch_loss(params, x_train, y_train)):.4f}")
    seconds = time.perf_counter() - start
    predicted = np.asarray(snp.argmax(forward(params, snp.asarray(x_test)), axis=1))
    accuracy = float(np.mean(predicted == y_test))
    print(f"test accuracy {accuracy:.3f} (DP-SGD: clip {CLIP}, noise x{NOISE}; "
          f"{EPOCHS} epochs in {seconds:.1f} s)")
    return accuracy


if __name__ == "__main__":
    main()
