"""Regularized incomplete gamma and beta functions: gammainc, gammaincc, betainc.

The algorithms are jax's (from XLA and Cephes): a power series or a continued fraction,
iterated in a while_loop until every element has converged. The derivative in `a` of
the incomplete gamma functions runs the same iterations differentiated (as jax's
igamma_grad_a); betainc's derivatives in a and b are central differences of betainc
itself (jax refuses them), its derivative in x is exact.
"""

from __future__ import annotations

import math

from .. import numpy as snp
from ..compiler import dtypes as dt
from ..control_flow import while_loop
from ..custom_derivatives import custom_jvp
from ..tensor import Tensor
from ._gamma import _digamma, _lgamma
from ._operands import in_float32, real_floats

_VALUE, _DERIVATIVE = "value", "derivative"


def _eps(x: Tensor) -> float:
    return float(dt.finfo(x.dtype).eps)


def _series(ax, x, a, enabled, mode):
    """sum_n x^n / ((a+1)...(a+n)), the series for the lower function (x < a + 1)."""
    eps = _eps(x)

    def body(vals):
        on, r, c, ans, dc_da, dans_da = vals
        r1 = r + 1.0
        dc_da1 = dc_da * (x / r1) - (c * x) / (r1 * r1)
        dans_da1 = dans_da + dc_da1
        c1 = c * (x / r1)
        ans1 = ans + c1
        if mode == _VALUE:
            more = on & (c1 / ans1 > eps)
        else:
            more = on & (snp.abs(dc_da1 / dans_da1) > eps)
        keep = lambda new, old: snp.where(on, new, old)
        return (more, keep(r1, r), keep(c1, c), keep(ans1, ans), keep(dc_da1, dc_da),
                keep(dans_da1, dans_da))

    one, zero = snp.ones_like(a), snp.zeros_like(a)
    _, _, _, ans, _, dans_da = while_loop(lambda v: snp.any(v[0]), body,
                                          (enabled, a, one, one, zero, zero))
    if mode == _VALUE:
        return ans * ax / a
    dlogax_da = snp.log(x) - _digamma(a + 1.0)
    return ax * (ans * dlogax_da + dans_da) / a


def _continued_fraction(ax, x, a, enabled, mode):
    """The continued fraction for the upper function (x > a + 1), with its rescaling."""
    eps = _eps(x)

    def body(vals):
        (on, ans, t, y, z, c, pkm1, qkm1, pkm2, qkm2,
         dpkm2, dqkm2, dpkm1, dqkm1, dans) = vals
        c1 = c + 1.0
        y1 = y + 1.0
        z1 = z + 2.0
        yc = y1 * c1
        pk = pkm1 * z1 - pkm2 * yc
        qk = qkm1 * z1 - qkm2 * yc
        nonzero = qk != 0
        r = pk / snp.where(nonzero, qk, 1.0)
        t1 = snp.where(nonzero, snp.abs((ans - r) / r), 1.0)
        ans1 = snp.where(nonzero, r, ans)
        dpk = dpkm1 * z1 - pkm1 - dpkm2 * yc + pkm2 * c1
        dqk = dqkm1 * z1 - qkm1 - dqkm2 * yc + qkm2 * c1
        dans1 = snp.where(nonzero, (dpk - ans1 * dqk) / snp.where(nonzero, qk, 1.0), dans)
        grad_change = snp.where(nonzero, snp.abs(dans1 - dans), 1.0)
        rescale = snp.abs(pk) > 1.0 / eps
        scaled = lambda v: snp.where(rescale, v * eps, v)
        new = (ans1, t1, y1, z1, None, scaled(pk), scaled(qk), scaled(pkm1), scaled(qkm1),
               scaled(dpkm1), scaled(dqkm1), scaled(dpk), scaled(dqk), dans1)
        more = on & ((t1 > eps) if mode == _VALUE else (grad_change > eps))
        out = [more]
        for i, v in enumerate(new, start=1):
            out.append(c1 if v is None else snp.where(on, v, vals[i]))
        return tuple(out)

    y = 1.0 - a
    z = x + y + 1.0
    pkm1 = x + 1.0
    qkm1 = z * x
    ans = pkm1 / qkm1
    zero = snp.zeros_like(x)
    dqkm1 = -x
    count = snp.zeros((), dtype=x.dtype)  # one iteration count for all elements
    init = (enabled, ans, snp.ones_like(x), y, z, count, pkm1, qkm1, snp.ones_like(x), x,
            zero, zero, zero, dqkm1, (zero - ans * dqkm1) / qkm1)
    vals = while_loop(lambda v: (v[5] < 2000.0) & snp.any(v[0]), body, init)
    if mode == _VALUE:
        return vals[1] * ax
    dlogax_da = snp.log(x) - _digamma(a)
    return ax * (vals[1] * dlogax_da + vals[14])


