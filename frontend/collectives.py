"""Collectives over a named axis: psum, pmean, pmax, pmin, all_gather, axis_index,
ppermute, all_to_all, psum_scatter (exported by stablejit.lax, with JAX's signatures).

The axis is that of an enclosing vmap(..., axis_name=) or a mesh axis of an enclosing
shard_map:

    def normalize(x):
        return x / stablejit.lax.psum(x, "batch")
    stablejit.vmap(normalize, axis_name="batch")(xs)

Each binds a collective primitive (compiler/primitives/collectives.py) naming the axis;
batching that vmap turns it into arithmetic over the batch axis, and a shard_map body
emits it as a collective over the mesh's devices.
"""

from __future__ import annotations

from . import context, tree
from . import numpy as snp
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
            f"stablejit.vmap(f, axis_name={name!r}) or a shard_map over a mesh with that "
            f"axis."))
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
    """The maximum of x over the mapped axis `axis_name` (a name or a tuple of names), as
    jax.lax.pmax; NaN propagates."""
    return _reduce("pmax", coll.pmax, x, axis_name)


def pmin(x, axis_name):
    """The minimum of x over the mapped axis `axis_name` (a name or a tuple of names), as
    jax.lax.pmin; NaN propagates."""
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


def _one_name(fn: str, axis_name):
    names = _names(axis_name)
    if len(names) != 1:
        raise NotImplementedError(at_user_line(
            f"{fn} over several axes {names} at once; call it once per axis"))
    return names[0]


def ppermute(x, axis_name, perm):
    """Send x from position src to position dst along the axis, for each (src, dst) in
    `perm`; positions that receive nothing get zeros."""
    name = _one_name("ppermute", axis_name)
    n = _size("ppermute", name)
    perm = tuple((int(s), int(d)) for s, d in perm)
    for s, d in perm:
        if not (0 <= s < n and 0 <= d < n):
            raise ValueError(at_user_line(
                f"ppermute: pair ({s}, {d}) is outside axis {name!r} of size {n}"))
    return tree.tree_map(lambda leaf: bind1(coll.ppermute, as_tensor(leaf), axis_name=name,
                                            perm=perm), x)


def all_to_all(x, axis_name, split_axis: int, concat_axis: int, *, tiled: bool = False):
    """Cut x's `split_axis` into one block per position; position i receives block i
    of every position, concatenated in position order along `concat_axis`. Untiled,
    split_axis must have the axis' size and is removed, and concat_axis is new."""
    name = _one_name("all_to_all", axis_name)
    n = _size("all_to_all", name)

    def one(leaf):
        t = as_tensor(leaf)
        if tiled:
            return bind1(coll.all_to_all, t, axis_name=name, axis_size=n,
                         split_axis=split_axis % t.ndim, concat_axis=concat_axis % t.ndim)
        split, concat = split_axis % t.ndim, concat_axis % t.ndim
        if t.shape[split] != n:
            raise ValueError(at_user_line(
                f"all_to_all: split_axis {split_axis} has size {t.shape[split]}, the axis "
                f"{name!r} has size {n}; they must match (or pass tiled=True)"))
        # a new axis of 1 that the exchange fills, placed so that it ends at concat_axis
        # once the emptied split axis is dropped
        cy, sy = (concat, split + 1) if concat < split else (concat + 1, split)
        out = bind1(coll.all_to_all, snp.expand_dims(t, cy), axis_name=name, axis_size=n,
                    split_axis=sy, concat_axis=cy)
        return snp.squeeze(out, sy)
    return tree.tree_map(one, x)


def psum_scatter(x, axis_name, *, scatter_dimension: int = 0, tiled: bool = False):
    """The sum of x over the axis, of which position i keeps block i along
    `scatter_dimension` (untiled: that dimension has the axis' size and is removed)."""
    name = _one_name("psum_scatter", axis_name)
    n = _size("psum_scatter", name)

    def one(leaf):
        t = as_tensor(leaf)
        d = scatter_dimension % t.ndim
        if not tiled and t.shape[d] != n:
            raise ValueError(at_user_line(
                f"psum_scatter: scatter_dimension {scatter_dimension} has size "
                f"{t.shape[d]}, the axis {name!r} has size {n}; they must match (or pass "
                f"tiled=True)"))
        out = bind1(coll.psum_scatter, t, axis_name=name, axis_size=n, scatter_dimension=d)
        return out if tiled else snp.squeeze(out, d)
    return tree.tree_map(one, x)
