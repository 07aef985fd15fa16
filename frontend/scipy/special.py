"""stablejit.scipy.special: special functions, as scipy.special / jax.scipy.special.

Integer and boolean inputs become the default float (float32), as in JAX; complex
inputs are an error (the primitives are defined for real floats only).
"""

from __future__ import annotations

from ..compiler.primitives import elementwise as ew
from ..dispatch import bind1
from ..errors import at_user_line
from ..numpy import asarray, astype
from ..promotion import DEFAULT_FLOAT
from ..tensor import Tensor


def _real_float(name: str, x) -> Tensor:
    x = asarray(x)
    if x.dtype.kind == "c":
        raise TypeError(at_user_line(f"{name} is defined for real tensors only, not "
                                     f"{x.dtype.name}; apply it to the real part"))
    return x if x.dtype.kind == "f" else astype(x, DEFAULT_FLOAT)


def erf(x) -> Tensor:
    """The error function, 2/sqrt(pi) * integral from 0 to x of exp(-t^2) dt."""
    return bind1(ew.erf, _real_float("erf", x))


def erfc(x) -> Tensor:
    """The complementary error function, 1 - erf(x), accurate where erf(x) is near 1."""
    return bind1(ew.erfc, _real_float("erfc", x))


__all__ = ["erf", "erfc"]
