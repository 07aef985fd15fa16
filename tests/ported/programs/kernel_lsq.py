"""Kernel least squares: a Gram matrix by nested vmap, fitted by gradient descent.

Port of examples/kernel_lsq.py (jax-ml/jax): `gram` is two nested `vmap`s over a kernel
function, the objective is minimised with momentum under `jit(update)`, and the fitted
predictor is `jit(vmap(predict))`. The example's `optimizers.momentum` from
jax.example_libraries is written out (three lines) since that library is not part of
the port; sizes and step counts are shrunk.
"""

from functools import partial

import jax.numpy as jnp
import numpy.random as npr
from jax import grad, jit, vmap


def gram(kernel, xs):
    """A 2d array `a` such that `a[i, j] = kernel(xs[i], xs[j])`."""
    return vmap(lambda x: vmap(lambda y: kernel(x, y))(xs))(xs)


def momentum(step_size, mass):
    """jax.example_libraries.optimizers.momentum, written out."""
    def init(x0):
        return x0, jnp.zeros_like(x0)

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        return x - step_size * velocity, velocity

    def get_params(state):
        return state[0]

    return init, update, get_params


def minimize(f, x, num_steps=10000, step_size=0.000001, mass=0.9):
    opt_init, opt_update, get_params = momentum(step_size, mass)

    @jit
    def update(i, opt_state):
        x = get_params(opt_state)
        return opt_update(i, grad(f)(x), opt_state)

    opt_state = opt_init(x)
    for i in range(num_steps):
        opt_state = update(i, opt_state)
    return get_params(opt_state)


def train(kernel, xs, ys, regularization=0.01):
    gram_ = jit(partial(gram, kernel))
    gram_mat = gram_(xs)
    n = xs.shape[0]

    def objective(v):
        risk = .5 * jnp.sum((jnp.dot(gram_mat, v) - ys) ** 2.0)
        reg = regularization * jnp.sum(v ** 2.0)
        return risk + reg

    v = minimize(objective, jnp.zeros(n), num_steps=150, step_size=1e-5)

    def predict(x):
        prods = vmap(lambda x_: kernel(x, x_))(xs)
        return jnp.sum(v * prods)

    return jit(vmap(predict)), gram_mat


def main():
    n = 40
    d = 8
    rng = npr.RandomState(0)

    linear_kernel = lambda x, y: jnp.dot(x, y)
    truth = rng.randn(d)
    xs = rng.randn(n, d)
    ys = jnp.dot(xs, truth)

    predict, gram_mat = train(linear_kernel, xs, ys)
    rbf_kernel = lambda x, y: jnp.exp(-jnp.sum((x - y) ** 2))
    return {"mse": jnp.sum((predict(xs) - ys) ** 2.),
            "predictions": predict(xs),
            "gram_linear": gram_mat,
            "gram_rbf": jit(partial(gram, rbf_kernel))(xs[:10])}
