"""The exponential distribution, as jax.scipy.stats.expon."""

from __future__ import annotations

import math

from ... import numpy as snp
from ...tensor import Tensor
from .._operands import real_floats

__all__ = ["logpdf", "pdf", "cdf", "logsf", "sf", "logcdf", "ppf"]


def logpdf(x, loc=0, scale=1) -> Tensor:
    x, loc, scale = real_floats("expon.logpdf", x, loc, scale)
    log_probs = -((x - loc) / scale + snp.log(scale))
    return snp.where(x < loc, -math.inf, log_probs)


def pdf(x, loc=0, scale=1) -> Tensor:
    return snp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1) -> Tensor:
    x, loc, scale = real_floats("expon.cdf", x, loc, scale)
    return snp.where(x < loc, 0.0, -snp.expm1((loc - x) / scale))


def logsf(x, loc=0, scale=1) -> Tensor:
    x, loc, scale = real_floats("expon.logsf", x, loc, scale)
    return snp.where(x < loc, 0.0, (loc - x) / scale)


def sf(x, loc=0, scale=1) -> Tensor:
    return snp.exp(logsf(x, loc, scale))


def logcdf(x, loc=0, scale=1) -> Tensor:
    return snp.log1p(-sf(x, loc, scale))


def ppf(q, loc=0, scale=1) -> Tensor:
    q, loc, scale = real_floats("expon.ppf", q, loc, scale)
    return snp.where(snp.isnan(q) | (q < 0) | (q > 1), math.nan,
                     loc - scale * snp.log1p(-q))
