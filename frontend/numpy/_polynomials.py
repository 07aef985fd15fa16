"""Polynomials as coefficient tensors, highest power first: polyval, poly, roots,
vander, polyadd, polysub, polymul, polyder, polyint, polydiv and polyfit.

As in JAX, polymul, polyder, polyint, polydiv and polyfit compute in a floating dtype
(integers become the default float), and polydiv keeps the remainder at u's length
(NumPy trims it: pass trim_leading_zeros=True, outside jit).

JAX computes roots as the eigenvalues of the companion matrix, with LAPACK's geev;
stablejit's geev (linalg.eig) runs on the host only, so roots runs a fixed number of
Aberth-Ehrlich steps instead, on any platform: all roots refined together, a static-shape loop
that works the same eagerly and inside jit. Like JAX's, the roots are complex.
"""

from __future__ import annotations

import math
import operator
from builtins import max as _max

import numpy as np

from ..compiler import dtypes as dt
from ..errors import MustCompileError, at_user_line
from ..promotion import DEFAULT_INT
from ..tensor import Tensor
from ._convolution import convolve
from ._creation import arange, eye, ones, zeros
from ._elementwise import (
    abs,
    add,
    conj,
    divide,
    imag,
    logical_and,
    maximum,
    multiply,
    negative,
    power,
    real,
    select,
    sqrt,
    subtract,
)
from ._manipulation import atleast_1d, concatenate, flip, trim_zeros
from ._operands import as_tensor, astype, broadcast_to, promote_operands, to_inexact
from ._products import dot, matmul, outer
from ._reductions import all, argmin, max, prod, sum
from ._searching import take, take_along_axis
from ._sorting import cumprod
from .linalg import eigvals

# Aberth-Ehrlich converges cubically from the starting circle; this many steps reach
# machine precision for simple roots of the degrees people pass to roots().
_ABERTH_STEPS = 40


def polyval(p, x) -> Tensor:
    """The polynomial with coefficients p (highest power first) at x, by Horner's rule."""
    (p, x), _ = promote_operands(p, x)
    if p.ndim != 1:
        raise ValueError(at_user_line(f"polyval: p must be 1-D, got shape {p.shape}"))
    y = multiply(x, 0)
    for i in range(p.shape[0]):
        y = add(multiply(y, x), p[i])
    return y


def poly(seq_of_zeros) -> Tensor:
    """The coefficients (highest power first, leading 1) of the monic polynomial with
    the given roots; of a square matrix, its characteristic polynomial (complex, from
    linalg.eigvals, as in jax)."""
    z = to_inexact(as_tensor(seq_of_zeros))
    if z.ndim == 2 and z.shape[0] == z.shape[1] and z.shape[0]:
        z = eigvals(z)
    if z.ndim > 1:
        raise ValueError(at_user_line(f"poly: needs a 1-D tensor of roots, got shape "
                                      f"{z.shape}"))
    a = ones((1,), z.dtype)
    zero = ones((1,), z.dtype) * 0
    for k in range(z.shape[0] if z.ndim else 1):
        r = z[k] if z.ndim else z
        a = subtract(concatenate([a, zero], 0), multiply(r, concatenate([zero, a], 0)))
    return a


def _values_and_slopes(c: Tensor, z: Tensor) -> tuple[Tensor, Tensor]:
    """(p(z), p'(z)) for the coefficients c (highest power first), from the powers of z
    (one cumulative product) and two matrix products: few ops per Aberth step."""
    n = c.shape[0] - 1
    powers = cumprod(broadcast_to(z[:, None], (z.shape[0], n)), axis=1)
    v = concatenate([ones((z.shape[0], 1), z.dtype), powers], 1)  # z**0 ... z**n
    ascending = flip(c)
    k = arange(1, n + 1).astype(c.dtype)
    return matmul(v, ascending), matmul(v[:, :n], multiply(k, ascending[1:]))


