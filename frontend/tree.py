"""Pytrees: nested tuples, lists, dicts, namedtuples, None and registered classes
(dataclasses by `register_dataclass`), flattened to leaves and a structure (TreeDef).

This is also `stablejit.tree` (and `stablejit.tree_util`): JAX's `jax.tree` namespace
(map, leaves, structure, flatten, unflatten, map_with_path, flatten_with_path,
leaves_with_path, reduce, transpose, all), keystr, the registration functions
(register_pytree_node, register_pytree_node_class, register_dataclass) and tree_* names
of `jax.tree_util`, and the key path entries DictKey, SequenceKey, GetAttrKey and
FlattenedIndexKey (formatted by keystr as JAX does).

A TreeDef is interned: equal structures are one object, so jit's cache key compares
structures by identity. Auxiliary data of registered nodes that cannot be hashed (JAX
allows e.g. a dict) is compared by equality instead.

Every registration is mirrored into a jaxlib C++ pytree registry (`fast_flatten`), which
jit's cached calls use to flatten their arguments without Python per node or leaf; the
structures it returns are jaxlib's PyTreeDefs, used only as cache keys and to rebuild
outputs.
"""

from __future__ import annotations

import builtins
import dataclasses
import functools
import sys
from collections.abc import Callable, Iterable, Sequence
from typing import Any, NamedTuple

from jaxlib import _jax

from .errors import at_user_line

__all__ = ["DictKey", "FlattenedIndexKey", "GetAttrKey", "SequenceKey", "TreeDef", "all",
           "flatten", "flatten_with_path", "keystr", "leaves", "leaves_with_path", "map",
           "map_with_path", "reduce", "register_dataclass", "register_pytree_node",
           "register_pytree_node_class", "structure", "transpose", "tree_all", "tree_flatten",
           "tree_flatten_with_path", "tree_leaves", "tree_leaves_with_path", "tree_map",
           "tree_map_with_path", "tree_reduce", "tree_structure", "tree_transpose",
           "tree_unflatten", "unflatten"]


# ---- key path entries (as jax.tree_util) ---------------------------------------------------

@dataclasses.dataclass(frozen=True)
class DictKey:
    key: Any

    def __str__(self) -> str:
        return f"[{self.key!r}]"


@dataclasses.dataclass(frozen=True)
class SequenceKey:
    idx: int

    def __str__(self) -> str:
        return f"[{self.idx}]"


@dataclasses.dataclass(frozen=True)
class GetAttrKey:
    name: str

    def __str__(self) -> str:
        return f".{self.name}"


@dataclasses.dataclass(frozen=True)
class FlattenedIndexKey:
    """The i-th child of a registered node that names no keys."""

    key: int

    def __str__(self) -> str:
        return f"[<flat index {self.key}>]"


def keystr(keys: Sequence, *, simple: bool = False, separator: str = "") -> str:
    """A key path as text: "['a'][0].b" (simple=True: the bare keys joined by
    `separator`, "a/0/b" for separator="/")."""
    if not simple:
        return separator.join(str(k) for k in keys)
    return separator.join(str(getattr(k, "key", getattr(k, "idx", getattr(k, "name", k))))
                          for k in keys)


# ---- registry --------------------------------------------------------------------------------

class _Node(NamedTuple):
    flatten: Callable
    unflatten: Callable
    field_names: tuple[str, ...] | None  # children named by attribute (dataclasses)


_registry: dict[type, _Node] = {}
_cpp_registry = _jax.pytree.PyTreeRegistry()
# flatten and unflatten run in C++ for structures seen before (4-9x faster than the
# Python walk: grad, composites and optimizers flatten a model's parameters per call).
# A structure enters these maps only after the Python walk made the same leaves, so a
# node the two see differently (an OrderedDict: a leaf here) keeps the Python path.
_FROM_CPP: dict = {}  # jaxlib PyTreeDef -> our TreeDef
_TO_CPP: dict = {}    # TreeDef -> PyTreeDef, for structures of built-in nodes only
_CPP_KEPT = 4096


def fast_flatten(tree: Any) -> tuple[list, Any]:
    """(leaves, jaxlib PyTreeDef), flattened in C++ with the same nodes, leaf order and
    registrations as `flatten` (jit checks that they agree before relying on it).
    The native cached call (fastcall.c) calls _cpp_registry.flatten itself."""
    return _cpp_registry.flatten(tree)


