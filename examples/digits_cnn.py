"""Train a small convolutional network on scikit-learn's bundled 8x8 digits (no download).

    conv 3x3 (1 -> 16) -> relu -> max pool 2x2 -> conv 3x3 (16 -> 32) -> relu -> max pool 2x2
    -> dense (128 -> 64) -> relu -> dense (64 -> 10)

Images are NHWC and kernels HWIO. The whole training step — forward pass, the gradient
(stablejit.value_and_grad: the VJP of convolutions is two more convolutions, that of max
pooling a select_and_scatter) and the Adam update — is one jitted, compiled program.

    python examples/digits_cnn.py [--epochs 15]   # loss per epoch, then test accuracy
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import stablejit
import stablejit.numpy as snp
from stablejit import conv, nn

LAYOUT = ("NHWC", "HWIO", "NHWC")


def load(seed: int = 0, test_fraction: float = 0.2, n_train: int | None = None):
    """(x_train, y_train, x_test, y_test): images (N, 8, 8, 1) in [0, 1], int32 labels."""
    from sklearn.datasets import load_digits

    digits = load_digits()
    x = (digits.images / 16.0).astype(np.float32)[..., None]  # pixels are 0..16
    y = digits.target.astype(np.int32)
    order = np.random.default_rng(seed).permutation(len(x))
    n_test = int(len(x) * test_fraction)
    test, train = order[:n_test], order[n_test:]
    if n_train is not None:
        train = train[:n_train]
    return x[train], y[train], x[test], y[test]


def init_params(rng: np.random.Generator, channels=(16, 32), hidden: int = 64):
    c1, c2 = channels
    z = lambda n: snp.zeros((n,), snp.float32)  # noqa: E731
    return {
        "conv1": {"w": nn.he_normal(rng, (3, 3, 1, c1)), "b": z(c1)},
        "conv2": {"w": nn.he_normal(rng, (3, 3, c1, c2)), "b": z(c2)},
        "dense1": {"w": nn.he_normal(rng, (2 * 2 * c2, hidden)), "b": z(hidden)},
        "dense2": {"w": nn.glorot_normal(rng, (hidden, 10)), "b": z(10)},
    }


def forward(params, x):
    """Logits (N, 10) for images x (N, 8, 8, 1)."""
    for name in ("conv1", "conv2"):  # 8x8 -> 4x4 -> 2x2
        layer = params[name]
        x = conv.conv2d(x, layer["w"], padding="SAME", layout=LAYOUT) + layer["b"]
        x = conv.max_pool(nn.relu(x), 2, layout="NHWC")
    x = snp.reshape(x, (x.shape[0], -1))
    x = nn.relu(x @ params["dense1"]["w"] + params["dense1"]["b"])
    return x @ params["dense2"]["w"] + params["dense2"]["b"]


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


def main(epochs: int = 15, batch_size: int = 32, learning_rate: float = 3e-3,
         channels=(16, 32), hidden: int = 64, n_train: int | None = None, seed: int = 0,
         verbose: bool = True) -> float:
    """Train; return the accuracy on the held-out 20% of the images. `n_train` limits the
    training images (all ~1437 by default)."""
    t0 = time.perf_counter()
    x_train, y_train, x_test, y_test = load(seed, n_train=n_train)
    rng = np.random.default_rng(seed)
    params = init_params(rng, channels, hidden)
    optimizer = nn.adam(learning_rate)
    opt_state = optimizer.init(params)
    train_step = make_train_step(optimizer)
    n_batches = len(x_train) // batch_size
    for epoch in range(epochs):
        order = rng.permutation(len(x_train))
        losses = []
        for i in range(n_batches):  # every batch has the same shape: one compilation
            idx = order[i * batch_size:(i + 1) * batch_size]
            params, opt_state, loss = train_step(params, opt_state, x_train[idx], y_train[idx])
            losses.append(loss)
        if verbose:
            mean = float(np.mean([float(v) for v in losses]))
            print(f"epoch {epoch + 1:3d}  loss {mean:.4f}")
    predictions = np.asarray(predict(params, x_test))
    accuracy = float(np.mean(predictions == y_test))
    if verbose:
        print(f"test accuracy {accuracy:.4f} ({len(y_test)} images) in "
              f"{time.perf_counter() - t0:.1f} s")
    return accuracy


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=15)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--learning-rate", type=float, default=3e-3)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    main(a.epochs, a.batch_size, a.learning_rate, seed=a.seed)
