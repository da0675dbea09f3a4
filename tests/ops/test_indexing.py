"""check_op for gather (every kind of index) and the scatter family (``x.at[...]``)."""

from __future__ import annotations

import numpy as np
import pytest

import kenaz
import kenaz.numpy as knp

from .cases import OpCase, make_check_op_test, uniform

X = uniform((4, 5), -2, 2)
MASK = np.array([True, False, True, True, False])
ROWS = np.array([0, 2, 3])
DUPLICATES = np.array([1, 1, 3, 1])


def _gather(name, index, x=X) -> OpCase:
    return OpCase(f"gather-{name}", lambda v: v[index], (x,))


def _index_as_argument(name, index) -> OpCase:
    """The index array passed as an integer argument: held fixed, carries no derivative."""
    return OpCase(f"gather-{name}-index-argument", lambda v, i: v[i], (X, index))


GATHER_CASES = [
    _gather("int", 2),
    _gather("negative-int", (-1, 1)),
    _gather("slice", (slice(1, 3), slice(None, None, 2))),
    _gather("newaxis-ellipsis", (None, Ellipsis, 1)),
    _gather("int-array", ROWS),
    _gather("int-array-duplicates", DUPLICATES),
    _gather("int-array-negative", np.array([-1, 0, -4])),
    _gather("int-array-2d", np.array([[0, 1], [3, 3]])),
    _gather("two-arrays", (ROWS, np.array([4, 0, 0]))),
    _gather("broadcast-arrays", (ROWS[:, None], np.array([0, 4]))),
    _gather("array-and-slice", (slice(None), np.array([4, 1, 1]))),
    _gather(
        "split-arrays", (np.array([0, 1]), slice(None), np.array([1, 0])), uniform((3, 2, 3), -1, 1)
    ),
    _gather("bool-mask", (slice(None), MASK)),
    _gather("bool-mask-2d", X > 0),
    _gather("bool-mask-all-false", np.zeros(4, dtype=bool)),
    _gather("0d-source-ellipsis", Ellipsis, uniform((), -1, 1)),
    _gather("empty-array", np.array([], dtype=int)),
    _index_as_argument("int", ROWS),
    _index_as_argument("bool", np.array([True, False, False, True])),
]


def _scatter(mode, index, values_shape, *, x=X, seed=1, name=None, **kwargs) -> OpCase:
    values = uniform(values_shape, -2, 2, seed)
    return OpCase(
        f"scatter_{mode}-{name}",
        lambda v, w: getattr(knp.asarray(v).at[index], mode)(w),
        (x, values),
        **kwargs,
    )


SCATTER_CASES = [
    _scatter("set", (1, slice(None)), (5,), name="row"),
    _scatter("set", (ROWS, 2), (3,), name="int-array"),
    _scatter("set", (slice(None), MASK), (4, 3), name="bool-mask"),
    _scatter("set", (ROWS,), (), name="broadcast-scalar"),
    _scatter("add", DUPLICATES, (4, 5), name="duplicates"),
    _scatter("add", (DUPLICATES, np.array([0, 0, 2, 0])), (4,), name="duplicate-pairs"),
    _scatter("add", (slice(1, 3),), (5,), name="slice-broadcast"),
    _scatter("add", 0, (), name="scalar-at-row"),
    _scatter("multiply", (ROWS, np.array([1, 2, 4])), (3,), name="unique"),
    _scatter("multiply", (slice(None), 0), (4,), name="column"),
    # min and max: values that clearly win or lose at each position (no ties).
    _scatter("max", (ROWS,), (3, 5), name="rows", seed=7),
    _scatter("min", (np.array([3, 0]), np.array([1, 2])), (2,), name="pairs", seed=8),
    # Structural ties are differentiable: the derivative is split evenly, as for `maximum`.
    OpCase("scatter_max-tie-structural", lambda v: knp.asarray(v).at[0].max(v[0]), (X,)),
    OpCase(
        "scatter_min-tie-structural-duplicates",
        lambda v: knp.asarray(v).at[np.array([1, 1])].min(v[1]),
        (X,),
    ),
    OpCase(
        "scatter_max-ties",
        lambda v, w: knp.asarray(v).at[0].max(w),
        (X, X[0].copy()),
        finite_differences=False,
    ),
]

CASES = GATHER_CASES + SCATTER_CASES

test_check_op = make_check_op_test(CASES)


# -- conventions -------------------------------------------------------------------------------
def test_scatter_add_accumulates_duplicates_in_value_and_gradient():
    x = np.zeros(3)
    out = knp.array(x).at[np.array([0, 0, 2])].add(np.array([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(out, [3.0, 0.0, 3.0])
    g = kenaz.grad(lambda v: (knp.array(x).at[np.array([0, 0, 2])].add(v) ** 2).sum())(
        np.array([1.0, 2.0, 3.0])
    )
    np.testing.assert_array_equal(g, [6.0, 6.0, 6.0])


def test_scatter_max_splits_ties_evenly():
    values = np.array([1.0, 1.0, -1.0])
    g = kenaz.grad(lambda v: knp.zeros(2).at[np.array([0, 0, 1])].max(v).sum())(values)
    np.testing.assert_array_equal(g, [0.5, 0.5, 0.0])


def test_gather_with_duplicates_sums_the_cotangent():
    g = kenaz.grad(lambda v: v[np.array([1, 1, 1, 0])].sum())(np.zeros(3))
    np.testing.assert_array_equal(g, [1.0, 3.0, 0.0])


def test_set_overwrites_so_the_old_values_get_no_gradient():
    g = kenaz.grad(lambda v: v.at[1:].set(0.0).sum())(np.ones(3))
    np.testing.assert_array_equal(g, [1.0, 0.0, 0.0])


@pytest.mark.parametrize(
    ("index", "error"),
    [(1.5, IndexError), (np.array([0.5]), IndexError), (True, TypeError)],
    ids=["float", "float-array", "python-bool"],
)
def test_bad_indices_are_refused(index, error):
    with pytest.raises(error, match="kenaz indexing"):
        knp.ones(3)[index]


def test_item_assignment_suggests_at():
    with pytest.raises(TypeError, match=r"\.at\[index\]\.set"):
        knp.ones(3)[0] = 1.0