def _register(nodetype: type, node: _Node) -> None:
    global _cpp_registry
    _FROM_CPP.clear()  # (a registration can change what a structure means)
    _TO_CPP.clear()
    if nodetype in _registry:  # jaxlib's registry refuses a second registration: rebuild
        _cpp_registry = _jax.pytree.PyTreeRegistry()
        for t, n in _registry.items():
            if t is not nodetype:
                _cpp_registry.register_node(t, n.flatten, n.unflatten)
    _registry[nodetype] = node
    _cpp_registry.register_node(nodetype, node.flatten, node.unflatten)


def register_pytree_node(nodetype: type, flatten_func: Callable,
                         unflatten_func: Callable) -> None:
    """flatten_func(obj) -> (children, aux); unflatten_func(aux, children) -> obj. aux is
    part of jit's cache key: hashable, or at least comparable with == (a dict works)."""
    _register(nodetype, _Node(flatten_func, unflatten_func, None))


def register_pytree_node_class(cls: type) -> type:
    """Register a class with methods tree_flatten(self) -> (children, aux) and classmethod
    tree_unflatten(aux, children). Usable as a decorator."""
    register_pytree_node(cls, lambda o: o.tree_flatten(), cls.tree_unflatten)
    return cls


def register_dataclass(nodetype: type, data_fields: Sequence[str] | None = None,
                       meta_fields: Sequence[str] | None = None,
                       drop_fields: Sequence[str] = ()) -> type:
    """Treat the `data_fields` of a class as children and its `meta_fields` as static
    structure (part of jit's cache key). For a dataclass both may be left out: fields
    marked `field(metadata=dict(static=True))` are meta, the others data. Usable as a
    decorator."""
    if data_fields is None and meta_fields is None:
        if not dataclasses.is_dataclass(nodetype):
            raise TypeError(at_user_line(
                f"register_dataclass: {nodetype.__name__} is not a dataclass; pass "
                f"data_fields= and meta_fields="))
        fields = [f for f in dataclasses.fields(nodetype) if f.name not in drop_fields]
        meta_fields = [f.name for f in fields if f.metadata.get("static", False)]
        data_fields = [f.name for f in fields if not f.metadata.get("static", False)]
    elif data_fields is None or meta_fields is None:
        raise TypeError(at_user_line("register_dataclass: pass both data_fields and "
                                     "meta_fields, or neither (for a dataclass)"))
    data, meta = tuple(data_fields), tuple(meta_fields)
    if dataclasses.is_dataclass(nodetype):
        init = {f.name for f in dataclasses.fields(nodetype) if f.init}
        missing = init - set(data) - set(meta) - set(drop_fields)
        if missing:
            raise ValueError(at_user_line(
                f"register_dataclass: {nodetype.__name__}'s fields {sorted(missing)} are "
                f"neither data_fields nor meta_fields"))

    def flatten_node(o):
        return [getattr(o, n) for n in data], tuple(getattr(o, n) for n in meta)

    def unflatten_node(aux, children):
        return nodetype(**dict(zip(data, children, strict=True)),
                        **dict(zip(meta, aux, strict=True)))

    _register(nodetype, _Node(flatten_node, unflatten_node, data))
    return nodetype


# ---- structure ------------------------------------------------------------------------------

