"""Continuous distributions, each drawn from uniform bits as jax.random draws them."""

from __future__ import annotations

import math

import numpy as np

from .. import numpy as snp
from ..compiler import dtypes as dt
from ..control_flow import while_loop
from ..errors import at_user_line
from ..scipy.special import erfinv as _erfinv
from ..tensor import Tensor
from ._core import (
    _c,
    _check_key,
    _finfo,
    _float_dtype,
    _param_shape,
    _prepare,
    _rademacher_impl,
    _real_param,
    _shape,
    _split_impl,
    _uniform_impl,
    sampler,
)

# Giles' single-precision erf_inv (the polynomial XLA / CHLO use for float32).
_ERFINV_SMALL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                 0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)


_ERFINV_LARGE = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
                 0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)


def _erf_inv32(x: Tensor) -> Tensor:
    """erf_inv in float32 arithmetic (x is float32)."""
    w = -snp.log1p(-(x * x))
    small = w < 5.0
    w = snp.where(small, w - 2.5, snp.sqrt(w) - 3.0)
    f32 = dt.float32
    p = snp.where(small, snp.asarray(_ERFINV_SMALL[0], dtype=f32),
                  snp.asarray(_ERFINV_LARGE[0], dtype=f32))
    for a, b in zip(_ERFINV_SMALL[1:], _ERFINV_LARGE[1:], strict=True):
        c = snp.where(small, snp.asarray(a, dtype=f32), snp.asarray(b, dtype=f32))
        p = c + p * w
    return snp.where(snp.abs(x) == 1.0, x * np.float32(np.inf), p * x)


def _erf32(x: Tensor) -> Tensor:
    """erf in float32 arithmetic through erfc's Chebyshev fit (fractional error below
    1.2e-7, Numerical Recipes' erfcc)."""
    z = snp.abs(x)
    t = 1.0 / (1.0 + 0.5 * z)
    poly = 0.17087277
    for c in (-0.82215223, 1.48851587, -1.13520398, 0.27886807, -0.18628806, 0.09678418,
              0.37409196, 1.00002368, -1.26551223):
        poly = c + t * poly
    erfc = t * snp.exp(-z * z + poly)
    return snp.where(x >= 0, 1.0 - erfc, erfc - 1.0)


def normal(key, shape=(), dtype=None) -> Tensor:
    """Standard normal floats.

    Example:
        >>> stablejit.random.normal(stablejit.random.key(0), (2, 2))
        Tensor<f32[2,2] xla:host:0>
        [[ 1.6226422 ,  2.0252647 ],
         [-0.43359444, -0.07861735]]
    """
    k = _check_key("normal", key)
    d = _float_dtype("normal", dtype)
    return _normal(k, _shape(shape), d)


def _normal_impl(k, shape, d):
    lo = float(np.nextafter(np.array(-1.0, d.np), np.array(0.0, d.np)))
    u = _uniform_impl(k, lo, 1.0, shape, d)
    if d.bits == 64:  # jax's float64 draw (x64 mode's default): erf_inv in float64
        return snp.asarray(np.sqrt(2.0), dtype=d) * _erfinv(u)
    e = snp.astype(_erf_inv32(snp.astype(u, dt.float32)), d)
    return snp.asarray(np.sqrt(2.0), dtype=d) * e


_normal = sampler(_normal_impl, (1, 2))


def truncated_normal(key, lower, upper, shape=None, dtype=None) -> Tensor:
    """Standard normal floats conditioned on lower < x < upper (shape defaults to the
    broadcast shape of the bounds).

    Example:
        >>> stablejit.random.truncated_normal(stablejit.random.key(0), -1.0, 1.0, (3,))
        Tensor<f32[3] xla:host:0>
        [ 0.861859...,  0.941288..., -0.291048...]
    """
    k = _check_key("truncated_normal", key)
    d = _float_dtype("truncated_normal", dtype)
    lo, hi = snp.asarray(lower), snp.asarray(upper)
    bshape = snp.broadcast_shapes(lo.shape, hi.shape)
    shape = bshape if shape is None else _shape(shape)
    snp.broadcast_shapes(shape, bshape)  # raises a clear error when they do not fit
    return _truncated(k, lo, hi, shape, d)


