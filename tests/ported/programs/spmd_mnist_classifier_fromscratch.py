"""Data-parallel MNIST training with pmap, written from scratch.

Port of examples/spmd_mnist_classifier_fromscratch.py (jax-ml/jax): the update is
`pmap`ped over the devices with `axis_name="batch"`, gradients are summed across them
with `lax.psum`, and the parameters are replicated with a leading device axis
(`np.broadcast_to`) and unreplicated with `x[0]`. MNIST is replaced by synthetic data
(no download) and the sizes are shrunk; on one device the program runs as written.
"""

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import numpy.random as npr
from jax import grad, lax, pmap
from jax.scipy.special import logsumexp
from jax.tree_util import tree_map


def init_random_params(scale, layer_sizes, rng=npr.RandomState(0)):  # noqa: B008
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


def main():
    layer_sizes = [64, 32, 10]
    param_scale = 0.1
    step_size = 0.1
    num_devices = jax.device_count()
    batch_size = 8 * num_devices
    rng = npr.RandomState(1)
    images = rng.rand(64, 64).astype(np.float32)
    labels = np.eye(10, dtype=np.float32)[rng.randint(0, 10, 64)]

    @partial(pmap, axis_name='batch')
    def spmd_update(params, batch):
        grads = grad(loss)(params, batch)
        grads = [(lax.psum(dw, 'batch'), lax.psum(db, 'batch')) for dw, db in grads]
        return [(w - step_size * dw, b - step_size * db)
                for (w, b), (dw, db) in zip(params, grads)]

    init_params = init_random_params(param_scale, layer_sizes)
    replicate_array = lambda x: np.broadcast_to(x, (num_devices,) + x.shape)
    replicated_params = tree_map(replicate_array, init_params)
    for i in range(0, 64, batch_size):
        imgs = images[i:i + batch_size].reshape(num_devices, batch_size // num_devices, -1)
        lbls = labels[i:i + batch_size].reshape(num_devices, batch_size // num_devices, -1)
        replicated_params = spmd_update(replicated_params, (imgs, lbls))
    params = tree_map(lambda x: x[0], replicated_params)
    return {"loss": loss(params, (images, labels)), "params": params}
