"""The Cauchy distribution, as jax.scipy.stats.cauchy."""

from __future__ import annotations

import math

from ... import numpy as snp
from ...tensor import Tensor
from .._operands import real_floats

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf"]


def logpdf(x, loc=0, scale=1) -> Tensor:
    x, loc, scale = real_floats("cauchy.logpdf", x, loc, scale)
    z = (x - loc) / scale
    return -(snp.log(math.pi * scale) + snp.log1p(z * z))


def pdf(x, loc=0, scale=1) -> Tensor:
    return snp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1) -> Tensor:
    x, loc, scale = real_floats("cauchy.cdf", x, loc, scale)
    return 0.5 + (1 / math.pi) * snp.arctan((x - loc) / scale)


def logcdf(x, loc=0, scale=1) -> Tensor:
    return snp.log(cdf(x, loc, scale))


def sf(x, loc=0, scale=1) -> Tensor:
    x, loc, scale = real_floats("cauchy.sf", x, loc, scale)
    return cdf(-x, -loc, scale)


def logsf(x, loc=0, scale=1) -> Tensor:
    x, loc, scale = real_floats("cauchy.logsf", x, loc, scale)
    return logcdf(-x, -loc, scale)


def ppf(q, loc=0, scale=1) -> Tensor:
    q, loc, scale = real_floats("cauchy.ppf", q, loc, scale)
    return snp.tan(math.pi * q - math.pi / 2) * scale + loc


def isf(q, loc=0, scale=1) -> Tensor:
    q, loc, scale = real_floats("cauchy.isf", q, loc, scale)
    return snp.tan(math.pi / 2 - math.pi * q) * scale + loc
