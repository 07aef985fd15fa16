"""The Hurwitz zeta function zeta(x, q) and polygamma(n, x) built on it, and the
Bernoulli numbers.

zeta is Cephes' Euler-Maclaurin summation (SciPy's algorithm): the first terms
(q + k)^-x summed, the integral of the rest, and twelve Bernoulli corrections, with a
fixed number of terms so that it vectorises. Its special values are SciPy's.
"""

from __future__ import annotations

import math
import operator
from fractions import Fraction

from .. import numpy as snp
from ..autodiff import jvp
from ..custom_derivatives import custom_jvp
from ..errors import at_user_line
from ..tensor import Tensor
from ._gamma import _digamma, _lgamma
from ._operands import in_float32, real_floats

_TERMS = 10  # (q + k)^-x for k < _TERMS, summed before the asymptotic tail
# (2j)! / B_2j, j = 1..12: Cephes' A[]
_BERNOULLI = (12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9,
              7.47242496e10, -2.950130727918164224e12, 1.1646782814350067249e14,
              -4.5979787224074726105e15, 1.8152105401943546773e17,
              -7.1661652561756670113e18)


@in_float32
def _hurwitz(x: Tensor, q: Tensor) -> Tensor:
    s = snp.zeros_like(x)
    for k in range(_TERMS):
        s = s + snp.power(q + float(k), -x)
    w = q + float(_TERMS - 1)
    b = snp.power(w, -x)  # the last term of the sum: half of it belongs to the tail
    s = s + b * w / (x - 1.0) - 0.5 * b
    # the Bernoulli terms, x (x+1) ... (x+2j-2) / w^(2j-1) * w^-x / A[j], as a running
    # product of ratios (no overflow of the rising factorial)
    c, k = b, 0.0
    for a in _BERNOULLI:
        c = c * (x + k) / w
        s = s + c / a
        c = c * (x + k + 1.0) / w
        k += 2.0
    # SciPy's special values: a pole at x == 1, no value below it; q a pole at zero and
    # the negative integers; q^-x undefined for q < 0 unless x is an integer
    q_pole = (q <= 0) & (q == snp.floor(q))
    undefined = (x < 1) | ((q < 0) & (x != snp.floor(x)))
    at_inf = snp.where(q == 1, 1.0, snp.where(q < 1, math.inf, math.nan))
    s = snp.where(snp.isinf(x), at_inf, s)
    s = snp.where(snp.isinf(q) & (q > 0), 0.0, s)
    return snp.where(undefined, math.nan, snp.where((x == 1) | q_pole, math.inf, s))


@custom_jvp
def _zeta(x: Tensor, q: Tensor) -> Tensor:
    return _hurwitz(x, q)


@_zeta.defjvp
def _zeta_jvp(primals, tangents):
    # d/dq zeta(x, q) = -x zeta(x + 1, q), in closed form; d/dx (-sum ln(k + q) (k + q)^-x)
    # through the summation itself, as jax differentiates it
    (x, q), (tx, tq) = primals, tangents
    dx = jvp(lambda v: _hurwitz(v, q), (x,), (tx,))[1]
    return _zeta(x, q), tq * (-x * _zeta(x + 1.0, q)) + dx


def _borwein_weights(n: int) -> tuple[float, ...]:
    """Borwein's d_k (k = 0..n) for the alternating series: d_k = n sum_{i<=k}
    (n + i - 1)! 4^i / ((n - i)! (2i)!)."""
    d, total = [], 0.0
    for i in range(n + 1):
        total += math.factorial(n + i - 1) * 4 ** i / (math.factorial(n - i)
                                                         * math.factorial(2 * i))
        d.append(n * total)
    return tuple(d)


_BORWEIN = _borwein_weights(24)  # (error ~ (3 + sqrt 8)^-24, under float64's ulp)