def _log_ax(a, x):
    """log(x^a e^-x / Gamma(a)) and whether it underflows."""
    log_ax = a * snp.log(x) - x - _lgamma(a)
    return log_ax, log_ax < -math.log(float(dt.finfo(x.dtype).max))


@in_float32
def _igamma(a: Tensor, x: Tensor) -> Tensor:
    a, x = snp.broadcast_arrays(a, x)
    x_zero, x_inf = x == 0, x == math.inf
    bad = (x < 0) | (a < 0) | ((a == 0) & x_zero) | snp.isnan(a) | snp.isnan(x)
    upper = (x >= 1) & (x > a)
    log_ax, underflow = _log_ax(a, x)
    ax = snp.exp(log_ax)
    on = ~(x_zero | bad | underflow | x_inf)
    out = snp.where(upper, 1.0 - _continued_fraction(ax, x, a, on & upper, _VALUE),
                    _series(ax, x, a, on & ~upper, _VALUE))
    out = snp.where(x_zero, 0.0, out)
    out = snp.where(x_inf, 1.0, out)
    return snp.where(bad, math.nan, out)


@in_float32
def _igammac(a: Tensor, x: Tensor) -> Tensor:
    a, x = snp.broadcast_arrays(a, x)
    a_zero, x_inf = a == 0, x == math.inf
    bad = (x < 0) | (a < 0) | (a_zero & (x == 0)) | snp.isnan(a) | snp.isnan(x)
    lower = (x < 1) | (x < a)
    log_ax, underflow = _log_ax(a, x)
    ax = snp.exp(log_ax)
    on = ~(bad | underflow | x_inf | a_zero)
    out = snp.where(lower, 1.0 - _series(ax, x, a, on & lower, _VALUE),
                    _continued_fraction(ax, x, a, on & ~lower, _VALUE))
    out = snp.where(x_inf | a_zero, 0.0, out)
    return snp.where(bad, math.nan, out)


@in_float32
def _igamma_grad_a(a: Tensor, x: Tensor) -> Tensor:
    """d/da of gammainc(a, x)."""
    a, x = snp.broadcast_arrays(a, x)
    x_zero = x == 0
    bad = (x < 0) | (a <= 0) | snp.isnan(a) | snp.isnan(x)
    upper = (x > 1) & (x > a)
    log_ax, underflow = _log_ax(a, x)
    ax = snp.exp(log_ax)
    on = ~(x_zero | bad | underflow)
    out = snp.where(upper, -_continued_fraction(ax, x, a, on & upper, _DERIVATIVE),
                    _series(ax, x, a, on & ~upper, _DERIVATIVE))
    out = snp.where(x_zero, 0.0, out)
    return snp.where(bad, math.nan, out)


def _igamma_grad_x(a: Tensor, x: Tensor) -> Tensor:
    return snp.exp(-x + (a - 1.0) * snp.log(x) - _lgamma(a))


@custom_jvp
def _gammainc(a: Tensor, x: Tensor) -> Tensor:
    return _igamma(a, x)


@_gammainc.defjvp
def _gammainc_jvp(primals, tangents):
    (a, x), (ta, tx) = primals, tangents
    return _gammainc(a, x), ta * _igamma_grad_a(a, x) + tx * _igamma_grad_x(a, x)


@custom_jvp
def _gammaincc(a: Tensor, x: Tensor) -> Tensor:
    return _igammac(a, x)


@_gammaincc.defjvp
def _gammaincc_jvp(primals, tangents):
    (a, x), (ta, tx) = primals, tangents
    return _gammaincc(a, x), -(ta * _igamma_grad_a(a, x) + tx * _igamma_grad_x(a, x))


def gammainc(a, x) -> Tensor:
    """The regularized lower incomplete gamma function P(a, x) (a >= 0, x >= 0)."""
    a, x = snp.broadcast_arrays(*real_floats("gammainc", a, x))
    # a = inf: 0 for finite x >= 0 and nan at x = inf, as SciPy (XLA's igamma: nan, 1)
    a_inf = snp.isinf(a) & (a > 0) & (x >= 0)
    return snp.where(a_inf, snp.where(snp.isinf(x), math.nan, 0.0),
                     _gammainc(snp.where(a_inf, 1.0, a), x))


