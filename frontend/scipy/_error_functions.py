"""The error function family: erf, erfc, erfinv and the standard normal ndtr, ndtri,
log_ndtr.

erf and erfc are primitives (chlo.erf/erfc); erfinv is XLA's algorithm (Giles' single
precision polynomial; in float64 refined by Newton steps on erf/erfc), ndtri and
log_ndtr are jax's (Cephes' rational approximations, an asymptotic series in the far
left tail), all written as compositions of stablejit.numpy.
"""

from __future__ import annotations

import math

import numpy as np

from .. import numpy as snp
from ..compiler import dtypes as dt
from ..compiler.primitives import elementwise as ew
from ..custom_derivatives import custom_jvp
from ..dispatch import bind1
from ..errors import at_user_line
from ..promotion import default_float
from ..tensor import Tensor
from ._operands import in_float32, log1p, real_float


def erf(x) -> Tensor:
    """The error function, 2/sqrt(pi) * integral from 0 to x of exp(-t^2) dt.

    Example:
        >>> stablejit.scipy.special.erf(snp.asarray([0.0, 1.0]))
        Tensor<f32[2] xla:host:0>
        [0. ..., 0.842700...]
    """
    return bind1(ew.erf, real_float("erf", x))


def erfc(x) -> Tensor:
    """The complementary error function, 1 - erf(x), accurate where erf(x) is near 1."""
    return bind1(ew.erfc, real_float("erfc", x))


def _polyval(coeffs, x: Tensor) -> Tensor:
    """sum coeffs[i] x^(n-1-i) by Horner's rule (highest power first)."""
    p = snp.full_like(x, coeffs[0])
    for c in coeffs[1:]:
        p = p * x + c
    return p


_ERFINV_CENTRAL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                   0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_ERFINV_TAIL = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
                0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)


@in_float32
def _erfinv(x: Tensor) -> Tensor:
    w = -snp.log1p(-x * x)
    central = w < 5.0
    p = snp.where(central, _polyval(_ERFINV_CENTRAL, w - 2.5),
                  _polyval(_ERFINV_TAIL, snp.sqrt(snp.where(central, 5.0, w)) - 3.0))
    y = p * x
    if x.dtype == dt.float64:
        # Newton steps on erf(y) = x, through erfc(|y|) = 1 - |x| (exact for |x| >= 1/2)
        # so the tails keep their relative accuracy
        ax, ay = snp.abs(x), snp.abs(y)
        for _ in range(2):
            resid = snp.where(ax < 0.5, erf(ay) - ax, (1.0 - ax) - erfc(ay))
            ay = ay - resid / (2 / math.sqrt(math.pi) * snp.exp(-ay * ay))
        y = snp.where(snp.isfinite(ay), snp.copysign(ay, x), y)
    return snp.where(snp.abs(x) == 1.0, x * math.inf, y)


@custom_jvp
def _erfinv_ad(x: Tensor) -> Tensor:
    return _erfinv(x)


@_erfinv_ad.defjvp
def _erfinv_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    y = _erfinv_ad(x)
    return y, t * (math.sqrt(math.pi) / 2) * snp.exp(y * y)


def erfinv(x) -> Tensor:
    """The inverse of erf on (-1, 1): +-inf at +-1, nan outside [-1, 1]."""
    return _erfinv_ad(real_float("erfinv", x))


def _ndtr_float(name: str, x) -> Tensor:
    """ndtr, ndtri and log_ndtr take float32 and float64, as in jax, and integers and
    booleans as the default float (the rule of every float function here; jax refuses
    them, SciPy takes them)."""
    x = snp.asarray(x)
    if x.dtype.kind in "biu":
        x = snp.astype(x, default_float())
    if x.dtype not in (dt.float32, dt.float64):
        raise TypeError(at_user_line(f"{name}: x.dtype={x.dtype.name} is not supported; "
                                     f"convert to float32 or float64"))
    return x


def _ndtr(x: Tensor) -> Tensor:
    half_sqrt_2 = 0.5 * math.sqrt(2.0)
    w = x * half_sqrt_2
    z = snp.abs(w)
    y = snp.where(z < half_sqrt_2, 1.0 + erf(w),
                  snp.where(w > 0, 2.0 - erfc(z), erfc(z)))
    return 0.5 * y


def ndtr(x) -> Tensor:
    """The standard normal CDF, (1 + erf(x / sqrt 2)) / 2, through erfc in the tails.

    Example:
        >>> stablejit.scipy.special.ndtr(snp.asarray([0.0]))
        Tensor<f32[1] xla:host:0>
        [0.5]
    """
    return _ndtr(_ndtr_float("ndtr", x))


# Cephes' ndtri: p0/q0 for p > exp(-2), p1/q1 and p2/q2 for the tail (z < 8, z >= 8)
_P0 = (-5.99633501014107895267E1, 9.80010754185999661536E1, -5.66762857469070293439E1,
       1.39312609387279679503E1, -1.23916583867381258016E0)
_Q0 = (1.0, 1.95448858338141759834E0, 4.67627912898881538453E0, 8.63602421390890590575E1,
       -2.25462687854119370527E2, 2.00260212380060660359E2, -8.20372256168333339912E1,
       1.59056225126211695515E1, -1.18331621121330003142E0)
