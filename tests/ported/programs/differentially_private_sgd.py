"""Differentially private SGD: per-example gradients, clipped, summed and noised.

Port of examples/differentially_private_sgd.py (jax-ml/jax): `private_grad` as in the
example (`vmap` of `partial(_clipped_grad, params)` over examples that keep a dummy
batch dimension, `tree_util.tree_flatten`/`tree_unflatten`/`tree_map`, the global norm
by `jnp.linalg.norm` of per-leaf norms, `stop_gradient`, `random.fold_in` of the step
into the key) inside `jit`, and the non-private update beside it. The list and tuple it
passes to `jnp.linalg.norm` and `jnp.amax` are wrapped in `jnp.array`, as today's jax
requires. The stax conv net becomes a two-layer MLP on 8x8 synthetic "images" written
with jax.numpy (stax and optimizers are jax.example_libraries, outside the port); MNIST
becomes synthetic data.
"""

from functools import partial

import jax.numpy as jnp
import numpy.random as npr
from jax import grad, jit, random, tree_util, vmap
from jax.lax import stop_gradient
from jax.nn import log_softmax, relu


def init_random_params(key, layer_sizes):
    keys = random.split(key, len(layer_sizes) - 1)
    return [(random.normal(k, (m, n)) / jnp.sqrt(m), jnp.zeros(n))
            for k, m, n in zip(keys, layer_sizes[:-1], layer_sizes[1:])]


def predict(params, inputs):
    x = inputs.reshape(inputs.shape[:-3] + (-1,))  # Flatten
    for w, b in params[:-1]:
        x = relu(x @ w + b)
    w, b = params[-1]
    return x @ w + b


def loss(params, batch):
    inputs, targets = batch
    logits = predict(params, inputs)
    logits = log_softmax(logits)  # log normalize
    return -jnp.mean(jnp.sum(logits * targets, axis=1))  # cross entropy loss


def accuracy(params, batch):
    inputs, targets = batch
    target_class = jnp.argmax(targets, axis=1)
    predicted_class = jnp.argmax(predict(params, inputs), axis=1)
    return jnp.mean(predicted_class == target_class)


def private_grad(params, batch, rng, l2_norm_clip, noise_multiplier, batch_size):
    """Return differentially private gradients for params, evaluated on batch."""

    def _clipped_grad(params, single_example_batch):
        """Evaluate gradient for a single-example batch and clip its grad norm."""
        grads = grad(loss)(params, single_example_batch)
        nonempty_grads, tree_def = tree_util.tree_flatten(grads)
        total_grad_norm = jnp.linalg.norm(
            jnp.array([jnp.linalg.norm(neg.ravel()) for neg in nonempty_grads]))
        divisor = stop_gradient(jnp.amax(jnp.array((total_grad_norm / l2_norm_clip, 1.))))
        normalized_nonempty_grads = [g / divisor for g in nonempty_grads]
        return tree_util.tree_unflatten(tree_def, normalized_nonempty_grads)

    px_clipped_grad_fn = vmap(partial(_clipped_grad, params))
    std_dev = l2_norm_clip * noise_multiplier
    noise_ = lambda n: n + std_dev * random.normal(rng, n.shape)
    normalize_ = lambda n: n / float(batch_size)
    tree_map = tree_util.tree_map
    sum_ = lambda n: jnp.sum(n, 0)  # aggregate
    aggregated_clipped_grads = tree_map(sum_, px_clipped_grad_fn(batch))
    noised_aggregated_clipped_grads = tree_map(noise_, aggregated_clipped_grads)
    normalized_noised_aggregated_clipped_grads = (
        tree_map(normalize_, noised_aggregated_clipped_grads))
    return normalized_noised_aggregated_clipped_grads


def shape_as_image(images, labels, dummy_dim=False):
    target_shape = (-1, 1, 8, 8, 1) if dummy_dim else (-1, 8, 8, 1)
    return jnp.reshape(images, target_shape), labels


def synthetic_images(num, rng, num_classes=10):
    prototypes = npr.RandomState(1234).rand(num_classes, 64)
    labels = rng.randint(num_classes, size=num)
    images = prototypes[labels] + 0.5 * rng.randn(num, 64)
    return images.astype("float32"), (labels[:, None] == range(num_classes)).astype("float32")


def main():
    learning_rate, noise_multiplier, l2_norm_clip = .15, 1.1, 1.0
    batch_size, num_steps, seed = 32, 6, 0

    data_rng = npr.RandomState(seed)
    train_images, train_labels = synthetic_images(batch_size * num_steps, data_rng)
    test_images, test_labels = synthetic_images(128, data_rng)
    key = random.PRNGKey(seed)

    def sgd_update(i, g, params):
        # optimizers.sgd(learning_rate), written out.
        return tree_util.tree_map(lambda p, g: p - learning_rate * g, params, g)

    @jit
    def update(_, i, params, batch):
        return sgd_update(i, grad(loss)(params, batch), params)

    @jit
    def private_update(rng, i, params, batch):
        rng = random.fold_in(rng, i)  # get new key for new random numbers
        return sgd_update(
            i, private_grad(params, batch, rng, l2_norm_clip, noise_multiplier, batch_size),
            params)

    init_params = init_random_params(key, [64, 32, 10])
    private, public = init_params, init_params
    for i in range(num_steps):
        sl = slice(i * batch_size, (i + 1) * batch_size)
        batch = (train_images[sl], train_labels[sl])
        private = private_update(key, i, private, shape_as_image(*batch, dummy_dim=True))
        public = update(key, i, public, shape_as_image(*batch))

    test_batch = shape_as_image(test_images, test_labels)
    return {"private_params": private, "public_params": public,
            "private_loss": loss(private, test_batch), "public_loss": loss(public, test_batch),
            "private_accuracy": accuracy(private, test_batch),
            "public_accuracy": accuracy(public, test_batch)}
