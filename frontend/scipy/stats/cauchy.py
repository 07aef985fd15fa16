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


def _standard_ppf(q: Tensor) -> Tensor:
    """tan(pi (q - 1/2)), from the nearer end: -1/tan(pi q) below 1/4 and 1/tan(pi (1 - q))
    above 3/4 (1 - q is exact there), so the tails keep their precision and the ends are
    -inf and inf (tan(pi (q - 1/2)) at q = 1 rounds to -2.3e7 in float32); nan outside
    [0, 1]."""
    low = -1.0 / snp.tan(math.pi * q)
    high = 1.0 / snp.tan(math.pi * (1.0 - q))
    mid = snp.tan(math.pi * (q - 0.5))
    out = snp.where(q < 0.25, low, snp.where(q > 0.75, high, mid))
    return snp.where((q < 0) | (q > 1), math.nan, out)


def ppf(q, loc=0, scale=1) -> Tensor:
    q, loc, scale = real_floats("cauchy.ppf", q, loc, scale)
    return _standard_ppf(q) * scale + loc


def isf(q, loc=0, scale=1) -> Tensor:
    q, loc, scale = real_floats("cauchy.isf", q, loc, scale)
    return -_standard_ppf(q) * scale + loc  # the distribution is symmetric about loc
