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
