"""Operands of stablejit.scipy functions: promotion to one real floating dtype.

As jax.scipy (promote_args_inexact): the arguments are promoted together, integers and
booleans become the default float (float32), and complex inputs are refused with advice,
since these functions are defined for real arguments only.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from .. import numpy as snp
from ..compiler import dtypes as dt
from ..errors import at_user_line
from ..numpy import astype
from ..numpy._operands import promote_operands
from ..promotion import default_float
from ..tensor import Tensor


def real_floats(name: str, *xs) -> list[Tensor]:
    """The arguments as tensors of one real floating dtype."""
    ts, dtype = promote_operands(*xs)
    if dtype.kind == "c":
        raise TypeError(at_user_line(f"{name} is defined for real tensors only, not "
                                     f"{dtype.name}; apply it to the real part"))
    if dtype.kind != "f":
        ts = [astype(t, default_float()) for t in ts]
    return ts


def real_float(name: str, x) -> Tensor:
    return real_floats(name, x)[0]


def in_float32(fn: Callable[..., Tensor]) -> Callable[..., Tensor]:
    """fn's approximations are written for float32 and float64: half-precision
    arguments are computed in float32 and the result rounded back, as XLA does."""
    @functools.wraps(fn)
    def wrapped(*xs: Tensor) -> Tensor:
        dtype = xs[0].dtype
        if dtype in (dt.float16, dt.bfloat16):
            return astype(fn(*(astype(x, dt.float32) for x in xs)), dtype)
        return fn(*xs)
    return wrapped


def log1p(u: Tensor) -> Tensor:
    """log(1 + u), to an ulp or two: XLA's log1p is up to 120 ulps off for u in about
    (-0.5, -0.3) in float64 (2.7e-14 at -0.414; jax's too), where log(1 + u) is exact
    to an ulp (1 + u rounds by at most half an ulp of a value >= 0.5, and |log| >= 0.29)."""
    return snp.where(u < -0.25, snp.log(1.0 + u), snp.log1p(u))
