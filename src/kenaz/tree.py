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


# Types whose values are always leaves (exact types: a subclass, a namedtuple..., may be a
# registered node): such a value, or a tuple of them (a transformation's arguments, a
# function's outputs), is flattened without optree, whose walk costs a few microseconds
# even for one leaf. kenaz.tensor and kenaz.vectorize add Tensor and its batched view.
_LEAF_TYPES: set[type] = {np.ndarray, float, int, complex, bool, *np.sctypeDict.values()}
LEAF_TYPES = _LEAF_TYPES
"""The exact types whose values are always leaves (read-only: :func:`register_leaf_type`
adds to it), for a transformation's own fast paths over its arguments."""
_LEAF = {n: optree.tree_structure(0, none_is_leaf=n, namespace=NAMESPACE) for n in (False, True)}
_TUPLES: dict[tuple[int, bool], optree.PyTreeSpec] = {}  # (n, none_is_leaf): n leaves' tuple
# The number of leaves of each spec above by its id; -1 for a lone leaf
_COUNTS: dict[int, int] = {id(spec): -1 for spec in _LEAF.values()}
# `((leaf, ...), {})`: a call's positional arguments and no keywords, as ``jit`` and ``trace``
# flatten ``(args, kwargs)``; and the number of leaves of each such spec by its id.
_CALLS: dict[tuple[int, bool], optree.PyTreeSpec] = {}
_CALL_COUNTS: dict[int, int] = {}


def register_leaf_type(cls: type) -> None:
    """Let ``flatten`` take instances of ``cls`` (Tensor) as leaves without asking optree.

    Tensor registers itself: this module sits below it and does not import it.
    """
    _LEAF_TYPES.add(cls)


def flatten(tree: Any, none_is_leaf: bool = False) -> tuple[list[Any], optree.PyTreeSpec]:
    """Leaves of ``tree`` in order, and its structure (with ``none_is_leaf``, ``None`` is a
    leaf, as ``vmap`` takes its axes and outputs; else an empty subtree)."""
    kind = type(tree)
    if kind in _LEAF_TYPES:  # a lone tensor (an output, a cotangent)
        return [tree], _LEAF[none_is_leaf]
    if kind is tuple:
        for item in tree:  # (a loop, not `all(...)`: no generator to make)
            if type(item) not in _LEAF_TYPES:
                break
        else:
            spec = _TUPLES.get((len(tree), none_is_leaf))
            if spec is None:
                spec = optree.tree_structure(
                    (0,) * len(tree), none_is_leaf=none_is_leaf, namespace=NAMESPACE
                )
                _TUPLES[len(tree), none_is_leaf] = spec
                _COUNTS[id(spec)] = len(tree)
            return list(tree), spec
        if len(tree) == 2:  # `(args, kwargs)` with no keywords
            args, kwargs = tree
            if type(args) is tuple and type(kwargs) is dict and not kwargs:
                for item in args:
                    if type(item) not in _LEAF_TYPES:  # args holding tuples of leaves?
                        nested = _nested(args, none_is_leaf, call=True)
                        if nested is not None:
                            return nested
                        break
                else:  # args all leaves
                    spec = _CALLS.get((len(args), none_is_leaf))
                    if spec is None:
                        spec = optree.tree_structure(
                            ((0,) * len(args), {}), none_is_leaf=none_is_leaf, namespace=NAMESPACE
                        )
                        _CALLS[len(args), none_is_leaf] = spec
                        _CALL_COUNTS[id(spec)] = len(args)
                    return list(args), spec
        nested = _nested(tree, none_is_leaf)
        if nested is not None:
            return nested
    return optree.tree_flatten(tree, none_is_leaf=none_is_leaf, namespace=NAMESPACE)


# Tuples of leaves and of tuples of leaves (a transformation's arguments `(params, x, y)`
# with `params` a tuple of arrays, alone or as a call's `(args, {})`): their structures by
# layout (per item, -1 for a leaf, n for a tuple of n leaves) and whether they are a call's.
# Flattened here in half optree's time; optree unflattens them faster than Python could.
_NESTED: dict[tuple[tuple[int, ...], bool, bool], optree.PyTreeSpec] = {}


def _nested(
    tree: tuple, none_is_leaf: bool, call: bool = False
) -> tuple[list[Any], optree.PyTreeSpec] | None:
    """:func:`flatten` of a tuple of leaves and tuples of leaves (with ``call``, of
    ``(tree, {})``), without optree (None for any other tuple)."""
    for item in tree:  # the items' types first: `(args, kwargs)` is refused at once
        if type(item) is not tuple and type(item) not in _LEAF_TYPES:
            return None
    leaves: list[Any] = []
    layout: list[int] = []
    for item in tree:
        if type(item) is tuple:
            for leaf in item:
                if type(leaf) not in _LEAF_TYPES:
                    return None
            leaves.extend(item)
            layout.append(len(item))
        else:
            leaves.append(item)
            layout.append(-1)
    key = (tuple(layout), none_is_leaf, call)
    spec = _NESTED.get(key)
    if spec is None:
        if len(_NESTED) >= 1024:  # (a bound: a program that makes ever new layouts)
            return None
        template: Any = tuple(0 if n < 0 else (0,) * n for n in layout)
        if call:
            template = (template, {})
        spec = optree.tree_structure(template, none_is_leaf=none_is_leaf, namespace=NAMESPACE)
        _NESTED[key] = spec
    return leaves, spec


def unflatten(treedef: optree.PyTreeSpec, leaves: Any) -> Any:
    """Rebuild a tree of structure ``treedef`` from ``leaves`` (a lone leaf, a tuple of them
    or a call's ``(args, {})``, as :func:`flatten` found, without optree)."""
    count = _COUNTS.get(id(treedef))  # the ids of specs this module keeps: never reused
    if count == len(leaves):
        return tuple(leaves)
    if count == -1 and len(leaves) == 1:
        return leaves[0]
    if count is None and _CALL_COUNTS.get(id(treedef)) == len(leaves):
        return tuple(leaves), {}
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