def _truncated_impl(k, lower, upper, shape, d):
    f32 = dt.float32
    lower, upper = snp.astype(lower, d), snp.astype(upper, d)
    sqrt2 = np.float32(np.sqrt(2.0))
    a = _erf32(snp.astype(lower, f32) / sqrt2)
    b = _erf32(snp.astype(upper, f32) / sqrt2)
    u = _uniform_impl(k, a, b, shape, f32)
    out = snp.astype(sqrt2 * _erf_inv32(u), d)
    return snp.clip(out, snp.nextafter(lower, snp.asarray(np.inf, dtype=d)),
                    snp.nextafter(upper, snp.asarray(-np.inf, dtype=d)))


_truncated = sampler(_truncated_impl, (3, 4))


def gumbel(key, shape=(), dtype=None) -> Tensor:
    """Standard Gumbel floats: -log(-log(u))."""
    k = _check_key("gumbel", key)
    d = _float_dtype("gumbel", dtype)
    return _gumbel(k, _shape(shape), d)


def _gumbel_impl(k, shape, d):
    tiny = float(_finfo(d).tiny)
    return -snp.log(-snp.log(_uniform_impl(k, tiny, 1.0, shape, d)))


_gumbel = sampler(_gumbel_impl, (1, 2))


def exponential(key, shape=(), dtype=None) -> Tensor:
    """Standard exponential floats (rate 1): -log(1 - u)."""
    k = _check_key("exponential", key)
    return _exponential(k, _shape(shape), _float_dtype("exponential", dtype))


def _exponential_impl(k, shape, d):
    # 1 - u lies in (0, 1], so the log is finite
    return -snp.log1p(-_uniform_impl(k, 0.0, 1.0, shape, d))


_exponential = sampler(_exponential_impl, (1, 2))


def laplace(key, shape=(), dtype=None) -> Tensor:
    """Standard Laplace floats (density exp(-|x|) / 2)."""
    k = _check_key("laplace", key)
    return _laplace(k, _shape(shape), _float_dtype("laplace", dtype))


def _laplace_impl(k, shape, d):
    lo = float(np.array(-1.0, d.np) + _finfo(d).epsneg)  # keeps log1p(-|u|) finite
    u = _uniform_impl(k, lo, 1.0, shape, d)
    return snp.sign(u) * snp.log1p(-snp.abs(u))


_laplace = sampler(_laplace_impl, (1, 2))


def logistic(key, shape=(), dtype=None) -> Tensor:
    """Standard logistic floats: log(u / (1 - u))."""
    k = _check_key("logistic", key)
    return _logistic(k, _shape(shape), _float_dtype("logistic", dtype))


def _logistic_impl(k, shape, d):
    x = _uniform_impl(k, float(_finfo(d).tiny), 1.0, shape, d)
    return snp.log(x) - snp.log1p(-x)


_logistic = sampler(_logistic_impl, (1, 2))


def cauchy(key, shape=(), dtype=None) -> Tensor:
    """Standard Cauchy floats: tan(pi (u - 1/2))."""
    k = _check_key("cauchy", key)
    return _cauchy(k, _shape(shape), _float_dtype("cauchy", dtype))


def _cauchy_impl(k, shape, d):
    u = _uniform_impl(k, float(_finfo(d).eps), 1.0, shape, d)
    return snp.tan(_c(np.pi, d) * (u - _c(0.5, d)))


_cauchy = sampler(_cauchy_impl, (1, 2))


def maxwell(key, shape=(), dtype=None) -> Tensor:
    """One-sided Maxwell floats (density ~ x^2 exp(-x^2 / 2)): the length of a standard
    normal 3-vector."""
    k = _check_key("maxwell", key)
    return _maxwell(k, _shape(shape), _float_dtype("maxwell", dtype))


def _maxwell_impl(k, shape, d):
    z = _normal_impl(k, (*shape, 3), d)
    return snp.sqrt(snp.sum(z * z, axis=-1))


_maxwell = sampler(_maxwell_impl, (1, 2))


def double_sided_maxwell(key, loc, scale, shape=(), dtype=None) -> Tensor:
    """Double-sided Maxwell floats (density ~ z^2 exp(-z^2 / 2), z = (x - loc) / scale).
    As in jax, the result shape is shape + the parameters' broadcast shape (shape=()
    stands for that broadcast shape)."""
    k = _check_key("double_sided_maxwell", key)
    d = _float_dtype("double_sided_maxwell", dtype)
    lo = _real_param("double_sided_maxwell", "loc", loc)
    sc = _real_param("double_sided_maxwell", "scale", scale)
    pshape = _param_shape("double_sided_maxwell", None, loc=lo, scale=sc)
    shape = _shape(shape) or pshape
    return _double_sided_maxwell(k, lo, sc, shape + pshape, d)