_P1 = (4.05544892305962419923E0, 3.15251094599893866154E1, 5.71628192246421288162E1,
       4.40805073893200834700E1, 1.46849561928858024014E1, 2.18663306850790267539E0,
       -1.40256079171354495875E-1, -3.50424626827848203418E-2, -8.57456785154685413611E-4)
_Q1 = (1.0, 1.57799883256466749731E1, 4.53907635128879210584E1, 4.13172038254672030440E1,
       1.50425385692907503408E1, 2.50464946208309415979E0, -1.42182922854787788574E-1,
       -3.80806407691578277194E-2, -9.33259480895457427372E-4)
_P2 = (3.23774891776946035970E0, 6.91522889068984211695E0, 3.93881025292474443415E0,
       1.33303460815807542389E0, 2.01485389549179081538E-1, 1.23716634817820021358E-2,
       3.01581553508235416007E-4, 2.65806974686737550832E-6, 6.23974539184983293730E-9)
_Q2 = (1.0, 6.02427039364742014255E0, 3.67983563856160859403E0, 1.37702099489081330271E0,
       2.16236993594496635890E-1, 1.34204006088543189037E-2, 3.28014464682127739104E-4,
       2.89247864745380683936E-6, 6.79019408009981274425E-9)


def _ndtri(p: Tensor) -> Tensor:
    complement = snp.where(p > -math.expm1(-2.0), 1.0 - p, p)
    q = snp.where(complement == 0, 0.5, complement)  # any value that makes no nan
    w = q - 0.5
    ww = w * w
    x_big = -math.sqrt(2 * math.pi) * (w + w * ww * (_polyval(_P0, ww) / _polyval(_Q0, ww)))
    z = snp.sqrt(-2.0 * snp.log(q))
    first = z - snp.log(z) / z
    inv_z = 1.0 / z
    x_far = first - _polyval(_P2, inv_z) / _polyval(_Q2, inv_z) / z
    x_near = first - _polyval(_P1, inv_z) / _polyval(_Q1, inv_z) / z
    x = snp.where(q > math.exp(-2.0), x_big, snp.where(z >= 8.0, x_far, x_near))
    x = snp.where(p > 1.0 - math.exp(-2.0), x, -x)
    return snp.where(p == 0, -math.inf, snp.where(p == 1, math.inf, x))


def ndtri(p) -> Tensor:
    """The inverse of ndtr: -inf at 0, +inf at 1, nan outside [0, 1]."""
    return _ndtri(_ndtr_float("ndtri", p))


def _double_factorial(n: int) -> int:
    return int(np.prod(np.arange(n, 1, -2))) if n > 1 else 1


def _log_ndtr_lower(x: Tensor, series_order: int) -> Tensor:
    """log ndtr(x) for x << -1 by the asymptotic series of Mills' ratio."""
    x2 = x * x
    log_scale = -0.5 * x2 - snp.log(-x) - 0.5 * math.log(2 * math.pi)
    total = snp.ones_like(x)
    x2n = x2
    for n in range(1, series_order + 1):
        term = _double_factorial(2 * n - 1) / x2n
        total = total - term if n % 2 else total + term
        x2n = x2n * x2
    return log_scale + snp.log(total)


def _log_ndtr(x: Tensor, series_order: int) -> Tensor:
    # below `lower`, the asymptotic series; in float64 from where ndtr(x) would leave the
    # normal numbers, and with at least 10 terms (SciPy's accuracy: 3 terms from -20
    # are 1e-11 off), in float32 jax's -10 and series_order terms
    if x.dtype == dt.float64:
        lower, series_order = -37.5, max(series_order, 10)
    else:
        lower = -10.0
    above = x > 0
    # one ndtr call for both branches; the max/min keep the unused branch finite (and
    # so its gradient), as in jax. Above 0, log1p(-ndtr(-x)): log(ndtr(x)) would lose
    # the upper tail ndtr(-x) to the rounding of ndtr(x) near 1 (jax's log(ndtr(x)) up
    # to x = 8 is 6% off at x = 7.98 in float64)
    res = _ndtr(snp.where(above, -x, snp.maximum(x, lower)))
    return snp.where(above, log1p(-res),
                     snp.where(x > lower, snp.log(res),
                               _log_ndtr_lower(snp.minimum(x, lower), series_order)))


@custom_jvp
def _log_ndtr_ad(x: Tensor, series_order: Tensor) -> Tensor:
    return _log_ndtr(x, series_order.shape[0])


@_log_ndtr_ad.defjvp
def _log_ndtr_jvp(primals, tangents):
    (x, order), (t, _) = primals, tangents
    out = _log_ndtr_ad(x, order)
    log_pdf = -0.5 * x * x - 0.5 * math.log(2 * math.pi)
    return out, t * snp.exp(log_pdf - out)


def log_ndtr(x, series_order: int = 3) -> Tensor:
    """log(ndtr(x)), accurate far into both tails."""
    if not isinstance(series_order, int):
        raise TypeError(at_user_line("log_ndtr: series_order must be a Python int"))
    if not 0 <= series_order <= 30:
        raise ValueError(at_user_line(f"log_ndtr: series_order must be in [0, 30], got "
                                      f"{series_order}"))
    x = _ndtr_float("log_ndtr", x)
    # the order travels as the length of an empty-valued tensor: custom_jvp takes tensors
    return _log_ndtr_ad(x, snp.zeros((series_order,), dtype=x.dtype))
