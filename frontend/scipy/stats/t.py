"""Student's t distribution, as jax.scipy.stats.t."""

from __future__ import annotations

import math

from ... import numpy as snp
from ...tensor import Tensor
from .._gamma import gammaln
from .._operands import real_floats

__all__ = ["logpdf", "pdf"]


def logpdf(x, df, loc=0, scale=1) -> Tensor:
    x, df, loc, scale = real_floats("t.logpdf", x, df, loc, scale)
    z = (x - loc) / scale
    half_df = df / 2.0
    half_df_plus_half = half_df + 0.5
    normalizer = gammaln(half_df) + snp.log(scale * scale * math.pi * df) / 2.0 \
        - gammaln(half_df_plus_half)
    return -(normalizer + half_df_plus_half * snp.log1p(z * z / df))


def pdf(x, df, loc=0, scale=1) -> Tensor:
    return snp.exp(logpdf(x, df, loc, scale))
