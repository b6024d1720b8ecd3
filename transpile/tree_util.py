"""Pytrees with JAX's names: register classes as nodes, flatten, unflatten and map over nested containers."""

from runtime.pytree import (
    PyTreeDef,
    register_dataclass,
    register_pytree_node,
    register_pytree_node_class,
    tree_flatten,
    tree_leaves,
    tree_map,
    tree_structure,
    tree_unflatten,
)

__all__ = [
    "PyTreeDef",
    "register_dataclass",
    "register_pytree_node",
    "register_pytree_node_class",
    "tree_flatten",
    "tree_leaves",
    "tree_map",
    "tree_structure",
    "tree_unflatten",
]
