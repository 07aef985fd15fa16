"""Collectives over the named axis of an enclosing vmap: psum, pmean, pmax, pmin,
all_gather, axis_index (exported by stablejit.lax, with JAX's signatures).

    def normalize(x):
        return x / stablejit.lax.psum(x, "batch")
    stablejit.vmap(normalize, axis_name="batch")(xs)

Each binds a collective primitive (compiler/primitives/collectives.py) naming the axis;
batching that vmap turns it into arithmetic over the batch axis.
"""

from __future__ import annotations

from . import context, tree
from .compiler.primitives import collectives as coll
from .dispatch import bind1
from .errors import at_user_line
from .numpy._operands import as_tensor


def _names(axis_name) -> tuple:
    return tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)


def _size(fn: str, name) -> int:
    size = context.axis_size(name)
    if size is None:
        bound = [n for n, _ in context.axis_stack() if n is not None]
        where = f"the enclosing vmaps name {bound}" if bound else "no enclosing vmap names one"
        raise NameError(at_user_line(
            f"{fn}: unbound axis name {name!r} ({where}). Call it inside "
            f"stablejit.vmap(f, axis_name={name!r})."))
    return size


def _reduce(fn: str, prim, x, axis_name):
    def one(leaf):
        t = as_tensor(leaf)
        for name in _names(axis_name):
            _size(fn, name)
            t = bind1(prim, t, axis_name=name)
        return t
    return tree.tree_map(one, x)


def psum(x, axis_name):
    """The sum of x over the mapped axis `axis_name` (a name or a tuple of names)."""
    return _reduce("psum", coll.psum, x, axis_name)


def pmax(x, axis_name):
    return _reduce("pmax", coll.pmax, x, axis_name)


def pmin(x, axis_name):
    return _reduce("pmin", coll.pmin, x, axis_name)


def pmean(x, axis_name):
    """The mean of x over the mapped axis (psum divided by the axis size)."""
    n = 1
    for name in _names(axis_name):
        n *= _size("pmean", name)
    return tree.tree_map(lambda s: s / n, psum(x, axis_name))


def all_gather(x, axis_name, *, axis: int = 0, tiled: bool = False):
    """Every example's x stacked along a new axis `axis` (tiled=True: concatenated
    along the existing axis `axis`)."""
    size = _size("all_gather", axis_name)

    def one(leaf):
        t = as_tensor(leaf)
        ax = axis % (t.ndim + (0 if tiled else 1)) if t.ndim or not tiled else axis
        return bind1(coll.all_gather, t, axis_name=axis_name, axis_size=size, axis=ax,
                     tiled=bool(tiled))
    return tree.tree_map(one, x)


def axis_index(axis_name):
    """This example's position along the mapped axis `axis_name` (an int32 scalar)."""
    _size("axis_index", axis_name)
    return bind1(coll.axis_index, axis_name=axis_name)
