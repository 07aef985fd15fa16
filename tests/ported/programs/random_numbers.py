"""Pseudorandom numbers with explicit keys.

Port of docs/random-numbers.md (jax-ml/jax): the same key always gives the same draw,
`random.split` into new keys (two, three, and the `key, subkey` idiom in a loop),
`random.fold_in`, legacy `random.PRNGKey` keys, and the samplers the notebook and JAX's
examples use: normal, uniform with bounds, randint, bernoulli, categorical, permutation,
choice. The bits must match jax's exactly: both implement threefry2x32. Apart from the
first draws, the samples are taken under one `jax.jit` to keep the compile count small.
"""

import jax
from jax import random


def samples():
    key = random.key(42)
    for_draws = []
    for _ in range(3):
        key, subkey = random.split(key)
        for_draws.append(random.normal(subkey))

    key, subkey1, subkey2 = random.split(key, num=3)
    folded = [random.uniform(random.fold_in(key, i)) for i in range(3)]

    legacy = random.PRNGKey(0)
    k1, k2, k3, k4, k5, k6, k7 = random.split(legacy, 7)
    return {
        "loop_draws": for_draws,
        "split3": (random.normal(subkey1, (3,)), random.normal(subkey2, (3,))),
        "fold_in": folded,
        "normal_matrix": random.normal(k1, (4, 3)),
        "uniform": random.uniform(k2, (5,), minval=-2., maxval=3.),
        "randint": random.randint(k3, (8,), 0, 10),
        "bernoulli": random.bernoulli(k4, 0.3, (8,)),
        "categorical": random.categorical(k5, random.normal(k6, (4, 6))),
        "permutation": random.permutation(k7, 10),
        "choice": random.choice(k7, 10, (4,), replace=False),
    }


def main():
    key = random.key(42)
    return {"same": (random.normal(key), random.normal(key)), **jax.jit(samples)()}
