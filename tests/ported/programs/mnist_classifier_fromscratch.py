"""A basic MNIST-style classifier using NumPy and JAX.

Port of examples/mnist_classifier_fromscratch.py (jax-ml/jax): an MLP written from
scratch (list of (w, b) pairs, tanh, log-softmax via logsumexp), trained with plain SGD
under `jit(update)` on minibatches from a NumPy data stream. MNIST is replaced by a small
synthetic ten-class data set (class prototypes plus noise, fixed NumPy seed).
"""

import jax.numpy as jnp
import numpy.random as npr
from jax import grad, jit
from jax.scipy.special import logsumexp


def init_random_params(scale, layer_sizes, rng=None):
    rng = npr.RandomState(0) if rng is None else rng
    return [(scale * rng.randn(m, n), scale * rng.randn(n))
            for m, n, in zip(layer_sizes[:-1], layer_sizes[1:])]


def predict(params, inputs):
    activations = inputs
    for w, b in params[:-1]:
        outputs = jnp.dot(activations, w) + b
        activations = jnp.tanh(outputs)

    final_w, final_b = params[-1]
    logits = jnp.dot(activations, final_w) + final_b
    return logits - logsumexp(logits, axis=1, keepdims=True)


def loss(params, batch):
    inputs, targets = batch
    preds = predict(params, inputs)
    return -jnp.mean(jnp.sum(preds * targets, axis=1))


def accuracy(params, batch):
    inputs, targets = batch
    target_class = jnp.argmax(targets, axis=1)
    predicted_class = jnp.argmax(predict(params, inputs), axis=1)
    return jnp.mean(predicted_class == target_class)


def synthetic_digits(num, rng, num_features=64, num_classes=10):
    """Stand-in for datasets.mnist(): noisy copies of ten fixed prototypes, one-hot labels."""
    prototypes = npr.RandomState(1234).rand(num_classes, num_features)
    labels = rng.randint(num_classes, size=num)
    images = prototypes[labels] + 0.5 * rng.randn(num, num_features)
    return images.astype("float32"), (labels[:, None] == range(num_classes)).astype("float32")


def main():
    layer_sizes = [64, 48, 32, 10]
    param_scale = 0.1
    step_size = 0.5
    num_epochs = 3
    batch_size = 64

    data_rng = npr.RandomState(0)
    train_images, train_labels = synthetic_digits(512, data_rng)
    test_images, test_labels = synthetic_digits(512, data_rng)
    num_train = train_images.shape[0]
    num_complete_batches, leftover = divmod(num_train, batch_size)
    num_batches = num_complete_batches + bool(leftover)

    def data_stream():
        rng = npr.RandomState(0)
        while True:
            perm = rng.permutation(num_train)
            for i in range(num_batches):
                batch_idx = perm[i * batch_size:(i + 1) * batch_size]
                yield train_images[batch_idx], train_labels[batch_idx]

    batches = data_stream()

    @jit
    def update(params, batch):
        grads = grad(loss)(params, batch)
        return [(w - step_size * dw, b - step_size * db)
                for (w, b), (dw, db) in zip(params, grads)]

    params = init_random_params(param_scale, layer_sizes)
    accuracies = []
    for _ in range(num_epochs):
        for _ in range(num_batches):
            params = update(params, next(batches))
        train_acc = accuracy(params, (train_images, train_labels))
        test_acc = accuracy(params, (test_images, test_labels))
        accuracies.append((train_acc, test_acc))

    return {"params": params, "accuracies": accuracies,
            "test_loss": loss(params, (test_images, test_labels))}
