"""Polynomials as coefficient tensors, highest power first: polyval, poly and roots.

JAX computes roots as the eigenvalues of the companion matrix, with LAPACK's geev;
stablejit has no general (non-symmetric) eigenvalue solver yet, so roots runs a fixed
number of Aberth-Ehrlich steps instead: all roots refined together, a static-shape loop
that works the same eagerly and inside jit. Like JAX's, the roots are complex.
"""

from __future__ import annotations

import math

import numpy as np

from ..compiler import dtypes as dt
from ..errors import MustCompileError, at_user_line
from ..promotion import DEFAULT_INT
from ..tensor import Tensor
from ._creation import arange, eye, ones
from ._elementwise import abs, add, divide, logical_and, multiply, select, subtract
from ._manipulation import concatenate, flip
from ._operands import as_tensor, astype, broadcast_to, promote_operands, to_inexact
from ._products import matmul
from ._reductions import all, max, sum
from ._searching import take
from ._sorting import cumprod

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
    the given roots."""
    z = to_inexact(as_tensor(seq_of_zeros))
    if z.ndim == 2 and z.shape[0] == z.shape[1] and z.shape[0]:
        raise NotImplementedError(at_user_line(
            "poly of a square matrix needs its eigenvalues (linalg.eigvals), and stablejit "
            "has no general eigenvalue solver yet; pass the roots as a 1-D tensor"))
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
        return _aberth(divide(c, c[0]), broadcast_to(as_tensor(True), (c.shape[0] - 1,)))
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
    nan = as_tensor(complex(math.nan, math.nan), z).astype(z.dtype)
    return select(active, z, nan)
