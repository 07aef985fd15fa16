"""stablejit.scipy.integrate: trapezoid, as jax.scipy.integrate."""

from __future__ import annotations

from .. import numpy as snp
from ..tensor import Tensor


def trapezoid(y, x=None, dx: float = 1.0, axis: int = -1) -> Tensor:
    """The integral of y along axis by the trapezoidal rule, at the sample points x (or
    spaced dx apart), as scipy.integrate.trapezoid.

    Example:
        >>> stablejit.scipy.integrate.trapezoid(snp.asarray([1.0, 2.0, 3.0]))
        Tensor<f32[] xla:host:0>
        4.
    """
    return snp.trapezoid(y, x=x, dx=dx, axis=axis)


__all__ = ["trapezoid"]


def __dir__() -> list[str]:  # dir(), help() and tab completion show the public names only
    return sorted(__all__)
