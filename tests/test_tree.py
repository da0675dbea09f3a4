"""``kenaz.tree``: the structures it keeps for lone leaves and tuples rebuild without optree."""

from __future__ import annotations

import numpy as np
import optree
import pytest

import kenaz.numpy as knp
from kenaz import tree


def test_unflatten_inverts_flatten_on_the_fast_paths_and_on_optree_s():
    x, y = knp.ones(2), np.zeros(3)
    for value in (x, (x,), (x, y, 1.0), [x, (y, None)], {"b": x, "a": (y,)}):
        leaves, spec = tree.flatten(value)
        rebuilt = tree.unflatten(spec, leaves)
        assert optree.tree_structure(rebuilt, namespace=tree.NAMESPACE) == spec
        assert all(a is b for a, b in zip(tree.flatten(rebuilt)[0], leaves))
    assert type(tree.unflatten(tree.flatten((x, y))[1], [y, x])) is tuple
    assert tree.unflatten(tree.flatten(x)[1], [y]) is y


def test_unflatten_refuses_the_wrong_number_of_leaves():
    x = knp.ones(2)
    for value in (x, (x, x)):
        _, spec = tree.flatten(value)
        with pytest.raises(ValueError):
            tree.unflatten(spec, [x, x, x])


def assert_flattened_as_optree_does_without_it(values: list, monkeypatch) -> None:
    """``tree.flatten`` of each value gives optree's leaves and structure while optree's
    flatten is unusable, and ``tree.unflatten`` gives the value back."""
    expected = [optree.tree_flatten(v, namespace=tree.NAMESPACE) for v in values]
    monkeypatch.setattr(optree, "tree_flatten", None)  # any use raises
    for value, (leaves, spec) in zip(values, expected):
        found, found_spec = tree.flatten(value)
        assert found_spec == spec and len(found) == len(leaves)
        assert all(a is b for a, b in zip(found, leaves))
        assert tree.unflatten(found_spec, found) == value
    monkeypatch.undo()


def test_tuples_of_tuples_of_leaves_flatten_as_optree_does_without_it(monkeypatch):
    """A transformation's arguments ``(params, x)``, ``params`` a tuple of arrays, are
    flattened without optree, to optree's leaves and structure; anything deeper (a list, a
    dict, a None, a tuple three deep) still goes to optree."""
    x, y = knp.ones(2), np.zeros(3)
    values = [((x, y),), ((x, y, 1.0), x, y), ((),), (x, ()), (1.0, (2.0,))]
    assert_flattened_as_optree_does_without_it(values, monkeypatch)
    for deeper in (([x],), ((x, None),), (((x,),),), ({"a": x},)):
        leaves, spec = tree.flatten(deeper)
        assert spec == optree.tree_structure(deeper, namespace=tree.NAMESPACE)


def test_a_calls_arguments_holding_tuples_of_leaves_flatten_without_optree(monkeypatch):
    """``jit``'s ``(args, {})`` with ``args`` like ``(params, x, y)`` (``params`` a tuple of
    arrays): optree's leaves and structure, without optree; keywords still go to optree."""
    x, y = knp.ones(2), np.zeros(3)
    values = [(((x, y), x, y), {}), (((x, y, 1.0),), {}), ((x, ()), {})]
    assert_flattened_as_optree_does_without_it(values, monkeypatch)
    with_keywords = (((x, y), x), {"scale": x})
    leaves, spec = tree.flatten(with_keywords)
    assert spec == optree.tree_structure(with_keywords, namespace=tree.NAMESPACE)
