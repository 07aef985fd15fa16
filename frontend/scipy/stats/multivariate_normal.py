"""The multivariate normal distribution, as jax.scipy.stats.multivariate_normal."""

from __future__ import annotations

import math

from ... import numpy as snp
from ...errors import at_user_line
from ...tensor import Tensor
from .._operands import real_floats
from ..linalg import _triangular

__all__ = ["logpdf", "pdf"]


def logpdf(x, mean, cov, allow_singular=None) -> Tensor:
    """log N(x; mean, cov) over the last axis of x. cov may be a scalar (the same
    variance on every axis) or an (n, n) matrix (or a stack of them)."""
    if allow_singular is not None:
        raise NotImplementedError(at_user_line(
            "multivariate_normal.logpdf: allow_singular is not supported (as in jax)"))
    x, mean, cov = real_floats("multivariate_normal.logpdf", x, mean, cov)
    if mean.ndim == 0:
        return -0.5 * (x - mean) ** 2 / cov - 0.5 * (math.log(2 * math.pi) + snp.log(cov))
    n = mean.shape[-1]
    y = x - mean
    if cov.ndim == 0:
        return -0.5 * snp.sum(y * y, axis=-1) / cov \
            - n / 2 * (math.log(2 * math.pi) + snp.log(cov))
    if cov.ndim < 2 or cov.shape[-2:] != (n, n):
        raise ValueError(at_user_line(
            f"multivariate_normal.logpdf: cov {cov.shape} does not match mean {mean.shape}"
            f"; it needs shape (..., {n}, {n})"))
    l = snp.linalg.cholesky(cov)
    z = _triangular(l, y[..., None], lower=True)[..., 0]
    log_det = snp.sum(snp.log(snp.linalg.diagonal(l)), axis=-1)
    return -0.5 * snp.sum(z * z, axis=-1) - n / 2 * math.log(2 * math.pi) - log_det


def pdf(x, mean, cov) -> Tensor:
    return snp.exp(logpdf(x, mean, cov))
