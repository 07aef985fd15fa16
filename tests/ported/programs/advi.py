"""Automatic differentiation variational inference (ADVI) in JAX.

Port of examples/advi.py (jax-ml/jax): fits a diagonal Gaussian to an intractable,
unnormalized "funnel" density by differentiating through a Monte Carlo estimate of the
evidence lower bound. Exercises `random.PRNGKey(t)` of a traced step counter,
`random.split`, `vmap(..., in_axes=(0, None, None))`, `jax.scipy.stats.norm.logpdf`,
`grad` of a jitted function with a non-differentiated integer argument, and
`partial(jit, static_argnums=...)` with a function as a static argument. The example's
`optimizers.momentum` (jax.example_libraries) is written out; the plots become returned
arrays, and the run is shortened.
"""

from functools import partial

import jax.numpy as jnp
import jax.scipy.stats.norm as norm
from jax import grad, jit, random, vmap

# ========= Functions to define the evidence lower bound. =========


def diag_gaussian_sample(rng, mean, log_std):
    # Take a single sample from a diagonal multivariate Gaussian.
    return mean + jnp.exp(log_std) * random.normal(rng, mean.shape)


def diag_gaussian_logpdf(x, mean, log_std):
    # Evaluate a single point on a diagonal multivariate Gaussian.
    return jnp.sum(vmap(norm.logpdf)(x, mean, jnp.exp(log_std)))


def elbo(logprob, rng, mean, log_std):
    # Single-sample Monte Carlo estimate of the variational lower bound.
    sample = diag_gaussian_sample(rng, mean, log_std)
    return logprob(sample) - diag_gaussian_logpdf(sample, mean, log_std)


def batch_elbo(logprob, rng, params, num_samples):
    # Average over a batch of random samples.
    rngs = random.split(rng, num_samples)
    vectorized_elbo = vmap(partial(elbo, logprob), in_axes=(0, None, None))
    return jnp.mean(vectorized_elbo(rngs, *params))


# ========= Helper function for plotting. =========

@partial(jit, static_argnums=(0, 1, 2, 4))
def mesh_eval(func, x_limits, y_limits, params, num_ticks=101):
    # Evaluate func on a 2D grid defined by x_limits and y_limits.
    x = jnp.linspace(*x_limits, num=num_ticks)
    y = jnp.linspace(*y_limits, num=num_ticks)
    X, Y = jnp.meshgrid(x, y)
    xy_vec = jnp.stack([X.ravel(), Y.ravel()]).T
    zs = vmap(func, in_axes=(0, None))(xy_vec, params)
    return X, Y, zs.reshape(X.shape)


# ========= Define an intractable unnormalized density =========

def funnel_log_density(params):
    return norm.logpdf(params[0], 0, jnp.exp(params[1])) + \
        norm.logpdf(params[1], 0, 1.35)


def momentum(step_size, mass):
    """jax.example_libraries.optimizers.momentum over a tuple of arrays, written out."""
    def init(x0):
        return x0, tuple(jnp.zeros_like(x) for x in x0)

    def update(i, g, state):
        x, velocity = state
        velocity = tuple(mass * v + g_ for v, g_ in zip(velocity, g))
        return tuple(x_ - step_size * v for x_, v in zip(x, velocity)), velocity

    def get_params(state):
        return state[0]

    return init, update, get_params


def main():
    num_samples = 40

    @jit
    def objective(params, t):
        rng = random.PRNGKey(t)
        return -batch_elbo(funnel_log_density, rng, params, num_samples)

    x_limits = (-2, 2)
    y_limits = (-4, 2)
    target_dist = lambda x, _: jnp.exp(funnel_log_density(x))
    approx_dist = lambda x, params: jnp.exp(diag_gaussian_logpdf(x, *params))

    # Set up optimizer.
    D = 2
    init_mean = jnp.zeros(D)
    init_std = jnp.zeros(D)
    init_params = (init_mean, init_std)
    opt_init, opt_update, get_params = momentum(step_size=0.1, mass=0.9)
    opt_state = opt_init(init_params)

    @jit
    def update(i, opt_state):
        params = get_params(opt_state)
        gradient = grad(objective)(params, i)
        return opt_update(i, gradient, opt_state)

    # Main loop.
    lower_bounds = []
    for t in range(25):
        opt_state = update(t, opt_state)
        params = get_params(opt_state)
        lower_bounds.append(objective(params, t))

    # What the example's callback plots, on a coarse grid.
    _, _, target = mesh_eval(target_dist, x_limits, y_limits, 1, 11)
    X, Y, approx = mesh_eval(approx_dist, x_limits, y_limits, params, 11)
    rngs = random.split(random.PRNGKey(t), num_samples)
    samples = vmap(diag_gaussian_sample, in_axes=(0, None, None))(rngs, *params)
    return {"params": params, "lower_bounds": lower_bounds, "target": target,
            "approx": approx, "grid": (X, Y), "samples": samples}