def _aberth(c: Tensor, active: Tensor) -> Tensor:
    """Roots of the polynomial c: one per entry of `active` (a mask: inactive entries
    stand for roots a leading zero removed, and stay out of the iteration)."""
    n = c.shape[0] - 1
    radius = add(max(abs(c[1:])), 1.0).astype(dt.real_dtype(c.dtype))  # Cauchy's bound
    angles = np.exp(1j * (2 * np.pi * np.arange(n) / n + 0.4))  # off the real axis
    z = multiply(radius.astype(c.dtype), as_tensor(angles.astype(c.dtype.np), c))
    pair = logical_and(eye(n, dtype=dt.bool_) == False, active[None, :])  # noqa: E712
    for step_no in range(_ABERTH_STEPS):
        p, d = _values_and_slopes(c, z)
        w = divide(p, select(d == 0, 1, d))  # Newton's step
        gaps = select(pair, subtract(z[:, None], z[None, :]), 1)
        s = sum(select(pair, divide(1, gaps), 0), axis=1)
        step = select(logical_and(active, p != 0), divide(w, subtract(1, multiply(w, s))), 0)
        z = subtract(z, step)
        if z._backend.concrete and step_no % 8 == 7 and bool(
                all(abs(step) <= 4 * dt.finfo(dt.real_dtype(z.dtype)).eps * abs(z))):
            break  # converged: eager calls stop early, jit runs every step
    return z


def _conjugate_symmetric(z: Tensor, active: Tensor) -> Tensor:
    """The roots of a real polynomial as LAPACK's geev gives them (so NumPy's and jax's
    roots): a root within a few ulps of the real axis is real (imaginary part 0, so
    isreal holds: a double root came back as -1+1e-31j), and a complex root and its
    mirror (the root nearest its conjugate, each the other's, within sqrt(eps)) are made
    an exact conjugate pair by averaging each with the other's conjugate. The true roots
    are conjugate-symmetric, so the averaging moves a root by no more than its error."""
    n = z.shape[0]
    eps = float(dt.finfo(dt.real_dtype(z.dtype)).eps)
    size = abs(z)
    im = imag(z)
    on_axis = abs(im) <= 64 * eps * size
    gaps = abs(subtract(z[:, None], conj(z)[None, :]))
    others = logical_and(eye(n, dtype=dt.bool_) == False, active[None, :])  # noqa: E712
    gaps = select(others, gaps, math.inf)
    mirror = argmin(gaps, axis=1)
    mutual = take(mirror, mirror) == arange(n)
    close = take_along_axis(gaps, mirror[:, None], axis=1)[:, 0] <= eps ** 0.5 * maximum(size, 1)
    pair = logical_and(logical_and(mutual, close),
                       logical_and(~on_axis, ~take(on_axis, mirror)))
    paired = multiply(add(z, conj(take(z, mirror))), 0.5)
    on_real = astype(real(z), z.dtype)
    return select(logical_and(active, on_axis), on_real,
                  select(logical_and(active, pair), paired, z))


def roots(p, *, strip_zeros: bool = True) -> Tensor:
    """The complex roots of the polynomial with coefficients p (highest power first).
    Leading zeros are stripped (which needs concrete values: inside jit pass
    strip_zeros=False, and the roots a leading zero removes come back as NaN, as JAX)."""
    p = to_inexact(as_tensor(p))
    if p.ndim != 1:
        raise ValueError(at_user_line(f"roots: p must be 1-D, got shape {p.shape}"))
    c = astype(p, dt.complex_dtype(p.dtype))
    if strip_zeros:
        if not p._backend.concrete:
            raise MustCompileError(at_user_line(
                "roots inside jit cannot strip leading zero coefficients (the number of "
                "roots would depend on the data); pass strip_zeros=False"))
        nz = np.flatnonzero(p.numpy())
        lead = int(nz[0]) if nz.size else p.shape[0]
        c = c[lead:]
        if c.shape[0] < 2:
            return ones((0,), c.dtype)
        active = broadcast_to(as_tensor(True), (c.shape[0] - 1,))
        z = _aberth(divide(c, c[0]), active)
        return z if p.dtype.is_complex else _conjugate_symmetric(z, active)
    n = p.shape[0] - 1
    if n < 1:
        return ones((0,), c.dtype)
    # leading zeros add nothing to p(z) and p'(z): the roots they remove are left out
    # of the iteration and reported as NaN (JAX's convention)
    lead = sum(cumprod(astype(c == 0, DEFAULT_INT)))
    first = take(c, select(lead > n, 0, lead))
    c = divide(c, select(first == 0, 1, first).astype(c.dtype))
    active = arange(n) < n - lead
    z = _aberth(c, active)
    if not p.dtype.is_complex:
        z = _conjugate_symmetric(z, active)
    nan = as_tensor(complex(math.nan, math.nan), z).astype(z.dtype)
    return select(active, z, nan)


# ---- coefficient arithmetic ------------------------------------------------------------