@in_float32
def _riemann(x: Tensor) -> Tensor:
    """Riemann's zeta for every real x, as SciPy's one-argument zeta: the summation at
    q = 1 from x >= 1; for 0 <= x < 1 Dirichlet's eta (the alternating series, with
    Borwein's acceleration) over 1 - 2^(1-x); below 0 the functional equation
    zeta(x) = 2^x pi^(x-1) sin(pi x / 2) Gamma(1 - x) zeta(1 - x), exactly 0 at the
    negative even integers. Each branch sees only its own x (NaN-free gradients)."""
    one = snp.ones_like(x)
    high = _hurwitz(snp.where(x >= 1, x, 2.0), one)
    mid = snp.where((x >= 0) & (x < 1), x, 0.5)
    n, d = len(_BORWEIN) - 1, _BORWEIN
    eta = snp.zeros_like(x)
    for k in range(n):
        eta = eta + ((-1) ** k * (d[k] - d[n]) / -d[n]) * snp.power(float(k + 1), -mid)
    low_mid = eta / -snp.expm1((1.0 - mid) * math.log(2.0))  # (1 - 2^(1-x), exactly)
    neg = snp.where(x < 0, x, -1.0)
    r = snp.remainder(neg, 4.0)  # sin(pi x / 2) from x mod 4: 0 at the even integers
    sine = snp.where((r == 0) | (r == 2), 0.0, snp.sin(math.pi / 2 * r))
    size = snp.exp(neg * math.log(2.0) + (neg - 1.0) * math.log(math.pi) + _lgamma(1.0 - neg))
    below = snp.where(sine == 0, 0.0, sine * size * _hurwitz(1.0 - neg, one))
    out = snp.where(x >= 1, high, snp.where(x >= 0, low_mid, below))
    return snp.where(x == 1, math.inf, snp.where(snp.isnan(x), math.nan, out))


def zeta(x, q=None) -> Tensor:
    """The Hurwitz zeta function sum_k (k + q)^-x (scipy.special.zeta with two
    arguments): inf at x == 1 and at q = 0, -1, -2, ...; nan for x < 1. With q None,
    Riemann's zeta for every x (zeta(0) = -1/2, zeta(-1) = -1/12), as SciPy's one-
    argument zeta. Differentiable in x and q.

    Example:
        >>> stablejit.scipy.special.zeta(snp.asarray([2.0]), 1.0)
        Tensor<f32[1] xla:host:0>
        [1.644934]
    """
    if q is None:
        x, = real_floats("zeta", x)
        return _riemann(x)
    x, q = real_floats("zeta", x, q)
    x, q = snp.broadcast_arrays(x, q)
    return _zeta(x, q)


def polygamma(n, x) -> Tensor:
    """The n-th derivative of digamma: (-1)^(n+1) n! zeta(n + 1, x) for n >= 1 and
    digamma(x) for n == 0 (scipy.special.polygamma); nan where n is negative or not an
    integer.

    Example:
        >>> stablejit.scipy.special.polygamma(1, snp.asarray([1.0]))
        Tensor<f32[1] xla:host:0>
        [1.64493...]
    """
    n, x = real_floats("polygamma", n, x)
    n, x = snp.broadcast_arrays(n, x)
    sign = snp.where(snp.remainder(n, 2.0) == 0, -1.0, 1.0)
    higher = sign * snp.exp(_lgamma(n + 1.0)) * _zeta(n + 1.0, x)
    out = snp.where(n == 0, _digamma(x), higher)
    return snp.where((n < 0) | (n != snp.floor(n)), math.nan, out)


def bernoulli(n: int) -> Tensor:
    """The Bernoulli numbers B_0 .. B_n (B_1 = -1/2, as SciPy and jax), in the default
    float dtype: computed exactly (the Akiyama-Tanigawa recurrence over fractions, for a
    Python int n) and rounded once; those past the dtype's range are +-inf.

    Example:
        >>> stablejit.scipy.special.bernoulli(4)
        Tensor<f32[5] xla:host:0>
        [ 1.        , -0.5       ,  0.16666667,  0.        , -0.03333334]
    """
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(at_user_line(
            f"bernoulli: n must be a Python int (the count is static), got "
            f"{type(n).__name__}")) from None
    if n < 0:
        raise ValueError(at_user_line(f"bernoulli: n must be non-negative, got {n}"))
    numbers, row = [], []
    for m in range(n + 1):
        row.append(Fraction(1, m + 1))
        for j in range(m, 0, -1):
            row[j - 1] = j * (row[j - 1] - row[j])
        numbers.append(row[0])  # B_m with B_1 = +1/2 (this recurrence's convention)
    if n >= 1:
        numbers[1] = -numbers[1]
    return snp.asarray([_rounded(b) for b in numbers], dtype=snp.asarray(0.0).dtype)


def _rounded(b: Fraction) -> float:
    try:
        return float(b)
    except OverflowError:
        return math.copysign(math.inf, b)
