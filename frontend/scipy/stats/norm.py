"""The normal distribution N(loc, scale^2), as jax.scipy.stats.norm."""

from __future__ import annotations

import math

from ... import numpy as snp
from ...tensor import Tensor
from .._error_functions import log_ndtr, ndtr, ndtri
from .._operands import real_floats

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf"]


def logpdf(x, loc=0, scale=1) -> Tensor:
    x, loc, scale = real_floats("norm.logpdf", x, loc, scale)
    scale_sq = scale * scale
    return -0.5 * (snp.log(2 * math.pi * scale_sq) + (x - loc) * (x - loc) / scale_sq)


def pdf(x, loc=0, scale=1) -> Tensor:
    return snp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1) -> Tensor:
    x, loc, scale = real_floats("norm.cdf", x, loc, scale)
    return ndtr((x - loc) / scale)


def logcdf(x, loc=0, scale=1) -> Tensor:
    x, loc, scale = real_floats("norm.logcdf", x, loc, scale)
    return log_ndtr((x - loc) / scale)


def sf(x, loc=0, scale=1) -> Tensor:
    x, loc, scale = real_floats("norm.sf", x, loc, scale)
    return cdf(-x, -loc, scale)


def logsf(x, loc=0, scale=1) -> Tensor:
    x, loc, scale = real_floats("norm.logsf", x, loc, scale)
    return logcdf(-x, -loc, scale)


def ppf(q, loc=0, scale=1) -> Tensor:
    q, loc, scale = real_floats("norm.ppf", q, loc, scale)
    return ndtri(q) * scale + loc


def isf(q, loc=0, scale=1) -> Tensor:
    q, loc, scale = real_floats("norm.isf", q, loc, scale)
    return loc - ndtri(q) * scale  # symmetric: 1 - q would round away a small q
