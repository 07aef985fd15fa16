"""stablejit.random: counter-based random numbers (threefry2x32), as in jax.random.

A key is a uint32[2] tensor. The same key gives the same numbers on every backend
(reference, eager XLA, jit) and, for float32 / integer samplers, the same bits as
jax.random with its default threefry2x32 implementation (jax's partitionable layout:
element i of a draw hashes the 64-bit counter i). Keys are values, never state: use
`split` or `fold_in` to get new ones.

    k = stablejit.random.key(0)
    k1, k2 = stablejit.random.split(k)
    x = stablejit.random.normal(k1, (3, 4))

The hash is written with ordinary uint32 add / xor / shift / or primitives, so it
compiles like any other code. Each sampler runs as one small jitted program (static
shape and dtype), so on the eager backend a draw is one compiled call, and inside jit it
is traced inline.

A float64 draw (a sampler's default in x64 mode) is jax's in x64 mode too: `uniform` bit
for bit, `normal` (erf_inv in float64, as jax) to the last bit or two.

Differences from jax.random: `truncated_normal` computes erf / erf_inv with float32
accuracy for every dtype, so its samples are within the bounds and correctly
distributed, but not bit-identical to jax's. `key(seed)` treats a seed as a 64-bit
integer (for seeds in [0, 2**31) that is the same key jax makes); it is the uint32[2]
that `jax.random.key_data(jax.random.key(seed))` holds, so `key` and `PRNGKey` are one
function. Indices (`permutation(key, n)`, `choice` of an int, `categorical`) have the
default int dtype, int64 (jax: int32), with the same values; `randint` defaults to
int32 as jax's does, because its numbers depend on the dtype's width.

The other distributions (exponential, laplace, logistic, cauchy, rademacher, maxwell,
double_sided_maxwell, weibull_min, pareto, rayleigh, wald, geometric, triangular,
lognormal, gamma, loggamma, beta, dirichlet, chisquare, t, f, generalized_normal, ball,
poisson, binomial, multinomial, multivariate_normal, orthogonal) follow jax.random's
algorithms and order of draws, so a float32 draw is jax's, bit for bit for most; maxwell
(a sum of squares), multivariate_normal (a matmul and a LAPACK factor) and orthogonal (a
LAPACK QR) agree to float rounding. The rejection samplers (gamma and the samplers
built on it, poisson, binomial) keep one loop state per element and stop updating an
element once it is accepted, which is what jax's per-element loops do. Integer results
of rademacher, geometric and poisson default to int64 (jax: int32), with the same values.
Inside an enclosing jit, XLA may fuse exp / log / pow differently, so values there can
differ from eager ones in the last bit.

The package: `_core` (keys, the hash, split / fold_in / bits, uniform draws and coin
flips, the argument checks), `continuous`, `discrete` and `multivariate`.
"""

from __future__ import annotations

from ._core import (
    PRNGKey,
    bernoulli,
    bits,
    fold_in,
    key,
    key_data,
    rademacher,
    split,
    threefry2x32,
    uniform,
    wrap_key_data,
)
from .continuous import (
    beta,
    cauchy,
    chisquare,
    double_sided_maxwell,
    exponential,
    f,
    gamma,
    generalized_normal,
    gumbel,
    laplace,
    loggamma,
    logistic,
    lognormal,
    maxwell,
    normal,
    pareto,
    rayleigh,
    t,
    triangular,
    truncated_normal,
    wald,
    weibull_min,
)
from .discrete import (
    binomial,
    categorical,
    choice,
    geometric,
    multinomial,
    permutation,
    poisson,
    randint,
)
from .multivariate import (
    ball,
    dirichlet,
    multivariate_normal,
    orthogonal,
)

__all__ = ["key", "PRNGKey", "key_data", "wrap_key_data", "split", "fold_in", "bits",
           "uniform", "normal", "randint",
           "bernoulli", "categorical", "choice", "gumbel", "permutation", "truncated_normal",
           "threefry2x32", "exponential", "laplace", "logistic", "cauchy", "rademacher",
           "maxwell", "double_sided_maxwell", "weibull_min", "pareto", "rayleigh", "wald",
           "geometric", "triangular", "lognormal", "gamma", "loggamma", "beta", "dirichlet",
           "chisquare", "t", "f", "generalized_normal", "ball", "poisson", "binomial",
           "multinomial", "multivariate_normal", "orthogonal"]


def __dir__() -> list[str]:  # dir(), help() and tab completion show the public names only
    return sorted(__all__)