def _double_sided_maxwell_impl(k, loc, scale, shape, d):
    ks = _split_impl(k, (2,))
    m = _maxwell_impl(ks[0], shape, d)
    sign = _rademacher_impl(ks[1], shape, d)
    return sign * m * snp.astype(scale, d) + snp.astype(loc, d)


_double_sided_maxwell = sampler(_double_sided_maxwell_impl, (3, 4))


def weibull_min(key, scale, concentration, shape=(), dtype=None) -> Tensor:
    """Weibull floats (density ~ x^(c-1) exp(-(x/scale)^c), c = concentration), by
    inverting the CDF; the result is shape broadcast with the parameters."""
    k = _check_key("weibull_min", key)
    d = _float_dtype("weibull_min", dtype)
    sc = _real_param("weibull_min", "scale", scale)
    co = _real_param("weibull_min", "concentration", concentration)
    shape = _shape(shape)
    _param_shape("weibull_min", None, sample=shape, scale=sc, concentration=co)
    return _weibull_min(k, sc, co, shape, d)


def _weibull_min_impl(k, scale, concentration, shape, d):
    u = _uniform_impl(k, 0.0, 1.0, shape, d)
    inv_c = snp.astype(1.0 / snp.astype(concentration, dt.float32), d)
    return snp.power(-snp.log1p(-u), inv_c) * snp.astype(scale, d)


_weibull_min = sampler(_weibull_min_impl, (3, 4))


def pareto(key, b, shape=None, dtype=None) -> Tensor:
    """Pareto floats (density b / x^(b+1) on x >= 1): exp(exponential / b)."""
    k, d, (bt,), shape = _prepare("pareto", key, dtype, shape, b=b)
    return _pareto(k, bt, shape, d)


def _pareto_impl(k, b, shape, d):
    return snp.exp(_exponential_impl(k, shape, d) / snp.astype(b, d))


_pareto = sampler(_pareto_impl, (2, 3))


def rayleigh(key, scale, shape=None, dtype=None) -> Tensor:
    """Rayleigh floats (density ~ x exp(-x^2 / (2 scale^2))): scale sqrt(-2 log u)."""
    k, d, (sc,), shape = _prepare("rayleigh", key, dtype, shape, scale=scale)
    return _rayleigh(k, sc, shape, d)


def _rayleigh_impl(k, scale, shape, d):
    u = _uniform_impl(k, 0.0, 1.0, shape, d)
    scale = snp.broadcast_to(snp.astype(scale, d), shape)
    return scale * snp.sqrt(snp.log(u) * _c(-2.0, d))


_rayleigh = sampler(_rayleigh_impl, (2, 3))


def wald(key, mean, shape=None, dtype=None) -> Tensor:
    """Wald (inverse Gaussian, shape parameter 1) floats with the given mean, by
    Michael, Schucany and Haas' transformation of a normal and a uniform draw."""
    k, d, (m,), shape = _prepare("wald", key, dtype, shape, mean=mean)
    return _wald(k, m, shape, d)


def _wald_impl(k, mean, shape, d):
    ks = _split_impl(k, (2,))
    mean = snp.broadcast_to(snp.astype(mean, d), shape)
    v = _normal_impl(ks[0], shape, d)
    z = _uniform_impl(ks[1], 0.0, 1.0, shape, d)
    y = v * v
    mean_sq = mean * mean
    sqrt_term = snp.sqrt(4 * mean * y + mean_sq * (y * y))
    x = mean + mean_sq * y / 2 - mean / 2 * sqrt_term
    return snp.where(z <= mean / (mean + x), x, mean_sq / x)


_wald = sampler(_wald_impl, (2, 3))


def triangular(key, left, mode, right, shape=None, dtype=None) -> Tensor:
    """Triangular floats on [left, right] with peak at mode, by inverting the CDF."""
    k, d, (lo, mo, hi), shape = _prepare("triangular", key, dtype, shape, left=left,
                                         mode=mode, right=right)
    return _triangular(k, lo, mo, hi, shape, d)


