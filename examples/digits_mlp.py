"""Train a small MLP on scikit-learn's bundled 8x8 digits (no download) with stablejit.

The whole training step — forward pass, gradient (stablejit.value_and_grad, an IR
transform) and the Adam update — is one jitted, compiled program.

    python examples/digits_mlp.py            # prints the loss per epoch and test accuracy
"""

from __future__ import annotations

import time

import numpy as np
import stablejit
import stablejit.numpy as snp
from stablejit import nn


def load(seed: int = 0, test_fraction: float = 0.2):
    from sklearn.datasets import load_digits

    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float32)  # pixels are 0..16
    y = digits.target.astype(np.int32)
    order = np.random.default_rng(seed).permutation(len(x))
    n_test = int(len(x) * test_fraction)
    test, train = order[:n_test], order[n_test:]
    return x[train], y[train], x[test], y[test]


def init_params(rng: np.random.Generator, sizes):
    return [{"w": nn.he_normal(rng, (m, n)), "b": snp.zeros((n,), snp.float32)}
            for m, n in zip(sizes[:-1], sizes[1:], strict=True)]


def forward(params, x):
    for layer in params[:-1]:
        x = nn.relu(x @ layer["w"] + layer["b"])
    return x @ params[-1]["w"] + params[-1]["b"]


def loss_fn(params, x, y):
    return nn.cross_entropy(forward(params, x), y)


def make_train_step(optimizer):
    @stablejit.jit
    def train_step(params, opt_state, x, y):
        loss, grads = stablejit.value_and_grad(loss_fn)(params, x, y)
        params, opt_state = optimizer.update(grads, opt_state, params)
        return params, opt_state, loss

    return train_step


@stablejit.jit
def predict(params, x):
    return snp.argmax(forward(params, x), axis=-1)


def main(epochs: int = 30, hidden=(128,), batch_size: int = 32, learning_rate: float = 2e-3,
         seed: int = 0, verbose: bool = True) -> float:
    """Train and return the test accuracy."""
    t0 = time.perf_counter()
    x_train, y_train, x_test, y_test = load(seed)
    rng = np.random.default_rng(seed)
    params = init_params(rng, (x_train.shape[1], *hidden, 10))
    optimizer = nn.adam(learning_rate)
    opt_state = optimizer.init(params)
    train_step = make_train_step(optimizer)
    n_batches = len(x_train) // batch_size
    for epoch in range(epochs):
        order = rng.permutation(len(x_train))
        total = 0.0
        losses = []
        for i in range(n_batches):
            idx = order[i * batch_size:(i + 1) * batch_size]
            params, opt_state, loss = train_step(params, opt_state, x_train[idx], y_train[idx])
            losses.append(loss)
        total = float(np.mean([float(v) for v in losses]))
        if verbose:
            print(f"epoch {epoch + 1:3d}  loss {total:.4f}")
    predictions = np.asarray(predict(params, x_test))
    accuracy = float(np.mean(predictions == y_test))
    if verbose:
        print(f"test accuracy {accuracy:.4f} ({len(y_test)} images) in "
              f"{time.perf_counter() - t0:.1f} s")
    return accuracy


if __name__ == "__main__":
    main()
