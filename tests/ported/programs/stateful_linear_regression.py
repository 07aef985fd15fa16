"""Stateful computations: a counter and linear regression with explicit state.

Port of docs/stateful-computations.md (jax-ml/jax): the `Counter` whose side effect
runs once at trace time (so `jax.jit(counter.count)` keeps returning 1), the
`CounterV2` that threads its state, and linear regression whose parameters are a
`NamedTuple` pytree, initialised from `jax.random.key` and `split`, updated by
`jax.grad` and `jax.tree.map` under `jax.jit`. Shortened from 1000 steps to 200.
"""

from typing import NamedTuple

import jax
import jax.numpy as jnp


class Counter:
    """A simple counter."""

    def __init__(self):
        self.n = 0

    def count(self) -> int:
        """Increments the counter and returns the new value."""
        self.n += 1
        return self.n

    def reset(self):
        """Resets the counter to zero."""
        self.n = 0


CounterState = int


class CounterV2:

    def count(self, n: CounterState) -> tuple[int, CounterState]:
        # You could just return n+1, but here we separate its role as
        # the output and as the counter state for didactic purposes.
        return n+1, n+1

    def reset(self) -> CounterState:
        return 0


class Params(NamedTuple):
    weight: jnp.ndarray
    bias: jnp.ndarray


def init(rng) -> Params:
    """Returns the initial model params."""
    weights_key, bias_key = jax.random.split(rng)
    weight = jax.random.normal(weights_key, ())
    bias = jax.random.normal(bias_key, ())
    return Params(weight, bias)


def loss(params: Params, x: jnp.ndarray, y: jnp.ndarray) -> jnp.ndarray:
    """Computes the least squares error of the model's predictions on x against y."""
    pred = params.weight * x + params.bias
    return jnp.mean((pred - y) ** 2)


LEARNING_RATE = 0.005


@jax.jit
def update(params: Params, x: jnp.ndarray, y: jnp.ndarray) -> Params:
    """Performs one SGD update step on params using the given data."""
    grad = jax.grad(loss)(params, x, y)
    new_params = jax.tree.map(
        lambda param, g: param - g * LEARNING_RATE, params, grad)
    return new_params


def main():
    counter = Counter()
    plain = [counter.count() for _ in range(3)]

    counter.reset()
    fast_count = jax.jit(counter.count)
    jitted = [fast_count() for _ in range(3)]

    counter_v2 = CounterV2()
    state = counter_v2.reset()
    fast_count_v2 = jax.jit(counter_v2.count)
    threaded = []
    for _ in range(3):
        value, state = fast_count_v2(state)
        threaded.append(value)

    rng = jax.random.key(42)

    # Generate true data from y = w*x + b + noise
    true_w, true_b = 2, -1
    x_rng, noise_rng = jax.random.split(rng)
    xs = jax.random.normal(x_rng, (128, 1))
    noise = jax.random.normal(noise_rng, (128, 1)) * 0.5
    ys = xs * true_w + true_b + noise

    # Fit regression
    params = init(rng)
    for _ in range(200):
        params = update(params, xs, ys)

    return {"plain": plain, "jitted": jitted, "threaded": threaded,
            "params": params, "fit": params.weight * xs + params.bias}
