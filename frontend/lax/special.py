"""lax's special functions (jax.lax.lgamma, digamma, igamma, igammac, polygamma, zeta,
betainc, bessel_i0e, bessel_i1e, exp2): the scipy.special implementations under lax's
operand rules — floating-point operands of one dtype (a weak Python scalar takes the
other's dtype), no broadcasting but of 0-d operands — so that JAX code calling them
through `lax` ports unchanged."""

from __future__ import annotations

from collections.abc import Callable

from .. import numpy as snp
from ..errors import at_user_line
from ..numpy._operands import as_tensor
from ..scipy import special as _sp
from ..tensor import Tensor
from ._operands import _same_dtype, _same_shape


def _floats(name: str, *xs) -> list[Tensor]:
    ts = _same_shape(name, _same_dtype(name, *xs)) if len(xs) > 1 else [as_tensor(xs[0])]
    if ts[0].dtype.kind != "f":
        raise TypeError(at_user_line(
            f"lax.{name} needs floating-point operands, got {ts[0].dtype.name}; convert "
            f"with lax.convert_element_type (or call stablejit.scipy.special, which "
            f"promotes)"))
    return ts


def _special(name: str, fn: Callable, doc: str) -> Callable:
    def op(*xs) -> Tensor:
        ts = _floats(name, *xs)
        out = fn(*ts)
        # (scipy.special's functions promote; under lax's rule the result keeps the dtype)
        return out if out.dtype is ts[0].dtype else snp.astype(out, ts[0].dtype)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = doc
    return op


lgamma = _special("lgamma", _sp.gammaln, """log|Gamma(x)| of a floating-point x.

    Example:
        >>> stablejit.lax.lgamma(snp.asarray([3.0, 5.0]))
        Tensor<f32[2] xla:host:0>
        [0.693147..., 3.178054...]
    """)
digamma = _special("digamma", _sp.digamma, "The digamma function psi(x) = d/dx lgamma(x).")
igamma = _special("igamma", _sp.gammainc,
                  "The regularized lower incomplete gamma function P(a, x).")
igammac = _special("igammac", _sp.gammaincc,
                   "The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x).")
polygamma = _special("polygamma", _sp.polygamma,
                     "The m-th derivative of digamma at x; m holds whole numbers, in "
                     "x's dtype.")
zeta = _special("zeta", _sp.zeta, "The Hurwitz zeta function zeta(x, q).")
betainc = _special("betainc", _sp.betainc,
                   "The regularized incomplete beta function I_x(a, b).")
bessel_i0e = _special("bessel_i0e", _sp.i0e,
                      "exp(-|x|) I0(x): the exponentially scaled modified Bessel function "
                      "of order 0.")
bessel_i1e = _special("bessel_i1e", _sp.i1e,
                      "exp(-|x|) I1(x): the exponentially scaled modified Bessel function "
                      "of order 1.")
exp2 = _special("exp2", snp.exp2, "2**x of a floating-point x.")