def _inexact(*xs) -> list[Tensor]:
    """The operands promoted to one dtype, then to a floating one (JAX's
    promote_dtypes_inexact), each at least 1-D."""
    ts, _ = promote_operands(*xs)
    return [atleast_1d(to_inexact(t)) for t in ts]


def _coefficients(p, name: str) -> Tensor:
    if p.ndim != 1:
        raise ValueError(at_user_line(f"{name}: coefficients must be 1-D, got shape "
                                      f"{p.shape}"))
    return p


def _order(m, name: str) -> int:
    try:
        m = operator.index(m)
    except TypeError:
        raise TypeError(at_user_line(f"{name}: m must be a static integer, got "
                                     f"{type(m).__name__}")) from None
    if m < 0:
        raise ValueError(at_user_line(f"{name}: the order m must be non-negative, got {m}"))
    return m


def vander(x, N=None, increasing: bool = False) -> Tensor:
    """The Vandermonde matrix of the 1-D x: column j is x**(N-1-j) (x**j with
    increasing=True); N defaults to len(x). Integer x gives integer powers."""
    x = as_tensor(x)
    if x.ndim != 1:
        raise ValueError(at_user_line(f"vander: x must be 1-D, got shape {x.shape}"))
    n = x.shape[0] if N is None else _order(N, "vander")
    # the exponents in x's dtype when it is an integer one (so int32 stays int32)
    k = arange(n, dtype=x.dtype if x.dtype.kind in "iu" else dt.int32)
    if not increasing:
        k = flip(k)
    return power(x[:, None], k[None, :])


def polyadd(a1, a2) -> Tensor:
    """The coefficients of the sum of two polynomials (the shorter padded in front)."""
    (a, b), _ = promote_operands(a1, a2)
    a, b = _coefficients(atleast_1d(a), "polyadd"), _coefficients(atleast_1d(b), "polyadd")
    if a.shape[0] < b.shape[0]:
        a, b = b, a
    pad = a.shape[0] - b.shape[0]
    return add(a, concatenate([zeros((pad,), b.dtype), b], 0)) if pad else add(a, b)


def polysub(a1, a2) -> Tensor:
    """The coefficients of the difference of two polynomials."""
    (a, b), _ = promote_operands(a1, a2)
    return polyadd(a, negative(b))


def polymul(a1, a2, *, trim_leading_zeros: bool = False) -> Tensor:
    """The coefficients of the product of two polynomials (their convolution). Leading
    zeros are kept unless trim_leading_zeros=True (which needs concrete values)."""
    a, b = _inexact(a1, a2)
    a, b = _coefficients(a, "polymul"), _coefficients(b, "polymul")
    if trim_leading_zeros:
        a, b = trim_zeros(a, "f"), trim_zeros(b, "f")
    if a.shape[0] == 0:
        a = zeros((1,), a.dtype)
    if b.shape[0] == 0:
        b = zeros((1,), b.dtype)
    return convolve(a, b, "full")


def polyder(p, m: int = 1) -> Tensor:
    """The coefficients of the m-th derivative of the polynomial p."""
    m = _order(m, "polyder")
    (p,) = _inexact(p)
    p = _coefficients(p, "polyder")
    if m == 0:
        return p
    n = p.shape[0]
    if n <= m:
        return zeros((0,), p.dtype)
    # the coefficient of x**e (e = n-1 .. m) gains the factor e (e-1) ... (e-m+1)
    e = arange(n - 1, m - 1, -1, dtype=p.dtype)
    factor = prod(subtract(e[None, :], arange(m, dtype=p.dtype)[:, None]), axis=0)
    return multiply(p[:n - m], factor)


def polyint(p, m: int = 1, k=None) -> Tensor:
    """The coefficients of the m-th antiderivative of p; k gives the m integration
    constants (one value is used for all), highest order first; default zeros."""
    m = _order(m, "polyint")
    k = 0 if k is None else k
    p, kk = _inexact(p, k)
    p = _coefficients(p, "polyint")
    if kk.shape[0] == 1 and m != 1:
        kk = broadcast_to(kk, (m,))
    if kk.shape != (m,):
        raise ValueError(at_user_line(f"polyint: k must hold m={m} integration constants "
                                      f"(or one), got shape {kk.shape}"))
    if m == 0:
        return p
    n = p.shape[0]
    # after m integrations the coefficient of x**(e+m) is divided by (e+m)!/e!
    e = arange(n + m - 1, -1, -1, dtype=p.dtype)
    factor = prod(maximum(subtract(e[None, :], arange(m, dtype=p.dtype)[:, None]), 1.0),
                  axis=0)
    return divide(concatenate([p, kk], 0), factor)