class TreeDef:
    """The structure of a pytree, without its leaves. Interned: equal structures are the
    same object, so hashing and comparing (jit's cache key) cost nothing per node."""

    __slots__ = ("kind", "aux", "children", "num_leaves", "__weakref__")
    _interned: dict = {}
    _by_equality: dict = {}  # (kind, children) -> [TreeDef] whose aux is unhashable

    def __new__(cls, kind, aux, children: tuple):
        key = (kind, aux, children)
        try:
            t = cls._interned.get(key)
        except TypeError:  # unhashable aux: find an equal one
            return cls._equal_aux(kind, aux, children)
        if t is None:
            t = cls._make(kind, aux, children)
            cls._interned[key] = t
        return t

    @classmethod
    def _make(cls, kind, aux, children):
        t = object.__new__(cls)
        t.kind, t.aux, t.children = kind, aux, children
        t.num_leaves = 1 if kind is None else sum(c.num_leaves for c in children)
        return t

    @classmethod
    def _equal_aux(cls, kind, aux, children):
        same = cls._by_equality.setdefault((kind, children), [])
        for t in same:
            if type(t.aux) is type(aux) and bool(t.aux == aux):
                return t
        t = cls._make(kind, aux, children)
        same.append(t)
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
        return f"{name}({', '.join(repr(c) for c in self.children)})"

    @property
    def num_nodes(self) -> int:
        return 1 + sum(c.num_nodes for c in self.children)

    def unflatten(self, leaves: Iterable) -> Any:
        return unflatten(self, leaves)

    def flatten_up_to(self, tree: Any) -> list:
        """The subtrees of `tree` at this structure's leaves (ValueError if the structure
        above them differs)."""
        out: list = []
        _flatten_up_to(self, tree, out, ())
        return out

    def compose(self, inner: TreeDef) -> TreeDef:
        """This structure with `inner` at each of its leaves."""
        if self.kind is None:
            return inner
        return TreeDef(self.kind, self.aux, tuple(c.compose(inner) for c in self.children))

    def child_keys(self) -> list:
        """The key path entry of each child."""
        k = self.kind
        if k is dict:
            return [DictKey(key) for key in self.aux]
        if k is tuple or k is list:
            return [SequenceKey(i) for i in range(len(self.children))]
        node = _registry.get(k)
        if node is not None and node.field_names is not None:
            return [GetAttrKey(n) for n in node.field_names]
        if node is None and hasattr(k, "_fields"):
            return [GetAttrKey(f) for f in k._fields]
        return [FlattenedIndexKey(i) for i in range(len(self.children))]

    def leaf_paths(self) -> list[tuple]:
        """The key path of every leaf, in leaf order."""
        out: list[tuple] = []

        def walk(td, prefix):
            if td.kind is None:
                out.append(prefix)
                return
            for key, c in zip(td.child_keys(), td.children, strict=True):
                walk(c, (*prefix, key))

        walk(self, ())
        return out


LEAF = TreeDef(None, None, ())
_NONE = TreeDef(type(None), None, ())


