"""Pytrees: nested tuples, lists, dicts, ``None`` and registered containers.

A thin layer over ``optree`` with JAX's conventions (``None`` is an empty
subtree, dict keys are sorted).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import optree

__all__ = ["flatten", "unflatten", "leaves", "map", "structure"]

NAMESPACE = "kenaz"


_LEAF = optree.tree_structure(0, namespace=NAMESPACE)  # the structure of any single leaf
_lone_leaf_type: type | None = None  # kenaz.tensor.Tensor, registered by that module

# Types whose values are always leaves: a tuple of them (a transformation's arguments, a
# function's outputs) is flattened without optree, whose walk costs a few microseconds
# even for one leaf. Exact types: a subclass (a namedtuple...) may be a registered node.
_LEAF_TYPES: set[type] = {np.ndarray, float, int, complex, bool, *np.sctypeDict.values()}
_TUPLES: dict[int, optree.PyTreeSpec] = {}  # the structure of a tuple of n leaves


def register_lone_leaf(cls: type) -> None:
    """Let ``flatten`` return an instance of ``cls`` (Tensor) as one leaf without optree.

    Tensor registers itself: this module sits below it and does not import it.
    """
    global _lone_leaf_type
    _lone_leaf_type = cls
    _LEAF_TYPES.add(cls)


def flatten(tree: Any) -> tuple[list[Any], optree.PyTreeSpec]:
    """Leaves of ``tree`` in order, and its structure."""
    kind = type(tree)
    if kind is _lone_leaf_type:  # a lone tensor (an output, a cotangent): no optree
        return [tree], _LEAF
    if kind is tuple:
        for item in tree:
            if type(item) not in _LEAF_TYPES:
                return optree.tree_flatten(tree, namespace=NAMESPACE)
        spec = _TUPLES.get(len(tree))
        if spec is None:
            spec = _TUPLES[len(tree)] = optree.tree_structure((0,) * len(tree), namespace=NAMESPACE)
        return list(tree), spec
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
