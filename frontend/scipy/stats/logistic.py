"""The logistic distribution, as jax.scipy.stats.logistic."""

from __future__ import annotations

from ... import numpy as snp
from ...tensor import Tensor
from .._logarithmic import expit, logit
from .._operands import real_floats

__all__ = ["logpdf", "pdf", "cdf", "sf", "ppf", "isf"]


def logpdf(x, loc=0, scale=1) -> Tensor:
    x, loc, scale = real_floats("logistic.logpdf", x, loc, scale)
    half = (x - loc) / scale / 2.0
    return -2.0 * snp.logaddexp(half, -half) - snp.log(scale)


def pdf(x, loc=0, scale=1) -> Tensor:
    return snp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1) -> Tensor:
    x, loc, scale = real_floats("logistic.cdf", x, loc, scale)
    return expit((x - loc) / scale)


def sf(x, loc=0, scale=1) -> Tensor:
    x, loc, scale = real_floats("logistic.sf", x, loc, scale)
    return expit(-(x - loc) / scale)


def ppf(x, loc=0, scale=1) -> Tensor:
    x, loc, scale = real_floats("logistic.ppf", x, loc, scale)
    return logit(x) * scale + loc


def isf(x, loc=0, scale=1) -> Tensor:
    x, loc, scale = real_floats("logistic.isf", x, loc, scale)
    return -logit(x) * scale + loc
