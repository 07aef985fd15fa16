"""The Pareto distribution with shape b, as jax.scipy.stats.pareto."""

from __future__ import annotations

import math

from ... import numpy as snp
from ...tensor import Tensor
from .._operands import real_floats

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "logsf", "sf", "ppf"]


def logpdf(x, b, loc=0, scale=1) -> Tensor:
    x, b, loc, scale = real_floats("pareto.logpdf", x, b, loc, scale)
    z = (x - loc) / scale
    log_probs = -(snp.log(scale / b) + (b + 1.0) * snp.log(z))
    return snp.where(x < loc + scale, -math.inf, log_probs)


def pdf(x, b, loc=0, scale=1) -> Tensor:
    return snp.exp(logpdf(x, b, loc, scale))


def cdf(x, b, loc=0, scale=1) -> Tensor:
    x, b, loc, scale = real_floats("pareto.cdf", x, b, loc, scale)
    z = (x - loc) / scale
    return snp.where(x < loc + scale, 0.0, 1.0 - snp.power(z, -b))


def logcdf(x, b, loc=0, scale=1) -> Tensor:
    x, b, loc, scale = real_floats("pareto.logcdf", x, b, loc, scale)
    z = (x - loc) / scale
    return snp.where(x < loc + scale, -math.inf, snp.log1p(-snp.power(z, -b)))


def logsf(x, b, loc=0, scale=1) -> Tensor:
    x, b, loc, scale = real_floats("pareto.logsf", x, b, loc, scale)
    z = (x - loc) / scale
    return snp.where(x < loc + scale, 0.0, -(b * snp.log(z)))


def sf(x, b, loc=0, scale=1) -> Tensor:
    return snp.exp(logsf(x, b, loc, scale))


def ppf(q, b, loc=0, scale=1) -> Tensor:
    q, b, loc, scale = real_floats("pareto.ppf", q, b, loc, scale)
    out = loc + scale * snp.power(1.0 - q, -(1.0 / b))
    return snp.where(snp.isnan(q) | (q < 0) | (q > 1), math.nan, out)