def _triangular_impl(k, left, mode, right, shape, d):
    left, mode, right = (snp.broadcast_to(snp.astype(v, d), shape) for v in (left, mode, right))
    fc = (mode - left) / (right - left)
    u = _uniform_impl(k, 0.0, 1.0, shape, d)
    out1 = left + snp.sqrt(u * (right - left) * (mode - left))
    out2 = right - snp.sqrt((1 - u) * (right - left) * (right - mode))
    return snp.where(u < fc, out1, out2)


_triangular = sampler(_triangular_impl, (4, 5))


def lognormal(key, sigma=1.0, shape=None, dtype=None) -> Tensor:
    """Log-normal floats: exp(sigma * standard normal)."""
    k, d, (sg,), shape = _prepare("lognormal", key, dtype, shape, sigma=sigma)
    return _lognormal(k, sg, shape, d)


def _lognormal_impl(k, sigma, shape, d):
    return snp.exp(_normal_impl(k, shape, d) * snp.astype(sigma, d))


_lognormal = sampler(_lognormal_impl, (2, 3))


def _gamma_many(keys, alpha, d, log_space):
    """One gamma(alpha[i]) draw per key keys[i] (keys: (n, 2), alpha: (n,)), by Marsaglia
    and Tsang's rejection method in jax's order of draws, so each element's numbers are
    those of jax's per-element loop: every element keeps drawing until it is accepted,
    and an accepted element's state stops changing. alpha < 1 is boosted to alpha + 1
    and scaled by u^(1/alpha) (or, in log space, shifted by log(u) / alpha)."""
    one, zero = _c(1.0, d), _c(0.0, d)
    third = _c(1.0 / 3.0, d)
    boost = alpha >= one
    alpha_orig = alpha
    alpha = snp.where(boost, alpha, alpha + one)
    dd = alpha - third
    cc = third / snp.sqrt(dd)

    def rejected(x2, v, u):
        return (u >= one - _c(0.0331, d) * (x2 * x2)) & (
            snp.log(u) >= x2 * _c(0.5, d) + dd * (one - v + snp.log(v)))

    def cond(st):
        return snp.any(rejected(*st[1:]))

    def body(st):
        key, x2, v3, u = st
        active = rejected(x2, v3, u)
        ks = _split_impl(key, (3,))

        # normals until v = 1 + c x is positive
        def inner_body(s):
            kk, x, v = s
            need = v <= zero
            sub = _split_impl(kk, (2,))
            x_new = _normal_impl(sub[:, 1], (), d)
            return (snp.where(need[:, None], sub[:, 0], kk), snp.where(need, x_new, x),
                    snp.where(need, one + x_new * cc, v))

        init = (ks[:, 1], snp.zeros_like(alpha), snp.where(active, -one, one))
        _, x, v = while_loop(lambda s: snp.any(s[2] <= zero), inner_body, init)
        u_new = _uniform_impl(ks[:, 2], 0.0, 1.0, (), d)
        return (snp.where(active[:, None], ks[:, 0], key), snp.where(active, x * x, x2),
                snp.where(active, v * v * v, v3), snp.where(active, u_new, u))

    ks = _split_impl(keys, (2,))
    n = alpha.shape
    init = (ks[:, 0], snp.zeros(n, d), snp.ones(n, d), snp.full(n, 2.0, dtype=d))
    v3 = while_loop(cond, body, init)[2]
    if log_space:
        # log(u) through log1p(-u'), the form jax uses, so that both spaces agree
        log_u = snp.log1p(-_uniform_impl(ks[:, 1], 0.0, 1.0, (), d))
        log_boost = snp.where(boost | (log_u == 0), zero, log_u * (one / alpha_orig))
        return snp.log(dd) + snp.log(v3) + log_boost
    u = 1 - _uniform_impl(ks[:, 1], 0.0, 1.0, (), d)
    return dd * v3 * snp.where(boost, one, snp.power(u, one / alpha_orig))


def gamma(key, a, shape=None, dtype=None) -> Tensor:
    """Standard gamma floats with shape parameter a (density ~ x^(a-1) exp(-x))."""
    k, d, (at,), shape = _prepare("gamma", key, dtype, shape, a=a)
    return _gamma(k, at, shape, d, False)


def loggamma(key, a, shape=None, dtype=None) -> Tensor:
    """The logs of standard gamma(a) draws, computed in log space (accurate for small a,
    where the draws themselves underflow)."""
    k, d, (at,), shape = _prepare("loggamma", key, dtype, shape, a=a)
    return _gamma(k, at, shape, d, True)


