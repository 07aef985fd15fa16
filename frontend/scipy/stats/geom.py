"""The geometric distribution (trials to the first success), as jax.scipy.stats.geom."""

from __future__ import annotations

import math

from ... import numpy as snp
from ...tensor import Tensor
from .._logarithmic import xlog1py
from .._operands import real_floats

__all__ = ["logpmf", "pmf"]


def logpmf(k, p, loc=0) -> Tensor:
    k, p, loc = real_floats("geom.logpmf", k, p, loc)
    x = k - loc
    return snp.where(x <= 0, -math.inf, xlog1py(x - 1.0, -p) + snp.log(p))


def pmf(k, p, loc=0) -> Tensor:
    return snp.exp(logpmf(k, p, loc))
