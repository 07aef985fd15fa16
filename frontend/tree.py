"""Pytrees: nested tuples, lists, dicts, namedtuples, None and registered classes
(dataclasses by `register_dataclass`), flattened to leaves and a hashable structure."""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable
from typing import Any

from .errors import at_user_line

_registry: dict[type, tuple[Callable, Callable]] = {}


def register_pytree_node(cls: type, flatten: Callable, unflatten: Callable) -> None:
    """flatten(obj) -> (children, aux); unflatten(aux, children) -> obj. aux must be
    hashable: it is part of jit's cache key."""
    _registry[cls] = (flatten, unflatten)


def register_dataclass(cls: type) -> type:
    """Treat a dataclass's fields as children. Usable as a decorator."""
    names = tuple(f.name for f in dataclasses.fields(cls))
    register_pytree_node(cls, lambda o: ([getattr(o, n) for n in names], names),
                         lambda aux, ch: cls(**dict(zip(aux, ch, strict=True))))
    return cls


class TreeDef:
    """The structure of a pytree, without its leaves. Interned: equal structures are the
    same object, so hashing and comparing (jit's cache key) cost nothing per node."""

    __slots__ = ("kind", "aux", "children", "num_leaves", "__weakref__")
    _interned: dict = {}

    def __new__(cls, kind, aux, children: tuple):
        key = (kind, aux, children)
        t = cls._interned.get(key)
        if t is None:
            t = object.__new__(cls)
            t.kind, t.aux, t.children = kind, aux, children
            t.num_leaves = 1 if kind is None else sum(c.num_leaves for c in children)
            cls._interned[key] = t
        return t

    def __reduce__(self):
        return (TreeDef, (self.kind, self.aux, self.children))

    def __repr__(self) -> str:
        if self.kind is None:
            return "*"
        if self.kind is dict:
            return "{" + ", ".join(f"{k!r}: {c!r}" for k, c in zip(self.aux, self.children,
                                                                  strict=True)) + "}"
        name = getattr(self.kind, "__name__", str(self.kind))
        return f"{name}({', '.join(map(repr, self.children))})"


LEAF = TreeDef(None, None, ())
_NONE = TreeDef(type(None), None, ())


def _is_namedtuple(x) -> bool:
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def flatten(tree: Any, leaves: list | None = None) -> tuple[list, TreeDef]:
    leaves = [] if leaves is None else leaves
    try:
        return leaves, _flatten(tree, leaves)
    except RecursionError:
        raise _too_deep() from None


def _too_deep() -> ValueError:
    return ValueError(
        f"a pytree is nested too deeply for Python's recursion limit "
        f"({sys.getrecursionlimit()} frames); hold deep data in a tensor or a flat "
        f"list, or raise the limit with sys.setrecursionlimit")


def _flatten(x, leaves: list) -> TreeDef:
    t = type(x)
    if t is tuple or t is list:
        return TreeDef(t, None, tuple([_flatten(c, leaves) for c in x]))
    if t is dict:
        keys = sorted(x)
        return TreeDef(dict, tuple(keys), tuple([_flatten(x[k], leaves) for k in keys]))
    if x is None:
        return _NONE
    if t in _registry:
        children, aux = _registry[t][0](x)
        return TreeDef(t, aux, tuple([_flatten(c, leaves) for c in children]))
    if _is_namedtuple(x):
        return TreeDef(t, None, tuple([_flatten(c, leaves) for c in x]))
    leaves.append(x)
    return LEAF


def unflatten(treedef: TreeDef, leaves) -> Any:
    try:
        return _unflatten(treedef, iter(leaves))
    except RecursionError:
        raise _too_deep() from None


def _unflatten(td: TreeDef, it) -> Any:
    k = td.kind
    if k is None:
        return next(it)
    if k is type(None):
        return None
    children = [_unflatten(c, it) for c in td.children]
    if k is tuple:
        return tuple(children)
    if k is list:
        return children
    if k is dict:
        return dict(zip(td.aux, children, strict=True))
    if k in _registry:
        return _registry[k][1](td.aux, children)
    return k(*children)  # namedtuple


def tree_map(f: Callable, tree: Any, *rest: Any) -> Any:
    leaves, td = flatten(tree)
    others = []
    for i, r in enumerate(rest, 1):
        r_leaves, r_td = flatten(r)
        if r_td != td:
            raise ValueError(at_user_line(
                f"tree_map: argument {i} has a different pytree structure than argument 0 "
                f"({r_td} vs {td}); pass trees with the same keys, lengths and node types "
                f"(a list and a tuple differ)"))
        others.append(r_leaves)
    return unflatten(td, [f(x, *ys) for x, *ys in zip(leaves, *others, strict=True)])


def tree_leaves(tree: Any) -> list:
    return flatten(tree)[0]


def tree_structure(tree: Any) -> TreeDef:
    return flatten(tree)[1]
