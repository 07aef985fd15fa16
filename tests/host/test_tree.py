"""stablejit.tree against jax.tree / jax.tree_util: the same calls on the same pytrees
give the same leaves, key paths (as keystr text), results and errors."""

from __future__ import annotations

import collections
import dataclasses
import operator

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp
from stablejit import tree

Point = collections.namedtuple("Point", ["x", "y"])


class Box:
    """A registered node whose aux data is a dict (unhashable), as in JAX's gotchas
    notebook."""

    def __init__(self, a, b, meta):
        self.a, self.b, self.meta = a, b, meta

    def __eq__(self, other):
        return isinstance(other, Box) and (self.a, self.b, self.meta) == (
            other.a, other.b, other.meta)


def _box_flatten(box):
    return (box.a, box.b), dict(box.meta)


def _box_unflatten(aux, children):
    return Box(*children, aux)


tree.register_pytree_node(Box, _box_flatten, _box_unflatten)
jax.tree_util.register_pytree_node(Box, _box_flatten, _box_unflatten)


@dataclasses.dataclass
class Layer:
    w: object
    b: object
    name: str = dataclasses.field(default="layer", metadata=dict(static=True))


tree.register_dataclass(Layer)
jax.tree_util.register_dataclass(Layer)


class Pair:
    def __init__(self, first, second):
        self.first, self.second = first, second

    def tree_flatten(self):
        return (self.first, self.second), "pair"

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children)

    def __eq__(self, other):
        return isinstance(other, Pair) and (self.first, self.second) == (other.first,
                                                                       other.second)


tree.register_pytree_node_class(Pair)
jax.tree_util.register_pytree_node_class(Pair)


class Explicit:
    def __init__(self, u, v, scale):
        self.u, self.v, self.scale = u, v, scale


tree.register_dataclass(Explicit, data_fields=["u", "v"], meta_fields=["scale"])
jax.tree_util.register_dataclass(Explicit, data_fields=["u", "v"], meta_fields=["scale"])

TREES = {
    "leaf": 1.5,
    "nested": {"b": [1, (2, 3)], "a": Point(4, None), "c": {"q": 5}},
    "none": [None, 1, (None,)],
    "box": [Box(1, [2, 3], {"k": 1}), 4],
    "dataclass": Layer(1, 2, "dense"),
    "class": {"p": Pair(1, Pair(2, 3))},
    "explicit": Explicit(1, (2, 3), 0.5),
    "empty": ((), [], {}),
}


def _keystr_leaves(mod, t, **kw):
    return [(jax.tree_util.keystr(p, **kw) if mod is jax.tree else tree.keystr(p, **kw), x)
            for p, x in mod.flatten_with_path(t)[0]]


CALLS = [
    ("leaves", lambda m, t: m.leaves(t)),
    ("num_leaves", lambda m, t: m.structure(t).num_leaves),
    ("num_nodes", lambda m, t: m.structure(t).num_nodes),
    ("map", lambda m, t: m.leaves(m.map(lambda x: x * 10, t))),
    ("map two trees", lambda m, t: m.leaves(m.map(operator.add, t, m.map(lambda x: -x, t)))),
    ("unflatten round trip", lambda m, t: m.leaves(m.unflatten(m.structure(t),
                                                               m.leaves(t)))),
    ("keystr", lambda m, t: _keystr_leaves(m, t)),
    ("keystr simple", lambda m, t: _keystr_leaves(m, t, simple=True, separator="/")),
    ("leaves_with_path", lambda m, t: [(len(p), x) for p, x in m.leaves_with_path(t)]),
    ("map_with_path", lambda m, t: m.leaves(m.map_with_path(
        lambda p, x: (jax.tree_util.keystr(p) if m is jax.tree else tree.keystr(p), x), t))),
    ("reduce", lambda m, t: m.reduce(operator.add, t, 0)),
    ("all", lambda m, t: m.all(t)),
    ("is_leaf tuples", lambda m, t: m.leaves(t, is_leaf=lambda x: isinstance(x, tuple))),
    ("is_leaf None", lambda m, t: m.leaves(t, is_leaf=lambda x: x is None)),
]


@pytest.mark.parametrize("tree_name", list(TREES))
@pytest.mark.parametrize("call_name,call", CALLS, ids=[c[0] for c in CALLS])
def test_matches_jax_tree(tree_name, call_name, call):
    t = TREES[tree_name]
    assert call(tree, t) == call(jax.tree, t)


