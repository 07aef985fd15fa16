"""Numerical calculus on samples: trapezoid (integration), gradient
(differentiation: central differences inside, one-sided ones at the edges, as
NumPy's edge_order=1 and JAX) and unwrap (phase unwrapping: a cumulative sum of
corrected differences)."""

from __future__ import annotations

from ..errors import at_user_line
from ..tensor import Tensor
from ._elementwise import (
    abs,
    add,
    divide,
    equal,
    greater,
    less,
    logical_and,
    multiply,
    remainder,
    select,
    subtract,
)
from ._manipulation import concatenate, diff, moveaxis, reshape
from ._operands import as_tensor, normalize_axes, normalize_axis, promote_operands, to_inexact
from ._reductions import sum
from ._sorting import cumsum


def trapezoid(y, x=None, dx=1.0, axis: int = -1) -> Tensor:
    """The integral of the samples y along `axis` by the trapezoidal rule, at the
    sample points x (1-D or of y's shape) or evenly dx apart."""
    y = to_inexact(as_tensor(y))
    ax = normalize_axis(axis, y.ndim)
    n = y.shape[ax]
    if x is None:
        d = dx
    else:
        xs = to_inexact(as_tensor(x, y))
        if xs.ndim == 1:
            if xs.shape[0] != n:
                raise ValueError(at_user_line(f"trapezoid: x has {xs.shape[0]} points but y "
                                              f"has {n} along axis {axis}"))
            d = reshape(diff(xs), tuple(n - 1 if i == ax else 1 for i in range(y.ndim)))
        else:
            d = diff(xs, axis=ax)
    ym = moveaxis(y, ax, -1)
    mid = multiply(add(ym[..., 1:], ym[..., :-1]), 0.5)
    if isinstance(d, Tensor):
        d = moveaxis(d, ax, -1) if d.ndim == y.ndim else d
    return sum(multiply(d, mid), axis=-1)


def _one_axis(f: Tensor, spacing, ax: int) -> Tensor:
    """df/dx along `ax` of f (moved last), for a scalar spacing or 1-D coordinates."""
    g = moveaxis(f, ax, -1)
    n = g.shape[-1]
    if n < 2:
        raise ValueError(at_user_line(f"gradient: axis {ax} has {n} sample(s); it needs at "
                                      f"least 2"))
    if isinstance(spacing, Tensor) and spacing.ndim == 1:
        if spacing.shape[0] != n:
            raise ValueError(at_user_line(f"gradient: {spacing.shape[0]} coordinates for an "
                                          f"axis of {n} samples"))
        (g, x), _ = promote_operands(g, to_inexact(spacing))
        h = diff(x)
        first = divide(subtract(g[..., 1:2], g[..., :1]), h[:1])
        last = divide(subtract(g[..., -1:], g[..., -2:-1]), h[-1:])
        if n == 2:
            inner = g[..., :0]
        else:
            h1, h2 = h[:-1], h[1:]
            a = divide(-h2, multiply(h1, add(h1, h2)))
            b = divide(subtract(h2, h1), multiply(h1, h2))
            c = divide(h1, multiply(h2, add(h1, h2)))
            inner = add(add(multiply(a, g[..., :-2]), multiply(b, g[..., 1:-1])),
                        multiply(c, g[..., 2:]))
    else:
        h = spacing
        first = divide(subtract(g[..., 1:2], g[..., :1]), h)
        last = divide(subtract(g[..., -1:], g[..., -2:-1]), h)
        inner = divide(subtract(g[..., 2:], g[..., :-2]), multiply(h, 2.0))
    return moveaxis(concatenate([first, inner, last], -1), -1, ax)


def gradient(f, *varargs, axis=None, edge_order=None):
    """The gradient of samples f: one tensor per axis (a list when several), spaced by
    the scalars or 1-D coordinates in varargs (one for all axes, or one per axis)."""
    if edge_order not in (None, 1):
        raise NotImplementedError(at_user_line(
            f"gradient: edge_order={edge_order} is not supported (as in JAX); the edges use "
            f"first-order one-sided differences (edge_order=1)"))
    f = to_inexact(as_tensor(f))
    axes = normalize_axes(axis, f.ndim)
    if not varargs:
        spacings = [1.0] * len(axes)
    elif len(varargs) == 1 and not (isinstance(varargs[0], Tensor) and varargs[0].ndim == 1
                                     and len(axes) > 1):
        spacings = [varargs[0]] * len(axes)
    elif len(varargs) == len(axes):
        spacings = list(varargs)
    else:
        raise TypeError(at_user_line(f"gradient: {len(varargs)} spacings for {len(axes)} "
                                     f"axes; give one for all or one per axis"))
    spacings = [as_tensor(s, f) if not isinstance(s, (int, float)) else float(s)
                for s in spacings]
    out = [_one_axis(f, s, a) for s, a in zip(spacings, axes, strict=True)]
    return out[0] if len(out) == 1 else out


def unwrap(p, discont=None, axis: int = -1, period=6.283185307179586) -> Tensor:
    """p with every jump between neighbours along `axis` larger than `discont` (default
    period / 2) reduced by a multiple of `period`: continuous phases from wrapped ones.
    Computed in a floating dtype, as in JAX."""
    x = as_tensor(p)
    if x.dtype.is_complex:
        raise ValueError(at_user_line("unwrap: p must be real; unwrap its angle(p) instead"))
    x = to_inexact(x)
    ax = normalize_axis(axis, x.ndim)
    # Python numbers stay Python numbers, so a float64 p gets a float64 period
    interval = period / 2 if isinstance(period, (int, float)) else divide(period, 2)
    discont = interval if discont is None else discont
    dd = diff(x, axis=ax)
    ddmod = subtract(remainder(add(dd, interval), period), interval)
    # a jump of exactly +period/2 stays positive (NumPy's rule)
    ddmod = select(logical_and(equal(ddmod, -interval), greater(dd, 0)), interval, ddmod)
    correct = select(less(abs(dd), discont), 0, subtract(ddmod, dd))
    n = x.shape[ax]
    first = x[(slice(None),) * ax + (slice(0, 1),)]
    rest = x[(slice(None),) * ax + (slice(1, n),)]
    return concatenate([first, add(rest, cumsum(correct, axis=ax))], ax)
