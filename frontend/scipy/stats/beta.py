"""The beta distribution with shapes a, b, as jax.scipy.stats.beta."""

from __future__ import annotations

import math

from ... import numpy as snp
from ...tensor import Tensor
from .._gamma import betaln
from .._incomplete import betainc
from .._logarithmic import xlog1py, xlogy
from .._operands import real_floats

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]


def logpdf(x, a, b, loc=0, scale=1) -> Tensor:
    x, a, b, loc, scale = real_floats("beta.logpdf", x, a, b, loc, scale)
    y = (x - loc) / scale
    log_linear = xlogy(a - 1.0, y) + xlog1py(b - 1.0, -y)
    log_probs = -betaln(a, b) + log_linear - snp.log(scale)
    out = snp.where((x > loc + scale) | (x < loc), -math.inf, log_probs)
    return snp.where((a <= 0) | (b <= 0) | (scale <= 0), math.nan, out)


def pdf(x, a, b, loc=0, scale=1) -> Tensor:
    return snp.exp(logpdf(x, a, b, loc, scale))


def cdf(x, a, b, loc=0, scale=1) -> Tensor:
    x, a, b, loc, scale = real_floats("beta.cdf", x, a, b, loc, scale)
    return betainc(a, b, snp.clip((x - loc) / scale, 0.0, 1.0))


def logcdf(x, a, b, loc=0, scale=1) -> Tensor:
    return snp.log(cdf(x, a, b, loc, scale))


def sf(x, a, b, loc=0, scale=1) -> Tensor:
    x, a, b, loc, scale = real_floats("beta.sf", x, a, b, loc, scale)
    return betainc(b, a, 1.0 - snp.clip((x - loc) / scale, 0.0, 1.0))


def logsf(x, a, b, loc=0, scale=1) -> Tensor:
    return snp.log(sf(x, a, b, loc, scale))