def test_key_path_entries_match_jax():
    ours = [p for p, _ in tree.flatten_with_path(TREES["nested"])[0]]
    theirs = [p for p, _ in jax.tree.flatten_with_path(TREES["nested"])[0]]
    assert [[type(k).__name__ for k in p] for p in ours] == \
           [[type(k).__name__ for k in p] for p in theirs]
    assert [str(p) for p in ours] == [str(p) for p in theirs]  # their reprs read alike
    assert [tree.keystr(p) for p in ours] == [jax.tree_util.keystr(p) for p in theirs]


def test_unflatten_rebuilds_registered_nodes():
    for name in ("box", "class", "nested"):
        t = TREES[name]
        assert tree.unflatten(tree.structure(t), tree.leaves(t)) == t
    layer = tree.map(lambda x: x + 1, Layer(1, 2, "dense"))
    assert (layer.w, layer.b, layer.name) == (2, 3, "dense")


def test_transpose_matches_jax():
    t = [(1, 2, 3), (4, 5, 6)]
    for mod in (tree, jax.tree):
        outer, inner = mod.structure([0, 0]), mod.structure((0, 0, 0))
        assert mod.transpose(outer, inner, t) == ([1, 4], [2, 5], [3, 6])
    assert tree.transpose(tree.structure([0, 0]), None, t) == ([1, 4], [2, 5], [3, 6])
    with pytest.raises(TypeError, match="structure"):
        tree.transpose(tree.structure([0, 0]), tree.structure((0, 0)), t)


def test_map_prefix_trees_as_jax():
    """The other trees may hold subtrees where the first has leaves."""
    t, other = [1, 2], [(10, 20), {"a": 30}]
    f = lambda x, y: (x, y)  # noqa: E731
    assert tree.map(f, t, other) == jax.tree.map(f, t, other)


@pytest.mark.parametrize("a,b", [
    ({"a": 1, "b": 2}, {"a": 1, "c": 2}),
    ([1, 2], (1, 2)),
    ([1, 2], [1, 2, 3]),
    (Box(1, 2, {"k": 1}), Box(1, 2, {"k": 2})),
])
def test_map_structure_mismatch_raises_as_jax(a, b):
    with pytest.raises(ValueError):
        jax.tree.map(operator.add, a, b)
    with pytest.raises(ValueError, match="different pytree structure"):
        tree.map(operator.add, a, b)


def test_unhashable_aux_is_interned_by_equality():
    s1 = tree.structure(Box(1, 2, {"k": [1]}))
    s2 = tree.structure(Box(3, 4, {"k": [1]}))
    s3 = tree.structure(Box(3, 4, {"k": [2]}))
    assert s1 is s2 and s1 is not s3


def test_jit_cache_with_unhashable_aux():
    """A dict as aux data (JAX's gotchas notebook): jit traces once per aux value."""
    traces = []

    @stablejit.jit
    def f(box):
        traces.append(1)
        return box.a * box.meta["scale"] + box.b

    x = snp.asarray(np.arange(3, dtype=np.float32))
    for _ in range(3):
        out = f(Box(x, x, {"scale": 2.0}))
    np.testing.assert_allclose(np.asarray(out), np.arange(3) * 3.0)
    assert len(traces) == 1
    out = f(Box(x, x, {"scale": 3.0}))
    np.testing.assert_allclose(np.asarray(out), np.arange(3) * 4.0)
    assert len(traces) == 2
    want = jax.jit(lambda b: b.a * b.meta["scale"] + b.b)(Box(jnp.arange(3.0), jnp.arange(
        3.0), {"scale": 3.0}))
    np.testing.assert_allclose(np.asarray(out), np.asarray(want))


def test_register_dataclass_meta_fields_are_static_under_jit():
    traces = []

    @stablejit.jit
    def f(e):
        traces.append(1)
        return e.u * e.scale + e.v[0]

    x = snp.ones(2)
    f(Explicit(x, (x, x), 0.5))
    f(Explicit(x, (x, x), 0.5))
    out = f(Explicit(x, (x, x), 2.0))
    assert len(traces) == 2
    np.testing.assert_allclose(np.asarray(out), [3.0, 3.0])


def test_register_dataclass_needs_all_fields():
    @dataclasses.dataclass
    class D:
        a: int
        b: int

    with pytest.raises(ValueError, match="neither data_fields nor meta_fields"):
        tree.register_dataclass(D, data_fields=["a"], meta_fields=[])


