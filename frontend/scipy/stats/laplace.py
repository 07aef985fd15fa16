"""The Laplace distribution, as jax.scipy.stats.laplace."""

from __future__ import annotations

from ... import numpy as snp
from ...tensor import Tensor
from .._operands import real_floats

__all__ = ["logpdf", "pdf", "cdf"]


def logpdf(x, loc=0, scale=1) -> Tensor:
    x, loc, scale = real_floats("laplace.logpdf", x, loc, scale)
    return -(snp.abs(x - loc) / scale + snp.log(2.0 * scale))


def pdf(x, loc=0, scale=1) -> Tensor:
    return snp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1) -> Tensor:
    x, loc, scale = real_floats("laplace.cdf", x, loc, scale)
    z = (x - loc) / scale
    return snp.where(z <= 0, 0.5 * snp.exp(z), 1.0 - 0.5 * snp.exp(-z))
