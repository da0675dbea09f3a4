"""check_op for basic_index (ints, slices, None, ...), gather (index arrays and masks)
and the scatter family (``x.at[...]``); the conventions they share with NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import kenaz
import kenaz.numpy as knp
from kenaz.errors import EscapedTracerError
from kenaz.ops import indexing
from kenaz.testing.batching import check_batching

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


def _basic(name, index, x=X) -> OpCase:
    return OpCase(f"basic_index-{name}", lambda v: v[index], (x,))


BASIC_INDEX_CASES = [
    _basic("int", 2),
    _basic("negative-int", (-1, 1)),
    _basic("slice", (slice(1, 3), slice(None, None, 2))),
    _basic("negative-step", slice(None, None, -1)),
    _basic("empty-slice", slice(3, 1)),
    _basic("newaxis-ellipsis", (None, Ellipsis, 1)),
    _basic("empty-tuple", ()),
    _basic("numpy-integer", (np.int64(3), slice(None, 4))),
    _basic("0d-source-ellipsis", Ellipsis, uniform((), -1, 1)),
    _basic("0d-source-empty-tuple", (), uniform((), -1, 1)),
]

GATHER_CASES = [
    # gather itself with a basic spec: what the scatter rules perform on cotangents
    OpCase("gather-basic-spec", lambda v: indexing.gather(v, spec=(1, slice(None, 3))), (X,)),
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
    _gather("0d-index-array", np.array(3)),
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

CASES = BASIC_INDEX_CASES + GATHER_CASES + SCATTER_CASES

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


def test_item_assignment_under_grad_suggests_at():
    def f(x):
        x[0] = 1.0
        return x.sum()

    with pytest.raises(TypeError, match=r"\.at\[index\]\.set"):
        kenaz.grad(f)(knp.ones(3))


# -- basic indexing: the same answers as NumPy on every path ------------------------------------
V = np.arange(16.0) ** 2
BASIC_INDICES = [
    3,
    -1,
    -16,
    slice(2, 10),
    slice(None, None, -3),
    slice(20, 30),
    (),
    Ellipsis,
    None,
    (None, slice(1, 3)),
    (Ellipsis, 5),
    np.int64(4),
    np.intp(-2),
    (np.int32(1),),
]


def _performed(f, *args) -> list[str]:
    names = []

    class Record(kenaz.Handler):
        def handle(self, op, args, params):
            names.append(op.name)
            return kenaz.perform(op, *args, **params)

    with kenaz.handler(Record()):
        f(*args)
    return names


@pytest.mark.parametrize("index", BASIC_INDICES, ids=repr)
def test_basic_index_matches_numpy(index):
    expected = V[index]
    out = knp.asarray(V)[index]
    assert type(out) is kenaz.Tensor
    np.testing.assert_array_equal(out, expected)
    assert out.shape == np.shape(expected) and out.dtype == expected.dtype
    assert _performed(lambda v: v[index], knp.asarray(V)) == ["basic_index"]
    # the same value under every transformation, and the derivative of a selection
    ones = np.zeros_like(V)
    ones[index] = 1.0
    np.testing.assert_array_equal(kenaz.grad(lambda v: v[index].sum())(V), ones)
    out, tangent = kenaz.jvp(lambda v: v[index], (V,), (np.ones_like(V),))
    np.testing.assert_array_equal(out, expected)
    np.testing.assert_array_equal(tangent, np.ones_like(expected))
    batch = np.stack([V, -V, 2 * V])
    batched = kenaz.vmap(lambda v: v[index])(batch)
    np.testing.assert_array_equal(batched, np.stack([b[index] for b in batch]))
    with_axis_last = kenaz.vmap(lambda v: v[index], in_axes=1)(batch.T)
    np.testing.assert_array_equal(with_axis_last, batched)


@pytest.mark.parametrize("index", [16, -17, (0,) * 2, (slice(None), 1)], ids=repr)
def test_basic_index_out_of_range_raises_index_error_like_numpy(index):
    with pytest.raises(IndexError) as expected:
        V[index]
    for f in (lambda v: v[index], kenaz.grad(lambda v: v[index].sum())):
        with pytest.raises(IndexError) as raised:
            f(knp.asarray(V))
        assert str(raised.value) == str(expected.value)
    with pytest.raises(IndexError):
        kenaz.vmap(lambda v: v[index])(np.stack([V, V]))


@pytest.mark.parametrize(
    ("index", "as_numpy"),
    [
        (np.array(3), np.array(3)),
        (knp.asarray(np.array(3)), np.array(3)),
        ([3], [3]),
        ((np.array(3), slice(None)), (np.array(3), slice(None))),
    ],
    ids=["0d-array", "Tensor-int", "list", "0d-array-in-tuple"],
)
def test_array_like_indices_take_the_gather_path(index, as_numpy):
    x = V.reshape(4, 4)
    np.testing.assert_array_equal(knp.asarray(x)[index], x[as_numpy])
    assert _performed(lambda v: v[index], knp.asarray(x)) == ["gather"]


def test_basic_index_of_a_batched_index_value_batches_through_gather():
    # A Tensor int is an index array (gather): under vmap it may differ per example.
    out = kenaz.vmap(lambda v, i: v[i])(np.stack([V, V]), np.array([1, 5]))
    np.testing.assert_array_equal(out, [V[1], V[5]])


def test_basic_index_second_derivatives_and_linearize():
    f = lambda v: (v[2:6] ** 3).sum() + v[-1] ** 2  # noqa: E731
    hessian = kenaz.jacfwd(kenaz.grad(f))(V[:8] / 10)
    expected = np.diag(np.r_[0, 0, 6 * V[2:6] / 10, 0, 2])
    np.testing.assert_allclose(hessian, expected)
    out, f_jvp = kenaz.linearize(lambda v: v[1:3], V)
    np.testing.assert_array_equal(f_jvp(np.ones_like(V)), [1.0, 1.0])


def test_basic_index_batches_with_every_layout():
    for index in (1, (slice(None), 2), (None, Ellipsis, slice(1, None, 2)), ()):
        check_batching(lambda v, i=index: v[i], (uniform((3, 4), -1, 1),))


def test_basic_index_of_an_escaped_batched_view_raises():
    leaked = []
    kenaz.vmap(lambda v: leaked.append(v) or v)(np.stack([V, V]))
    for index in (3, slice(2, 10), (None, 1)):
        with pytest.raises(EscapedTracerError):
            leaked[0][index]


def test_basic_index_is_shown_by_debug_with_its_index():
    import io

    text = io.StringIO()
    kenaz.debug(lambda v: v[2:10], file=text)(knp.asarray(V))
    assert text.getvalue() == "basic_index(float64[16], slice) -> float64[8]\n"


def test_basic_index_of_a_plain_array_is_a_tensor():
    out = knp.getitem(V, 3)
    assert type(out) is kenaz.Tensor and float(out) == V[3]
    np.testing.assert_array_equal(knp.getitem(V, slice(2, 4)), V[2:4])
