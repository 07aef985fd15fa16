"""The Bernoulli distribution with success probability p, as jax.scipy.stats.bernoulli."""

from __future__ import annotations

import math

from ... import numpy as snp
from ...tensor import Tensor
from .._logarithmic import xlog1py, xlogy
from .._operands import real_floats

__all__ = ["logpmf", "pmf", "cdf", "ppf"]


def logpmf(k, p, loc=0) -> Tensor:
    k, p, loc = real_floats("bernoulli.logpmf", k, p, loc)
    x = k - loc
    log_probs = xlogy(x, p) + xlog1py(1.0 - x, -p)
    return snp.where((x < 0) | (x > 1), -math.inf, log_probs)


def pmf(k, p, loc=0) -> Tensor:
    return snp.exp(logpmf(k, p, loc))


def cdf(k, p) -> Tensor:
    k, p = real_floats("bernoulli.cdf", k, p)
    bad = snp.isnan(k) | snp.isnan(p) | (p < 0) | (p > 1)
    out = snp.where(k < 0, 0.0, snp.where(k < 1, 1.0 - p, 1.0))
    return snp.where(bad, math.nan, out)


def ppf(q, p) -> Tensor:
    q, p = real_floats("bernoulli.ppf", q, p)
    bad = snp.isnan(q) | snp.isnan(p) | (p < 0) | (p > 1) | (q < 0) | (q > 1)
    return snp.where(bad, math.nan, snp.where(q <= 1.0 - p, 0.0, 1.0))
