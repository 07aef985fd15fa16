"""The gamma distribution with shape a, as jax.scipy.stats.gamma."""

from __future__ import annotations

import math

from ... import numpy as snp
from ...tensor import Tensor
from .._gamma import gammaln
from .._incomplete import gammainc, gammaincc
from .._logarithmic import xlogy
from .._operands import real_floats

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]


def logpdf(x, a, loc=0, scale=1) -> Tensor:
    x, a, loc, scale = real_floats("gamma.logpdf", x, a, loc, scale)
    ok = x >= loc
    y = snp.where(ok, (x - loc) / scale, 1.0)
    log_probs = xlogy(a - 1.0, y) - y - (gammaln(a) + snp.log(scale))
    return snp.where(ok, log_probs, -math.inf)


def pdf(x, a, loc=0, scale=1) -> Tensor:
    return snp.exp(logpdf(x, a, loc, scale))


def cdf(x, a, loc=0, scale=1) -> Tensor:
    x, a, loc, scale = real_floats("gamma.cdf", x, a, loc, scale)
    return gammainc(a, snp.clip((x - loc) / scale, 0.0, math.inf))


def logcdf(x, a, loc=0, scale=1) -> Tensor:
    return snp.log(cdf(x, a, loc, scale))


def sf(x, a, loc=0, scale=1) -> Tensor:
    x, a, loc, scale = real_floats("gamma.sf", x, a, loc, scale)
    y = (x - loc) / scale
    return snp.where(y < 0, 1.0, gammaincc(a, y))


def logsf(x, a, loc=0, scale=1) -> Tensor:
    return snp.log(sf(x, a, loc, scale))