def test_tree_map_keeps_old_name():
    assert stablejit.tree_map is tree.map
    assert tree.tree_leaves({"a": 1}) == tree.leaves({"a": 1}) == [1]


@pytest.mark.parametrize("tree_", [[1, (2, 3)], {"a": 1, "b": [2]}, (1,), [None, 2]])
@pytest.mark.parametrize("extra", [-1, 1])
def test_unflatten_with_the_wrong_number_of_leaves_raises_as_jax(tree_, extra):
    n = len(jax.tree.leaves(tree_)) + extra
    with pytest.raises(ValueError):
        jax.tree.unflatten(jax.tree.structure(tree_), list(range(n)))
    with pytest.raises(ValueError, match=f"has {n - extra} leaves, but {n} were given"):
        tree.unflatten(tree.structure(tree_), list(range(n)))
    td = tree.structure(tree_)
    assert tree.unflatten(td, tree.leaves(tree_)) == tree_


# ---- the C++ flatten and unflatten (tree._FROM_CPP / _TO_CPP) ----------------------------

class _Flags(collections.OrderedDict):
    """An unregistered dict subclass: a leaf for stablejit (and jax), never a dict."""


def _python_walk(t):
    leaves: list = []
    return leaves, tree._flatten(t, leaves, None)


_CPP_TREES = {
    **TREES,
    "ordered dict (a leaf)": [collections.OrderedDict(a=1, b=2), 3],
    "dict subclass (a leaf)": {"f": _Flags(x=1), "g": 2},
    "int and str keys": {1: "a", 2: ("b", None)},
    "deep": [[[[[[[[1]]]]]]], (2,)],
    "tensors": {"w": snp.ones(3), "b": [snp.zeros(2), None]},
    "namedtuple in a dict": {"p": Point(1, Point(2, 3))},
}


@pytest.mark.parametrize("name", list(_CPP_TREES))
def test_flatten_in_cpp_gives_what_the_python_walk_gives(name):
    t = _CPP_TREES[name]
    want_leaves, want_td = _python_walk(t)
    for _ in range(3):  # the first call fills the maps, the later ones read them
        leaves, td = tree.flatten(t)
        assert td is want_td
        assert len(leaves) == len(want_leaves)
        assert all(a is b for a, b in zip(leaves, want_leaves, strict=True))
        back = tree.unflatten(td, leaves)
        assert type(back) is type(t)
        again_leaves, again_td = _python_walk(back)
        assert again_td is want_td
        assert all(a is b for a, b in zip(again_leaves, want_leaves, strict=True))


def test_registered_nodes_unflatten_in_python():
    seen = []

    class Node:
        def __init__(self, a):
            self.a = a

    tree.register_pytree_node(Node, lambda n: ((n.a,), None),
                              lambda aux, children: seen.append(type(children)) or Node(*children))
    leaves, td = tree.flatten([Node(1)])
    tree.flatten([Node(1)])
    tree.unflatten(td, leaves)
    assert seen == [list]  # as always: jaxlib's unflatten would hand over a tuple


def test_a_new_registration_forgets_structures_seen_before():
    class Later:
        def __init__(self, a, b):
            self.a, self.b = a, b

    t = [Later(1, 2)]
    assert tree.flatten(t)[0] == t  # not registered: a leaf, and remembered
    tree.register_pytree_node(Later, lambda n: ((n.a, n.b), None),
                              lambda aux, children: Later(*children))
    assert tree.flatten(t)[0] == [1, 2]
    assert tree.flatten(t)[0] == [1, 2]


def test_a_structure_the_two_flatteners_see_otherwise_keeps_the_python_walk(monkeypatch):
    """A node known to the Python registry only (as if the two registries had drifted
    apart) is a leaf to C++: the Python walk's answer is returned every time, and C++'s
    structure is remembered as one to skip."""
    class Half:
        def __init__(self, a):
            self.a = a

    monkeypatch.setitem(tree._registry, Half, tree._Node(
        lambda h: ((h.a,), None), lambda aux, children: Half(*children), None))
    t = [Half(1), 2]
    for _ in range(3):
        leaves, td = tree.flatten(t)
        assert leaves == [1, 2] and td.children[0].kind is Half
        assert type(tree.unflatten(td, leaves)[0]) is Half
    fast, cpp = tree.fast_flatten(t)
    assert fast == t and tree._FROM_CPP[cpp] is tree._DISAGREE