def _gamma_impl(k, a, shape, d, log_space):
    n = math.prod(shape)
    if n == 0:
        return snp.zeros(shape, d)
    a = snp.reshape(snp.broadcast_to(snp.astype(a, d), shape), (n,))
    keys = _split_impl(k, (n,))  # one key per element, as jax's split(key, size)
    return snp.reshape(_gamma_many(keys, a, d, log_space), shape)


_gamma = sampler(_gamma_impl, (2, 3, 4))


def beta(key, a, b, shape=None, dtype=None) -> Tensor:
    """Beta(a, b) floats on [0, 1]: g_a / (g_a + g_b) for gamma draws, formed from
    their logs so that small a and b keep their precision."""
    k, d, (at, bt), shape = _prepare("beta", key, dtype, shape, a=a, b=b)
    return _beta(k, at, bt, shape, d)


def _beta_impl(k, a, b, shape, d):
    ks = _split_impl(k, (2,))
    lga = _gamma_impl(ks[0], a, shape, d, True)
    lgb = _gamma_impl(ks[1], b, shape, d, True)
    log_max = snp.maximum(lga, lgb)
    ga, gb = snp.exp(lga - log_max), snp.exp(lgb - log_max)
    return ga / (ga + gb)


_beta = sampler(_beta_impl, (3, 4))


def chisquare(key, df, shape=None, dtype=None) -> Tensor:
    """Chi-square floats with df degrees of freedom: 2 gamma(df / 2)."""
    k, d, (dft,), shape = _prepare("chisquare", key, dtype, shape, df=df)
    return _chisquare(k, dft, shape, d)


def _chisquare_impl(k, df, shape, d):
    half = snp.astype(df, d) / _c(2.0, d)
    return snp.exp(_gamma_impl(k, half, shape, d, True)) * _c(2.0, d)


_chisquare = sampler(_chisquare_impl, (2, 3))


def t(key, df, shape=None, dtype=None) -> Tensor:
    """Student's t floats with df degrees of freedom: normal / sqrt(gamma(df/2) / (df/2))."""
    k, d, (dft,), shape = _prepare("t", key, dtype, shape, df=df)
    return _t(k, dft, shape, d)


def _t_impl(k, df, shape, d):
    ks = _split_impl(k, (2,))
    n = _normal_impl(ks[0], shape, d)
    half = snp.astype(df, d) / _c(2.0, d)
    g = _gamma_impl(ks[1], half, shape, d, False)
    return n * snp.sqrt(half / g)


_t = sampler(_t_impl, (2, 3))


def f(key, dfnum, dfden, shape=None, dtype=None) -> Tensor:
    """F-distribution floats: (chisquare(dfnum) / dfnum) / (chisquare(dfden) / dfden)."""
    k, d, (num, den), shape = _prepare("f", key, dtype, shape, dfnum=dfnum, dfden=dfden)
    return _f(k, num, den, shape, d)


def _f_impl(k, dfnum, dfden, shape, d):
    dfnum, dfden = snp.astype(dfnum, d), snp.astype(dfden, d)
    ks = _split_impl(k, (2,))
    chi_num = _chisquare_impl(ks[1], dfnum, shape, d)
    chi_den = _chisquare_impl(ks[0], dfden, shape, d)
    return (chi_num / dfnum) / (chi_den / dfden)


_f = sampler(_f_impl, (3, 4))


def generalized_normal(key, p, shape=(), dtype=None) -> Tensor:
    """Generalized normal floats (density ~ exp(-|x|^p)): a random sign times
    gamma(1/p)^(1/p)."""
    k = _check_key("generalized_normal", key)
    d = _float_dtype("generalized_normal", dtype)
    pt = _real_param("generalized_normal", "p", p)
    if pt.ndim:
        raise ValueError(at_user_line(f"random.generalized_normal: p must be a scalar, got "
                                      f"shape {pt.shape}"))
    return _generalized_normal(k, pt, _shape(shape), d)


def _generalized_normal_impl(k, p, shape, d):
    ks = _split_impl(k, (2,))
    inv_p = _c(1.0, d) / snp.astype(p, d)
    g = _gamma_impl(ks[0], inv_p, shape, d, False)
    return _rademacher_impl(ks[1], shape, d) * snp.power(g, inv_p)


_generalized_normal = sampler(_generalized_normal_impl, (2, 3))
