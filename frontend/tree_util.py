"""stablejit.tree_util: jax.tree_util's names (`import stablejit.tree_util` works as a
module import). The functions are stablejit.tree's; Partial and register_static are
defined there too."""

from .tree import (
    DictKey,
    FlattenedIndexKey,
    GetAttrKey,
    Partial,
    SequenceKey,
    TreeDef,
    keystr,
    register_dataclass,
    register_pytree_node,
    register_pytree_node_class,
    register_static,
    tree_all,
    tree_flatten,
    tree_flatten_with_path,
    tree_leaves,
    tree_leaves_with_path,
    tree_map,
    tree_map_with_path,
    tree_reduce,
    tree_structure,
    tree_transpose,
    tree_unflatten,
)

PyTreeDef = TreeDef  # jax's name for a structure

__all__ = ["DictKey", "FlattenedIndexKey", "GetAttrKey", "Partial", "PyTreeDef",
           "SequenceKey", "TreeDef", "keystr", "register_dataclass", "register_pytree_node",
           "register_pytree_node_class", "register_static", "tree_all", "tree_flatten",
           "tree_flatten_with_path", "tree_leaves", "tree_leaves_with_path", "tree_map",
           "tree_map_with_path", "tree_reduce", "tree_structure", "tree_transpose",
           "tree_unflatten"]
