"""Choosing by conditions: NumPy's select (the first true condition picks) and
piecewise (functions applied where their condition holds, later conditions winning).

Every choice and function is computed for every element and the results are merged
with elementwise selects, so shapes stay static inside jit (as in JAX).
"""

from __future__ import annotations

from ..compiler import dtypes as dt
from ..errors import at_user_line
from ..tensor import Tensor
from ._elementwise import logical_not, logical_or
from ._elementwise import select as where3
from ._operands import (
    as_tensor,
    astype,
    broadcast_shapes,
    broadcast_to,
    promote_operands,
    values_in,
)


def select(condlist, choicelist, default=0) -> Tensor:
    """Elementwise, the choice of the first true condition; `default` where none holds."""
    conds = [astype(as_tensor(c), dt.bool_) for c in condlist]
    if len(conds) != len(choicelist):
        raise ValueError(at_user_line(f"select: {len(conds)} conditions but "
                                      f"{len(choicelist)} choices; they must pair up"))
    if not conds:
        raise ValueError(at_user_line("select needs at least one condition"))
    choices, _ = promote_operands(*choicelist, default)
    shape = broadcast_shapes(*(c.shape for c in conds), *(c.shape for c in choices))
    out = broadcast_to(choices[-1], shape)
    for c, v in zip(conds[::-1], choices[-2::-1], strict=True):
        out = where3(c, v, out)
    return out


def piecewise(x, condlist, funclist, *args, **kw) -> Tensor:
    """funclist[i](x, *args, **kw) (or the constant funclist[i]) where condlist[i]
    holds; with one more function than conditions, the last one applies where none
    holds, else 0 does. The result has x's dtype."""
    x = as_tensor(x)
    if isinstance(condlist, Tensor) and condlist.shape == x.shape or not isinstance(
            condlist, (list, tuple)):
        condlist = [condlist]
    conds = [broadcast_to(astype(as_tensor(c, x), dt.bool_), x.shape) for c in condlist]
    n = len(conds)
    if len(funclist) not in (n, n + 1):
        raise ValueError(at_user_line(f"piecewise: {len(funclist)} functions for {n} "
                                      f"conditions; give {n} (0 elsewhere) or {n + 1} (the "
                                      f"last one elsewhere)"))

    def value(f):
        v = f(x, *args, **kw) if callable(f) else f
        return broadcast_to(values_in(x, v), x.shape)

    if len(funclist) == n + 1:
        anywhere = conds[0]
        for c in conds[1:]:
            anywhere = logical_or(anywhere, c)
        out = where3(logical_not(anywhere), value(funclist[-1]), x._backend.scalar(0, x.dtype))
    else:
        out = broadcast_to(x._backend.scalar(0, x.dtype), x.shape)
    for c, f in zip(conds, funclist[:n], strict=True):
        out = where3(c, value(f), out)
    return out
