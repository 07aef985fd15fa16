"""The chi-squared distribution with df degrees of freedom, as jax.scipy.stats.chi2."""

from __future__ import annotations

import math

from ... import numpy as snp
from ...tensor import Tensor
from .._gamma import gammaln
from .._incomplete import gammainc, gammaincc
from .._operands import real_floats

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]


def logpdf(x, df, loc=0, scale=1) -> Tensor:
    x, df, loc, scale = real_floats("chi2.logpdf", x, df, loc, scale)
    y = (x - loc) / scale
    half_df = df / 2.0
    kernel = (half_df - 1.0) * snp.log(y) - y / 2.0
    normalizer = -(gammaln(half_df) + math.log(2.0) * df / 2.0)
    return snp.where(x < loc, -math.inf, normalizer - snp.log(scale) + kernel)


def pdf(x, df, loc=0, scale=1) -> Tensor:
    return snp.exp(logpdf(x, df, loc, scale))


def cdf(x, df, loc=0, scale=1) -> Tensor:
    x, df, loc, scale = real_floats("chi2.cdf", x, df, loc, scale)
    return gammainc(df / 2.0, snp.clip((x - loc) / (scale * 2.0), 0.0, math.inf))


def logcdf(x, df, loc=0, scale=1) -> Tensor:
    return snp.log(cdf(x, df, loc, scale))


def sf(x, df, loc=0, scale=1) -> Tensor:
    x, df, loc, scale = real_floats("chi2.sf", x, df, loc, scale)
    return gammaincc(df / 2.0, snp.clip((x - loc) / (scale * 2.0), 0.0, math.inf))


def logsf(x, df, loc=0, scale=1) -> Tensor:
    return snp.log(sf(x, df, loc, scale))
