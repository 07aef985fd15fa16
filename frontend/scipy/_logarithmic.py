"""Logarithms made safe and their inverses: xlogy, xlog1py, logit, expit, entr,
rel_entr, kl_div, the Box-Cox transforms, and the log-domain reductions logsumexp,
softmax, log_softmax.

As in jax.scipy.special, xlogy and xlog1py are 0 where x == 0 (unless y is nan) and
carry their own derivative rules, so the gradient at x == 0 is finite.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from .. import numpy as snp
from ..autodiff import stop_gradient
from ..composite import one_program
from ..custom_derivatives import custom_jvp
from ..tensor import Tensor
from ._operands import log1p, real_float, real_floats


def _boxcox_of(log_x: Tensor, lmbda: Tensor) -> Tensor:
    zero = lmbda == 0
    safe = snp.where(zero, snp.ones_like(lmbda), lmbda)  # (no 0/0 in the unused branch)
    return snp.where(zero, log_x, snp.expm1(safe * log_x) / safe)


def boxcox(x, lmbda) -> Tensor:
    """The Box-Cox transform: (x**lmbda - 1) / lmbda, log(x) where lmbda == 0 (computed as
    expm1(lmbda log x) / lmbda, accurate for small lmbda)."""
    x, lmbda = real_floats("boxcox", x, lmbda)
    return _boxcox_of(snp.log(x), lmbda)


def boxcox1p(x, lmbda) -> Tensor:
    """boxcox(1 + x, lmbda), accurate for small x; nan for x < -1."""
    x, lmbda = real_floats("boxcox1p", x, lmbda)
    return _boxcox_of(log1p(x), lmbda)


@custom_jvp
def _xlogy(x: Tensor, y: Tensor) -> Tensor:
    return snp.where((x != 0) | snp.isnan(y), x * snp.log(y), 0.0)


@_xlogy.defjvp
def _xlogy_jvp(primals, tangents):
    (x, y), (tx, ty) = primals, tangents
    return _xlogy(x, y), tx * snp.log(y) + ty * x / y


@custom_jvp
def _xlog1py(x: Tensor, y: Tensor) -> Tensor:
    return snp.where((x != 0) | snp.isnan(y), x * log1p(y), 0.0)


@_xlog1py.defjvp
def _xlog1py_jvp(primals, tangents):
    (x, y), (tx, ty) = primals, tangents
    return _xlog1py(x, y), tx * log1p(y) + ty * x / (1.0 + y)


def xlogy(x, y) -> Tensor:
    """x * log(y), and 0 where x == 0 (unless y is nan).

    Example:
        >>> stablejit.scipy.special.xlogy(snp.asarray([0.0, 2.0]), snp.asarray([0.0, 1.0]))
        Tensor<f32[2] xla:host:0>
        [0., 0.]
    """
    return _xlogy(*snp.broadcast_arrays(*real_floats("xlogy", x, y)))


def xlog1py(x, y) -> Tensor:
    """x * log1p(y), and 0 where x == 0 (unless y is nan)."""
    return _xlog1py(*snp.broadcast_arrays(*real_floats("xlog1py", x, y)))


@custom_jvp
def _xlogx(x: Tensor) -> Tensor:
    return _xlogy(x, x)


@_xlogx.defjvp
def _xlogx_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return _xlogx(x), t * (snp.log(x) + 1.0)


@custom_jvp
def _logit(x: Tensor) -> Tensor:
    # near 1/2, log(x / (1 - x)) cancels; log1p(s) - log1p(-s) with s = 2x - 1 does not
    # (as SciPy's logit)
    s = 2.0 * (x - 0.5)
    near_half = (x >= 0.3) & (x <= 0.65)
    return snp.where(near_half, log1p(s) - log1p(-s), snp.log(x / (1.0 - x)))


@_logit.defjvp
def _logit_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return _logit(x), t / (x * (1.0 - x))


def logit(x) -> Tensor:
    """log(x / (1 - x)), the inverse of expit.

    Example:
        >>> stablejit.scipy.special.logit(snp.asarray([0.5, 0.75]))
        Tensor<f32[2] xla:host:0>
        [0.       , 1.0986123]
    """
    return _logit(real_float("logit", x))


def expit(x) -> Tensor:
    """The logistic sigmoid 1 / (1 + exp(-x)).

    Example:
        >>> stablejit.scipy.special.expit(snp.asarray([0.0, 2.0]))
        Tensor<f32[2] xla:host:0>
        [0.5     , 0.880797]
    """
    return snp.sigmoid(real_float("expit", x))


def entr(x) -> Tensor:
    """-x log x for x > 0, 0 at 0, -inf for x < 0."""
    x = real_float("entr", x)
    return snp.where(x < 0, -math.inf, -_xlogx(x))


def _p_log_p_over_q(p: Tensor, q: Tensor) -> Tensor:
    """p log(p / q) for p, q > 0, as SciPy: p log p - p log q cancels when p is near q,
    and so does the rounding of p / q near 1; there, p log1p((p - q) / q), whose p - q
    is exact."""
    ratio = p / q
    near = (ratio > 0.5) & (ratio < 2.0)
    return p * snp.where(near, log1p((p - q) / q), snp.log(ratio))


def rel_entr(p, q) -> Tensor:
    """p log(p / q) for p, q > 0; 0 where p == 0 and q >= 0; inf elsewhere."""
    p, q = snp.broadcast_arrays(*real_floats("rel_entr", p, q))
    both_positive = (p > 0) & (q > 0)
    p_zero = (p == 0) & (q >= 0)
    safe_p = snp.where(both_positive, p, 1.0)
    safe_q = snp.where(both_positive, q, 1.0)
    value = _p_log_p_over_q(safe_p, safe_q)
    rest = snp.where(p_zero, 0.0, math.inf)
    return snp.where(both_positive, value,
                     snp.where(snp.isnan(p) | snp.isnan(q), math.nan, rest))


def kl_div(p, q) -> Tensor:
    """p log(p / q) - p + q for p, q > 0; q where p == 0 and q >= 0; inf elsewhere
    (nan for a nan), as SciPy."""
    p, q = snp.broadcast_arrays(*real_floats("kl_div", p, q))
    both_positive = (p > 0) & (q > 0)
    safe_p = snp.where(both_positive, p, 1.0)
    safe_q = snp.where(both_positive, q, 1.0)
    value = _p_log_p_over_q(safe_p, safe_q) - safe_p + safe_q
    rest = snp.where((p == 0) & (q >= 0), q, math.inf)
    return snp.where(both_positive, value,
                     snp.where(snp.isnan(p) | snp.isnan(q), math.nan, rest))


def _axes(x: Tensor, axis) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(x.ndim))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    return tuple(a % x.ndim if x.ndim else a for a in axes)


@one_program
def logsumexp(a, axis: int | Sequence[int] | None = None, b=None, keepdims: bool = False,
              return_sign: bool = False, where=None):
    """log(sum(b * exp(a))) over axis (all axes by default), shifted by the maximum so
    that it neither overflows nor underflows. With return_sign, (log|sum|, sign(sum));
    without, a negative sum gives nan. `where` masks the elements to include.

    Example:
        >>> stablejit.scipy.special.logsumexp(snp.asarray([[0.0, 0.0], [1.0, 1.0]]), axis=1)
        Tensor<f32[2] xla:host:0>
        [0.6931472, 1.6931472]
    """
    if b is None:
        a = real_float("logsumexp", a)
    else:
        a, b = real_floats("logsumexp", a, b)
        a = snp.where(b != 0, a, -math.inf)
    if where is not None:
        a = snp.where(where, a, -math.inf)
    axes = _axes(a, axis)
    amax = snp.max(a, axis=axes, keepdims=True) if a.size else \
        snp.full(tuple(1 if i in axes else n for i, n in enumerate(a.shape)), -math.inf,
                 dtype=a.dtype)
    amax = stop_gradient(snp.where(snp.isfinite(amax), amax, 0.0))
    exp_a = snp.exp(a - amax)
    if b is not None:
        exp_a = exp_a * b
    total = snp.sum(exp_a, axis=axes, keepdims=True)
    sign = snp.sign(total)
    out = snp.log(snp.abs(total)) + amax
    if not keepdims:
        out, sign = snp.squeeze(out, axis=axes), snp.squeeze(sign, axis=axes)
    if return_sign:
        return out, sign
    if b is not None:
        out = snp.where(sign < 0, math.nan, out)
    return out


def softmax(x, *, axis: int | Sequence[int] | None = None) -> Tensor:
    """exp(x) / sum(exp(x)) over axis (all axes by default, as scipy and jax.scipy)."""
    x = real_float("softmax", x)
    axes = _axes(x, axis)
    e = snp.exp(x - stop_gradient(snp.max(x, axis=axes, keepdims=True)))
    return e / snp.sum(e, axis=axes, keepdims=True)


def log_softmax(x, *, axis: int | Sequence[int] | None = None) -> Tensor:
    """x - logsumexp(x) over axis (all axes by default)."""
    x = real_float("log_softmax", x)
    axes = _axes(x, axis)
    shifted = x - stop_gradient(snp.max(x, axis=axes, keepdims=True))
    return shifted - snp.log(snp.sum(snp.exp(shifted), axis=axes, keepdims=True))