def _is_namedtuple(x) -> bool:
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def flatten(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> tuple[list, TreeDef]:
    """(leaves, structure). is_leaf(node) True makes a node a leaf.

    Example:
        >>> leaves, treedef = stablejit.tree.flatten({'b': (2, 3), 'w': 1})
        >>> leaves
        [2, 3, 1]
    """
    cpp = None
    if is_leaf is None:
        try:
            fast, cpp = _cpp_registry.flatten(tree)
            td = _FROM_CPP.get(cpp)
        except Exception:  # unhashable aux data, too deep: the Python walk says so
            cpp = td = None
        if td is not None:
            if td is not _DISAGREE:
                return fast, td
            cpp = None
    leaves: list = []
    try:
        td = _flatten(tree, leaves, is_leaf)
    except RecursionError:
        raise _too_deep() from None
    if cpp is not None:
        _remember(cpp, td, len(fast) == len(leaves) and builtins.all(
            a is b for a, b in zip(fast, leaves, strict=True)))
    return leaves, td


_DISAGREE = object()  # a structure C++ flattens otherwise: the Python walk, at once


def _remember(cpp, td: TreeDef, agree: bool) -> None:
    if len(_FROM_CPP) >= _CPP_KEPT:
        _FROM_CPP.clear()
        _TO_CPP.clear()
    _FROM_CPP[cpp] = td if agree else _DISAGREE
    if agree and _builtin_nodes(td):  # (jaxlib gives a registered node's unflatten a tuple)
        _TO_CPP[td] = cpp


def _builtin_nodes(td: TreeDef) -> bool:
    k = td.kind
    return (k is None or k is tuple or k is list or k is dict or k is type(None)
            or (k not in _registry and hasattr(k, "_fields"))) and builtins.all(
        _builtin_nodes(c) for c in td.children)


def _too_deep() -> ValueError:
    return ValueError(
        f"a pytree is nested too deeply for Python's recursion limit "
        f"({sys.getrecursionlimit()} frames); hold deep data in a tensor or a flat "
        f"list, or raise the limit with sys.setrecursionlimit")


def _flatten(x, leaves: list, is_leaf) -> TreeDef:
    if is_leaf is not None and is_leaf(x):
        leaves.append(x)
        return LEAF
    t = type(x)
    if t is tuple or t is list:
        return TreeDef(t, None, tuple([_flatten(c, leaves, is_leaf) for c in x]))
    if t is dict:
        keys = sorted(x)
        return TreeDef(dict, tuple(keys), tuple([_flatten(x[k], leaves, is_leaf)
                                                 for k in keys]))
    if x is None:
        return _NONE
    if t in _registry:
        children, aux = _registry[t].flatten(x)
        return TreeDef(t, aux, tuple([_flatten(c, leaves, is_leaf) for c in children]))
    if _is_namedtuple(x):
        return TreeDef(t, None, tuple([_flatten(c, leaves, is_leaf) for c in x]))
    leaves.append(x)
    return LEAF


def _node_of(x) -> tuple[Any, Any, list]:
    """(kind, aux, children) of one node, as _flatten sees it."""
    t = type(x)
    if t is tuple or t is list:
        return t, None, list(x)
    if t is dict:
        keys = sorted(x)
        return dict, tuple(keys), [x[k] for k in keys]
    if x is None:
        return type(None), None, []
    if t in _registry:
        children, aux = _registry[t].flatten(x)
        return t, aux, list(children)
    if _is_namedtuple(x):
        return t, None, list(x)
    return None, None, []


def _flatten_up_to(td: TreeDef, x, out: list, path: tuple) -> None:
    if td.kind is None:
        out.append(x)
        return
    kind, aux, children = _node_of(x)
    if kind is not td.kind or len(children) != len(td.children) or not (
            aux is td.aux or bool(aux == td.aux)):
        where = keystr(path) or "the root"
        raise ValueError(at_user_line(
            f"pytree structures differ at {where}: expected {td!r}, got "
            f"{type(x).__name__} {x!r:.80}; pass trees with the same keys, lengths and node "
            f"types (a list and a tuple differ)"))
    for key, c, child in zip(td.child_keys(), td.children, children, strict=True):
        _flatten_up_to(c, child, out, (*path, key))


def unflatten(treedef: TreeDef, leaves: Iterable) -> Any:
    """The pytree of `treedef`'s structure with `leaves` in its leaf positions: the
    inverse of flatten (jax.tree.unflatten).

    Raises:
        ValueError: if the number of leaves differs from the structure's.

    Example:
        >>> leaves, treedef = stablejit.tree.flatten({'b': (2, 3), 'w': 1})
        >>> stablejit.tree.unflatten(treedef, [x * 10 for x in leaves])
        {'b': (20, 30), 'w': 10}
    """
    leaves = list(leaves)
    cpp = _TO_CPP.get(treedef)
    if cpp is not None and len(leaves) == treedef.num_leaves:
        return cpp.unflatten(leaves)
    if len(leaves) != treedef.num_leaves:  # jax raises too, where zip would cut or stop
        raise ValueError(at_user_line(
            f"unflatten: the structure {treedef!r:.80} has {treedef.num_leaves} leaves, "
            f"but {len(leaves)} were given; pass one leaf per position of flatten's list"))
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
        return _registry[k].unflatten(td.aux, children)
    return k(*children)  # namedtuple


# ---- jax.tree ---------------------------------------------------------------------------------

def _rest_leaves(fname: str, td: TreeDef, rest: tuple) -> list[list]:
    others = []
    for i, r in enumerate(rest, 1):
        try:
            others.append(td.flatten_up_to(r))
        except ValueError as e:
            raise ValueError(at_user_line(
                f"{fname}: argument {i} has a different pytree structure than argument 0 "
                f"({str(e).splitlines()[0]})")) from None
    return others


def tree_map(f: Callable, tree: Any, *rest: Any,
             is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """f applied to each leaf of `tree` (and the matching subtrees of `rest`, which
    share tree's structure down to its leaves).

    Example:
        >>> stablejit.tree.map(lambda a, b: a + b, {'w': 1, 'b': (2, 3)}, {'w': 10, 'b': (20, 30)})
        {'b': (22, 33), 'w': 11}
    """
    leaves, td = flatten(tree, is_leaf)
    others = _rest_leaves("tree_map", td, rest)
    return unflatten(td, [f(x, *ys) for x, *ys in zip(leaves, *others, strict=True)])


map = tree_map


def map_with_path(f: Callable, tree: Any, *rest: Any,
                  is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """f(key_path, leaf, *matching subtrees of rest) for each leaf.

    Example:
        >>> stablejit.tree.map_with_path(lambda p, x: stablejit.tree.keystr(p), {'w': 1, 'b': (2,)})
        {'b': ("['b'][0]",), 'w': "['w']"}
    """
    leaves, td = flatten(tree, is_leaf)
    others = _rest_leaves("map_with_path", td, rest)
    return unflatten(td, [f(p, x, *ys) for p, x, *ys in zip(td.leaf_paths(), leaves,
                                                             *others, strict=True)])


def tree_leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list:
    """The leaves of a pytree, in flatten's order (jax.tree.leaves).

    is_leaf: a predicate that stops the descent at the subtrees it accepts. None is a
    node without children, so it is not a leaf.

    Example:
        >>> stablejit.tree.leaves({'w': snp.ones(2), 'layers': [1.0, (2.0, None)]})
        [1.0, 2.0, Tensor<f32[2] xla:host:0>
        [1., 1.]]
    """
    return flatten(tree, is_leaf)[0]


def tree_structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> TreeDef:
    """The structure (a TreeDef) of a pytree, without its leaves
    (jax.tree.structure). is_leaf: as for flatten.

    Example:
        >>> stablejit.tree.structure({'w': 1, 'b': (2, 3)}).num_leaves
        3
    """
    return flatten(tree, is_leaf)[1]


leaves, structure = tree_leaves, tree_structure


def flatten_with_path(tree: Any, is_leaf: Callable[[Any], bool] | None = None
                      ) -> tuple[list[tuple[tuple, Any]], TreeDef]:
    """([(key_path, leaf), ...], structure)."""
    lv, td = flatten(tree, is_leaf)
    return list(zip(td.leaf_paths(), lv, strict=True)), td


def leaves_with_path(tree: Any, is_leaf: Callable[[Any], bool] | None = None
                     ) -> list[tuple[tuple, Any]]:
    """The leaves of a pytree with their key paths: [(key_path, leaf), ...]
    (jax.tree.leaves_with_path). is_leaf: as for flatten.
    """
    return flatten_with_path(tree, is_leaf)[0]


_NO_INIT = object()


def reduce(function: Callable, tree: Any, initializer: Any = _NO_INIT,
           is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """functools.reduce over the leaves.

    Example:
        >>> stablejit.tree.reduce(lambda a, b: a + b, {'w': 1, 'b': (2, 3)})
        6
    """
    lv = flatten(tree, is_leaf)[0]
    if initializer is _NO_INIT:
        return functools.reduce(function, lv)
    return functools.reduce(function, lv, initializer)


def all(tree: Any, *, is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """Whether every leaf is truthy (Python's all over the leaves)."""
    return builtins.all(flatten(tree, is_leaf)[0])


def transpose(outer_treedef: TreeDef, inner_treedef: TreeDef | None,
              pytree_to_transpose: Any) -> Any:
    """An outer-of-inner pytree turned into an inner-of-outer one (inner_treedef None:
    the structure of the first outer leaf)."""
    if inner_treedef is None:
        first = outer_treedef.flatten_up_to(pytree_to_transpose)[0]
        inner_treedef = structure(first)
    lv, td = flatten(pytree_to_transpose)
    expected = outer_treedef.compose(inner_treedef)
    if td is not expected:
        raise TypeError(at_user_line(f"tree.transpose: the tree has structure {td!r}, not "
                                     f"outer {outer_treedef!r} of inner {inner_treedef!r}"))
    n_in = inner_treedef.num_leaves
    groups = [lv[i * n_in:(i + 1) * n_in] for i in range(outer_treedef.num_leaves)]
    return unflatten(inner_treedef, [unflatten(outer_treedef, [g[j] for g in groups])
                                     for j in range(n_in)])


# jax.tree_util's names for the same functions (`from stablejit import tree_util`)
tree_flatten, tree_unflatten, tree_reduce, tree_all = flatten, unflatten, reduce, all
tree_map_with_path, tree_flatten_with_path = map_with_path, flatten_with_path
tree_leaves_with_path, tree_transpose = leaves_with_path, transpose


# ---- jax.tree_util's Partial and register_static ---------------------------------------------

class Partial(functools.partial):
    """functools.partial that is a pytree (jax.tree_util.Partial): its positional and
    keyword arguments are children, the function is static structure. A function with
    arguments can so be passed through jit, vmap or scan, and returned from them."""

    def __repr__(self) -> str:
        return "Partial(" + super().__repr__().partition("(")[2]


register_pytree_node(Partial, lambda p: ((p.args, p.keywords), p.func),
                     lambda func, children: Partial(func, *children[0], **children[1]))


def register_static(cls: type) -> type:
    """Register `cls` as a pytree with no leaves: its instances are static structure
    (part of jit's cache key, so they must be hashable), as if passed with
    static_argnums. Usable as a decorator."""
    register_pytree_node(cls, lambda obj: ((), obj), lambda obj, _children: obj)
    return cls


def __dir__() -> list[str]:  # dir(), help() and tab completion show the public names only
    return sorted(__all__)