def gammaincc(a, x) -> Tensor:
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)."""
    a, x = real_floats("gammaincc", a, x)
    return _gammaincc(*snp.broadcast_arrays(a, x))


def _lentz(num, den, a, b, x, max_iter: int):
    """The continued fraction b0 + a1/(b1 + a2/(b2 + ...)) by the modified Lentz
    method; num(n, ...) and den(n, ...) give its n-th partial numerator/denominator."""
    tiny = _eps(x) / 2

    def clip(v):
        return snp.where(snp.abs(v) < tiny, tiny, v)

    def body(vals):
        n, _, c, d, h = vals
        an, bn = num(n, a, b, x), den(n, x)
        c1 = clip(bn + an / c)
        d1 = 1.0 / clip(bn + an * d)
        delta = c1 * d1
        return n + 1, snp.any(snp.abs(delta - 1.0) >= tiny), c1, d1, h * delta

    h0 = clip(den(0, x))
    one = snp.asarray(1, dtype=dt.int32)
    vals = while_loop(lambda v: (v[0] < max_iter) & v[1], body,
                      (one, snp.asarray(True), h0, snp.zeros_like(h0), h0))
    return vals[4]


def _betainc_numerator(n, a, b, x):
    """The n-th partial numerator of DLMF 8.17.23 (1 for n = 1)."""
    m = snp.astype((n - 1) // 2, x.dtype)
    even = -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0))
    even = snp.where(m == 0, -(a + b) * x / (a + 1.0), even)
    odd = m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m))
    return snp.where(n == 1, 1.0, snp.where(n % 2 == 0, even, odd))


def _betainc_denominator(n, x):
    return snp.where(n == 0, snp.zeros_like(x), snp.ones_like(x))


@in_float32
def _betainc_value(a: Tensor, b: Tensor, x: Tensor) -> Tensor:
    a, b, x = snp.broadcast_arrays(a, b, x)
    a_zero = (a == 0) | (b == math.inf)
    b_zero = (b == 0) | (a == math.inf)
    x_zero, x_one = x == 0, x == 1
    is_zero = (b_zero & ~x_one) | (a_zero & x_zero)
    is_one = (a_zero & ~x_zero) | (b_zero & x_one)
    bad = (a < 0) | (b < 0) | (x < 0) | (x > 1) | (a_zero & b_zero) | \
        snp.isnan(a) | snp.isnan(b) | snp.isnan(x)
    # the fraction converges fast below the mean; above it use I_x(a,b) = 1 - I_1-x(b,a)
    fast = x < (a + 1.0) / (a + b + 2.0)
    a, b, x = snp.where(fast, a, b), snp.where(fast, b, a), snp.where(fast, x, 1.0 - x)
    fraction = _lentz(_betainc_numerator, _betainc_denominator, a, b, x,
                      200 if x.dtype == dt.float32 else 600)
    tiny_a = a < 2 * float(dt.finfo(x.dtype).tiny)
    lbeta_small_a = _lgamma(b) - _lgamma(a + b)
    lbeta = _lgamma(a) + lbeta_small_a
    factor = snp.where(tiny_a, snp.exp(snp.log1p(-x) * b - lbeta_small_a),
                       snp.exp(snp.log(x) * a + snp.log1p(-x) * b - lbeta) / a)
    out = fraction * factor
    out = snp.where(fast, out, 1.0 - out)
    out = snp.where(is_zero, 0.0, out)
    out = snp.where(is_one, 1.0, out)
    return snp.where(bad, math.nan, out)


@custom_jvp
def _betainc(a: Tensor, b: Tensor, x: Tensor) -> Tensor:
    return _betainc_value(a, b, x)


@_betainc.defjvp
def _betainc_jvp(primals, tangents):
    (a, b, x), (ta, tb, tx) = primals, tangents
    lbeta = _lgamma(a) + _lgamma(b) - _lgamma(a + b)
    dx = snp.exp((b - 1.0) * snp.log1p(-x) + (a - 1.0) * snp.log(x) - lbeta)
    # central differences in a and b, with the step of the smallest total error
    step = float(dt.finfo(a.dtype).eps) ** (1 / 3)
    ha = step * snp.maximum(snp.abs(a), 1.0)
    hb = step * snp.maximum(snp.abs(b), 1.0)
    da = (_betainc_value(a + ha, b, x) - _betainc_value(a - ha, b, x)) / (2.0 * ha)
    db = (_betainc_value(a, b + hb, x) - _betainc_value(a, b - hb, x)) / (2.0 * hb)
    return _betainc(a, b, x), ta * da + tb * db + tx * dx


def betainc(a, b, x) -> Tensor:
    """The regularized incomplete beta function I_x(a, b) (a, b >= 0, 0 <= x <= 1)."""
    a, b, x = real_floats("betainc", a, b, x)
    return _betainc(*snp.broadcast_arrays(a, b, x))
