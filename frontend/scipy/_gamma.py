"""The gamma function family: gammaln, digamma, gamma, gammasgn, loggamma, betaln,
beta, poch, multigammaln, factorial, comb.

gammaln and digamma are XLA's own algorithms (the chlo.lgamma and chlo.digamma
decompositions: a Lanczos approximation with g = 7 and Euler's reflection below 1/2)
written as compositions of stablejit.numpy, so they agree with jax to rounding on every
backend; the rest are compositions of those, as in jax.scipy.special.
"""

from __future__ import annotations

import math

from .. import numpy as snp
from ..custom_derivatives import custom_jvp
from ..errors import at_user_line
from ..tensor import Tensor
from ._operands import in_float32, real_float, real_floats

_LANCZOS_G = 7.0
_LANCZOS_BASE = 0.99999999999980993227684700473478
_LANCZOS_COEFFS = (676.520368121885098567009190444019, -1259.13921672240287047156078755283,
                   771.3234287776530788486528258894, -176.61502916214059906584551354,
                   12.507343278686904814458936853, -0.13857109526572011689554707,
                   9.984369578019570859563e-6, 1.50563273514931155834e-7)


def _lanczos_shift(x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """(reflect, z, log(z + g + 1/2)): z = -x where x < 1/2 (reflected), else x - 1."""
    reflect = x < 0.5
    z = snp.where(reflect, -x, x - 1.0)
    # log(z + g + 1/2) as a compile-time log plus a log1p: accurate where log is not
    log_t = math.log(_LANCZOS_G + 0.5) + snp.log1p(z / (_LANCZOS_G + 0.5))
    return reflect, z, log_t


@in_float32
def _lgamma(x: Tensor) -> Tensor:
    reflect, z, log_t = _lanczos_shift(x)
    a = snp.full_like(x, _LANCZOS_BASE)
    for i, c in enumerate(_LANCZOS_COEFFS):
        a = a + c / (z + float(i + 1))
    t = z + (_LANCZOS_G + 0.5)
    # (z + 1/2) log t - t, written so that it does not overflow for large z
    log_y = math.log(math.sqrt(2 * math.pi)) + (z + 0.5 - t / log_t) * log_t + snp.log(a)
    # log|sin(pi x)| through the fractional part of |x| folded into [0, 1/2]: exact zeros
    # at the integers (the poles) and no overflow of pi * x
    abs_x = snp.abs(x)
    frac = abs_x - snp.floor(abs_x)
    frac = snp.where(frac > 0.5, 1.0 - frac, frac)
    log_sin = snp.log(snp.sin(math.pi * frac))
    reflection = snp.where(snp.isfinite(log_sin), math.log(math.pi) - log_sin - log_y,
                           -log_sin)
    out = snp.where(reflect, reflection, log_y)
    return snp.where(snp.isinf(x), math.inf, out)


@in_float32
def _digamma(x: Tensor) -> Tensor:
    reflect, z, log_t = _lanczos_shift(x)
    num = snp.zeros_like(x)
    denom = snp.full_like(x, _LANCZOS_BASE)
    for i, c in enumerate(_LANCZOS_COEFFS):
        zi = z + float(i + 1)
        num = num - c / (zi * zi)
        denom = denom + c / zi
    y = log_t + num / denom - _LANCZOS_G / (z + (_LANCZOS_G + 0.5))
    # pi * cot(pi x) with x shifted into [-1/2, 1/2] first, for precision near integers
    reduced = x + snp.abs(snp.floor(x + 0.5))
    reflection = y - math.pi * snp.cos(math.pi * reduced) / snp.sin(math.pi * reduced)
    out = snp.where(reflect, reflection, y)
    pole = (x < 0) & (x == snp.floor(x))
    # at zero, SciPy's one-sided limits: -inf at +0, +inf at -0
    return snp.where(pole, math.nan, snp.where(x == 0, snp.copysign(math.inf, -x), out))


@custom_jvp
def _gammaln(x: Tensor) -> Tensor:
    return _lgamma(x)


@_gammaln.defjvp
def _gammaln_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return _gammaln(x), t * _digamma(x)


def gammaln(x) -> Tensor:
    """log|Gamma(x)|: +inf at the poles (0 and the negative integers) and at +-inf.

    Example:
        >>> stablejit.scipy.special.gammaln(snp.asarray([3.0, 5.0]))
        Tensor<f32[2] xla:host:0>
        [0.693147..., 3.178054...]
    """
    return _gammaln(real_float("gammaln", x))


def digamma(x) -> Tensor:
    """psi(x) = d/dx log Gamma(x): -inf at +0 and +inf at -0 (SciPy's; jax 0.10 gives
    nan, 0.11 -inf at both), nan at the negative integers.

    Example:
        >>> stablejit.scipy.special.digamma(snp.asarray([1.0]))
        Tensor<f32[1] xla:host:0>
        [-0.5772154]
    """
    return _digamma(real_float("digamma", x))


def loggamma(x) -> Tensor:
    """The principal branch of log Gamma for real x: gammaln(x) for x > 0, nan elsewhere
    (complex arguments are not supported)."""
    x = real_float("loggamma", x)
    return snp.where(x > 0, gammaln(x), math.nan)


def gammasgn(x) -> Tensor:
    """The sign of Gamma(x): nan at the poles and for nan, -1 on (-2k-1, -2k) and at
    -0.0, else 1."""
    x = real_float("gammasgn", x)
    floor_x = snp.floor(x)
    negative = x < 0
    is_nan = (negative & (x == floor_x)) | snp.isnan(x)
    minus = (negative & (snp.remainder(floor_x, 2.0) != 0)) | ((x == 0) & snp.signbit(x))
    return snp.where(is_nan, math.nan, snp.where(minus, -1.0, snp.ones_like(x)))


def gamma(x) -> Tensor:
    """Gamma(x) = gammasgn(x) * exp(gammaln(x))."""
    x = real_float("gamma", x)
    return gammasgn(x) * snp.exp(gammaln(x))


def _algdiv(a: Tensor, b: Tensor) -> Tensor:
    """log(Gamma(b) / Gamma(a + b)) for b >= 8 (a <= b), SciPy's cdflib algdiv."""
    c0, c1, c2 = 0.833333333333333e-01, -0.277777777760991e-02, 0.793650666825390e-03
    c3, c4, c5 = -0.595202931351870e-03, 0.837308034031215e-03, -0.165322962780713e-02
    h = a / b
    x = h / (1.0 + h)
    d = b + (a - 0.5)
    x2 = x * x
    s3 = 1.0 + (x + x2)
    s5 = 1.0 + (x + x2 * s3)
    s7 = 1.0 + (x + x2 * s5)
    s9 = 1.0 + (x + x2 * s7)
    s11 = 1.0 + (x + x2 * s9)
    t = (1.0 / b) ** 2
    w = ((((c5 * s11 * t + c4 * s9) * t + c3 * s7) * t + c2 * s5) * t + c1 * s3) * t + c0
    w = w * (x / b)
    u = d * snp.log1p(a / b)
    v = a * (snp.log(b) - 1.0)
    return snp.where(u <= v, (w - v) - u, (w - u) - v)


def betaln(a, b) -> Tensor:
    """log|B(a, b)|, accurate for large arguments too (SciPy's cdflib algorithm, as jax)."""
    a, b = real_floats("betaln", a, b)
    a, b = snp.minimum(a, b), snp.maximum(a, b)
    small_b = gammaln(a) + (gammaln(b) - gammaln(a + b))
    large_b = gammaln(a) + _algdiv(a, b)
    return snp.where(b < 8, small_b, large_b)


def beta(a, b) -> Tensor:
    """B(a, b) = Gamma(a) Gamma(b) / Gamma(a + b), as sign * exp(betaln(a, b)) (jax's
    way: no overflow of the gammas for large arguments)."""
    a, b = real_floats("beta", a, b)
    return gammasgn(a) * gammasgn(b) * gammasgn(a + b) * snp.exp(betaln(a, b))


def poch(z, m) -> Tensor:
    """The Pochhammer symbol (z)_m = Gamma(z + m) / Gamma(z); 1 where m == 0."""
    z, m = real_floats("poch", z, m)
    return snp.where(m == 0, snp.ones_like(z + m), gamma(z + m) / gamma(z))


def multigammaln(a, d: int) -> Tensor:
    """The log of the multivariate gamma function of dimension d (a Python int)."""
    if not isinstance(d, int):
        raise TypeError(at_user_line(f"multigammaln: d must be a Python int, got "
                                     f"{type(d).__name__}"))
    a = real_float("multigammaln", a)
    constant = 0.25 * d * (d - 1) * math.log(math.pi)
    b = snp.arange(d, dtype=a.dtype) / 2.0
    return snp.sum(gammaln(snp.expand_dims(a, -1) - b), axis=-1) + constant


def factorial(n, exact: bool = False) -> Tensor:
    """n! = Gamma(n + 1) as a float; 0 for negative n. exact=True is not supported."""
    if exact:
        raise NotImplementedError(at_user_line(
            "factorial(exact=True) is not supported (as in jax); use exact=False"))
    n = real_float("factorial", n)
    return snp.where(n < 0, 0.0, snp.exp(gammaln(n + 1.0)))


def comb(N, k, *, repetition: bool = False) -> Tensor:
    """The binomial coefficient N choose k as a float; 0 outside 0 <= k <= N."""
    N, k = real_floats("comb", N, k)
    if repetition:
        return snp.where((k == 0) & (N >= 0), 1.0, comb(N + k - 1.0, k))
    ok = (k <= N) & (N >= 0) & (k >= 0)
    safe_n = snp.where(ok, N, 0.0)
    safe_k = snp.where(ok, k, 0.0)
    out = snp.exp(gammaln(safe_n + 1.0) - gammaln(safe_k + 1.0)
                  - gammaln(safe_n + 1.0 - safe_k))
    return snp.where(ok, out, 0.0)