def polydiv(u, v, *, trim_leading_zeros: bool = False) -> tuple[Tensor, Tensor]:
    """(quotient, remainder) of the polynomial division u / v, by long division. The
    remainder keeps u's length (as in JAX); trim_leading_zeros=True removes its leading
    near-zeros (below sqrt(eps)), which needs concrete values."""
    u, v = _inexact(u, v)
    u, v = _coefficients(u, "polydiv"), _coefficients(v, "polydiv")
    m, n = u.shape[0] - 1, v.shape[0] - 1
    scale = divide(1.0, v[0])
    q = zeros((_max(m - n + 1, 1),), u.dtype)
    r = u
    for k in range(0, m - n + 1):
        d = multiply(scale, r[k])
        q = q.at[k].set(d)
        r = r.at[k:k + n + 1].add(negative(multiply(d, v)))
    if trim_leading_zeros:
        tol = math.sqrt(dt.finfo(dt.real_dtype(r.dtype)).eps)
        if not r._backend.concrete:
            raise MustCompileError(at_user_line(
                "polydiv(trim_leading_zeros=True) inside jit: the remainder's length would "
                "depend on the data; leave trim_leading_zeros=False"))
        small = np.abs(r.numpy()) < tol
        lead = int(np.argmin(small)) if not small.all() else r.shape[0]
        r = r[lead:]
    return q, r


def polyfit(x, y, deg: int, rcond=None, full: bool = False, w=None, cov=False):
    """The coefficients (highest power first) of the degree-`deg` polynomial fitting y at
    x in the least-squares sense (weights w multiply the residuals); y may be 2-D (one
    fit per column). full=True also gives (residuals, rank, singular values, rcond);
    cov=True the coefficients' covariance (cov="unscaled": without the residual scale)."""
    from .linalg import inv, lstsq  # linalg imports the modules this one builds on
    deg = _order(deg, "polyfit")
    x, y = _inexact(x, y)
    order = deg + 1
    if x.ndim != 1 or x.shape[0] == 0:
        raise TypeError(at_user_line(f"polyfit: x must be a non-empty 1-D tensor, got shape "
                                     f"{x.shape}"))
    if y.ndim not in (1, 2) or y.shape[0] != x.shape[0]:
        raise TypeError(at_user_line(f"polyfit: y must be 1-D or 2-D with len(x)={x.shape[0]} "
                                     f"rows, got shape {y.shape}"))
    if rcond is None:
        rcond = x.shape[0] * float(dt.finfo(dt.real_dtype(x.dtype)).eps)
    lhs, rhs = vander(x, order), y
    if w is not None:
        (ww,) = _inexact(w)
        if ww.ndim != 1 or ww.shape[0] != x.shape[0]:
            raise TypeError(at_user_line(f"polyfit: w must be 1-D with len(x)={x.shape[0]} "
                                         f"entries, got shape {ww.shape}"))
        lhs = multiply(lhs, ww[:, None])
        rhs = multiply(rhs, ww[:, None] if rhs.ndim == 2 else ww)
    # columns scaled to unit norm: a better conditioned least-squares problem
    scale = sqrt(sum(multiply(lhs, lhs), axis=0))
    lhs = divide(lhs, scale[None, :])
    c, resids, rank, s = lstsq(lhs, rhs, rcond)
    c = divide(c, scale[:, None] if c.ndim == 2 else scale)
    if full:
        return c, resids, rank, s, as_tensor(rcond, c)
    if cov:
        vbase = divide(inv(dot(lhs.T, lhs)), outer(scale, scale))
        if cov == "unscaled":
            fac = as_tensor(1.0, vbase)
        else:
            if x.shape[0] <= order:
                raise ValueError(at_user_line(
                    f"polyfit: cov=True needs more points than coefficients (len(x)="
                    f"{x.shape[0]}, deg + 1={order}); pass cov='unscaled'"))
            fac = divide(resids, x.shape[0] - order)
            fac = fac[0] if y.ndim == 1 else fac
        return (c, multiply(vbase, fac)) if y.ndim == 1 else \
            (c, multiply(vbase[:, :, None], fac))
    return c
