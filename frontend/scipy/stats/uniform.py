"""The uniform distribution on [loc, loc + scale], as jax.scipy.stats.uniform."""

from __future__ import annotations

import math

from ... import numpy as snp
from ...tensor import Tensor
from .._operands import real_floats

__all__ = ["logpdf", "pdf", "cdf", "ppf"]


def logpdf(x, loc=0, scale=1) -> Tensor:
    x, loc, scale = real_floats("uniform.logpdf", x, loc, scale)
    return snp.where((x > loc + scale) | (x < loc), -math.inf, -snp.log(scale))


def pdf(x, loc=0, scale=1) -> Tensor:
    return snp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1) -> Tensor:
    x, loc, scale = real_floats("uniform.cdf", x, loc, scale)
    inside = (x - loc) / scale
    # nan (x, loc or scale) falls through every test to 0, as jnp.select's default
    return snp.where(x < loc, 0.0, snp.where(x > loc + scale, 1.0,
                                             snp.where(x >= loc, inside, 0.0)))


def ppf(q, loc=0, scale=1) -> Tensor:
    q, loc, scale = real_floats("uniform.ppf", q, loc, scale)
    return snp.where(snp.isnan(q) | (q < 0) | (q > 1), math.nan, loc + scale * q)
