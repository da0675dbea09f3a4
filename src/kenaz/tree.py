"""Pytrees: nested tuples, lists, dicts, ``None`` and registered containers.

A thin layer over ``optree`` with JAX's conventions (``None`` is an empty
subtree, dict keys are sorted).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import optree

__all__ = ["flatten", "unflatten", "leaves", "map", "structure"]

NAMESPACE = "kenaz"


_LEAF = optree.tree_structure(0, namespace=NAMESPACE)  # the structure of any single leaf
_lone_leaf_type: type | None = None  # kenaz.tensor.Tensor, registered by that module


def register_lone_leaf(cls: type) -> None:
    """Let ``flatten`` return an instance of ``cls`` (Tensor) as one leaf without optree.

    Tensor registers itself: this module sits below it and does not import it.
    """
    global _lone_leaf_type
    _lone_leaf_type = cls


def flatten(tree: Any) -> tuple[list[Any], optree.PyTreeSpec]:
    """Leaves of ``tree`` in order, and its structure."""
    if type(tree) is _lone_leaf_type:  # a lone tensor (an output, a cotangent): no optree
        return [tree], _LEAF
    return optree.tree_flatten(tree, namespace=NAMESPACE)


def unflatten(treedef: optree.PyTreeSpec, leaves: Any) -> Any:
    """Rebuild a tree of structure ``treedef`` from ``leaves``."""
    return optree.tree_unflatten(treedef, leaves)


def leaves(tree: Any) -> list[Any]:
    """Leaves of ``tree`` in order."""
    return optree.tree_leaves(tree, namespace=NAMESPACE)


def structure(tree: Any) -> optree.PyTreeSpec:
    """The structure of ``tree``."""
    return optree.tree_structure(tree, namespace=NAMESPACE)


def map(f: Callable[..., Any], tree: Any, *rest: Any) -> Any:  # noqa: A001
    """Apply ``f`` to the leaves of ``tree`` (and the matching leaves of ``rest``)."""
    return optree.tree_map(f, tree, *rest, namespace=NAMESPACE)
