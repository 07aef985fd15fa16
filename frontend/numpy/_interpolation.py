"""One-dimensional linear interpolation: interp (as JAX's, which follows NumPy's)."""

from __future__ import annotations

from ..errors import at_user_line
from ..tensor import Tensor
from ._elementwise import abs, add, divide, multiply, remainder, select, subtract
from ._manipulation import concatenate
from ._operands import as_tensor, promote_operands, to_inexact
from ._searching import searchsorted, take
from ._sorting import argsort


def interp(x, xp, fp, left=None, right=None, period=None) -> Tensor:
    """The piecewise-linear interpolant through (xp, fp) (xp increasing) at x; left and
    right (default fp[0] and fp[-1]) outside xp, or a periodic xp with `period`."""
    x, xp = (to_inexact(t) for t in promote_operands(x, xp)[0])
    fp = as_tensor(fp, x)
    fp = fp if fp.dtype.is_inexact else to_inexact(fp)
    if xp.ndim != 1 or fp.ndim != 1 or xp.shape != fp.shape or xp.shape[0] == 0:
        raise ValueError(at_user_line(f"interp: xp and fp must be non-empty 1-D tensors of one "
                                      f"length, got shapes {xp.shape} and {fp.shape}"))
    if period is not None:
        if left is not None or right is not None:
            raise ValueError(at_user_line("interp: left and right have no meaning with "
                                          "period="))
        x, xp = remainder(x, period), remainder(xp, period)
        order = argsort(xp)
        xp, fp = take(xp, order), take(fp, order)
        xp = concatenate([xp[-1:] - period, xp, xp[:1] + period], 0)
        fp = concatenate([fp[-1:], fp, fp[:1]], 0)
    n = xp.shape[0]
    i = searchsorted(xp, x, side="right")
    i = select(i < 1, 1, select(i > n - 1, n - 1, i)) if n > 1 else i * 0
    lo = select(i > 0, i - 1, 0)
    x0, x1, f0, f1 = take(xp, lo), take(xp, i), take(fp, lo), take(fp, i)
    dx = subtract(x1, x0)
    flat = abs(dx) == 0  # repeated points (and a single point): no slope
    slope = divide(subtract(f1, f0), select(flat, 1, dx).astype(dx.dtype))
    f = select(flat, f0, add(f0, multiply(subtract(x, x0).astype(slope.dtype), slope)))
    if period is None:
        f = select(x < xp[0], fp[0] if left is None else left, f)
        f = select(x > xp[-1], fp[-1] if right is None else right, f)
    return f
