"""The Poisson distribution with mean mu, as jax.scipy.stats.poisson."""

from __future__ import annotations

import math

from ... import numpy as snp
from ...tensor import Tensor
from .._gamma import gammaln
from .._incomplete import gammaincc
from .._logarithmic import entr, xlogy
from .._operands import real_floats

__all__ = ["logpmf", "pmf", "cdf", "entropy"]


def logpmf(k, mu, loc=0) -> Tensor:
    k, mu, loc = real_floats("poisson.logpmf", k, mu, loc)
    x = k - loc
    log_probs = xlogy(x, mu) - gammaln(x + 1.0) - mu
    return snp.where((x < 0) | (snp.round(k) != k), -math.inf, log_probs)


def pmf(k, mu, loc=0) -> Tensor:
    return snp.exp(logpmf(k, mu, loc))


def cdf(k, mu, loc=0) -> Tensor:
    k, mu, loc = real_floats("poisson.cdf", k, mu, loc)
    x = k - loc
    return snp.where(x < 0, 0.0, gammaincc(snp.floor(1.0 + x), mu))


def _entropy_by_sum(mu: Tensor, terms: int, upper: Tensor) -> Tensor:
    """-sum p log p over k < min(terms, upper): the sum itself, for small and medium mu."""
    k = snp.arange(terms, dtype=mu.dtype)[:, None]
    probs = snp.where(k < upper[None, :], pmf(k, mu), 0.0)
    return snp.sum(entr(probs), axis=0)


def entropy(mu, loc=0) -> Tensor:
    """The entropy of Poisson(mu): an exact sum below mu = 100, Stirling's series above."""
    mu, loc = real_floats("poisson.entropy", mu, loc)
    shape = snp.broadcast_shapes(mu.shape, loc.shape)
    flat = snp.reshape(mu, (-1,))
    small = _entropy_by_sum(flat, 35, snp.ceil(flat + 20.0))
    medium = _entropy_by_sum(flat, 250, snp.ceil(flat + 10.0 * snp.sqrt(flat) + 20.0))
    safe = snp.where(flat > 0, flat, 1.0)
    large = 0.5 * snp.log(2 * math.pi * math.e * safe) - 1.0 / (12.0 * safe)
    out = snp.where(flat == 0, 0.0,
                    snp.where(flat < 10, small, snp.where(flat < 100, medium, large)))
    return snp.broadcast_to(snp.reshape(out, mu.shape), shape)
