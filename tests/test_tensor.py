"""Tensor: operators, indexing, methods, conversions, immutability, repr; each differentiable."""

from __future__ import annotations

import operator

import numpy as np
import pytest

import kenaz
import kenaz.numpy as knp
from kenaz import Tensor
from kenaz.testing import check_grads

A = np.array([[0.5, -1.5, 2.0], [1.2, 0.3, -0.7]])
B = np.array([[1.5, 0.5, -2.5], [0.8, 1.3, 0.6]])


@pytest.mark.parametrize(
    "operation",
    [
        operator.add,
        operator.sub,
        operator.mul,
        operator.truediv,
        operator.pow,
        operator.floordiv,
        operator.mod,
        operator.lt,
        operator.le,
        operator.gt,
        operator.ge,
        operator.eq,
        operator.ne,
    ],
    ids=lambda f: f.__name__,
)
def test_binary_operators_match_numpy(operation):
    x, y = np.abs(A) + 0.1, np.abs(B) + 0.1
    expected = operation(x, y)
    for left, right in ((Tensor(x), Tensor(y)), (Tensor(x), y), (x, Tensor(y)), (Tensor(x), 2.0)):
        if not isinstance(right, Tensor) and not isinstance(left, Tensor):
            continue
        result = operation(left, right)
        assert isinstance(result, Tensor)
        reference = operation(np.asarray(left), np.asarray(right))
        np.testing.assert_allclose(np.asarray(result), reference)
    np.testing.assert_allclose(np.asarray(operation(Tensor(x), Tensor(y))), expected)


def test_unary_operators_and_matmul():
    x = Tensor(A)
    np.testing.assert_array_equal(-x, -A)
    np.testing.assert_array_equal(+x, A)
    np.testing.assert_array_equal(abs(x), np.abs(A))
    np.testing.assert_allclose(x @ Tensor(B.T), A @ B.T)
    np.testing.assert_allclose(A @ Tensor(B.T), A @ B.T)
    flags = Tensor(np.array([True, False]))
    np.testing.assert_array_equal(~flags, [False, True])
    np.testing.assert_array_equal(flags & np.array([True, True]), [True, False])
    np.testing.assert_array_equal(flags | np.array([False, True]), [True, True])
    np.testing.assert_array_equal(flags ^ np.array([True, True]), [False, True])


def test_operators_are_differentiable():
    def f(x, y):
        return knp.sum((x + y) * (x - y) / (y * y) + 2.0**x - abs(y) ** 1.5) + knp.sum(x**2 @ y.T)

    check_grads(f, (A, B + 3.0), order=2)


@pytest.mark.parametrize(
    "index",
    [
        0,
        -1,
        (1, 2),
        slice(None, None, -1),
        (None, Ellipsis),
        (Ellipsis, 1),
        np.array([1, 0, 1]),
        (np.array([0, 1]), np.array([2, 2])),
        np.array([True, False]),
        A > 0,
        (slice(None), [0, 2]),
    ],
    ids=[
        "int",
        "negative",
        "pair",
        "reverse",
        "newaxis",
        "ellipsis",
        "array",
        "arrays",
        "mask",
        "mask-2d",
        "list",
    ],
)
def test_indexing_matches_numpy_and_is_differentiable(index):
    np.testing.assert_array_equal(Tensor(A)[index], A[index])
    check_grads(lambda x: x[index] * x[index], (A,), order=1)


@pytest.mark.parametrize("method", ["set", "add", "multiply", "min", "max"])
def test_at_updates_match_numpy_and_leave_the_tensor_unchanged(method):
    x = Tensor(A.copy())
    updated = getattr(x.at[0, 1:], method)(np.array([9.0, -9.0]))
    expected = A.copy()
    numpy_update = {
        "set": lambda old, new: new,
        "add": np.add,
        "multiply": np.multiply,
        "min": np.minimum,
        "max": np.maximum,
    }[method]
    expected[0, 1:] = numpy_update(A[0, 1:], np.array([9.0, -9.0]))
    np.testing.assert_array_equal(updated, expected)
    np.testing.assert_array_equal(x, A)
    np.testing.assert_array_equal(x.at[0, 1:].get(), A[0, 1:])


def test_methods_match_numpy():
    x = Tensor(A)
    for name in ("sum", "mean", "max", "min", "prod", "argmax", "argmin", "var", "std"):
        np.testing.assert_allclose(getattr(x, name)(), getattr(A, name)(), err_msg=name)
        np.testing.assert_allclose(getattr(x, name)(axis=1), getattr(A, name)(axis=1), err_msg=name)
    np.testing.assert_allclose(x.sum(axis=0, keepdims=True), A.sum(axis=0, keepdims=True))
    np.testing.assert_array_equal(x.reshape(3, 2), A.reshape(3, 2))
    np.testing.assert_array_equal(x.reshape((-1,)), A.reshape(-1))
    np.testing.assert_array_equal(x.transpose(), A.T)
    np.testing.assert_array_equal(x.T, A.T)
    np.testing.assert_array_equal(x.ravel(), A.ravel())
    np.testing.assert_array_equal(x.flatten(), A.flatten())
    np.testing.assert_array_equal(Tensor(A[None]).squeeze(), A)
    np.testing.assert_array_equal(x.clip(-1.0, 1.0), A.clip(-1.0, 1.0))
    np.testing.assert_allclose(x.dot(B.T), A.dot(B.T))
    np.testing.assert_allclose(x.cumsum(axis=1), A.cumsum(axis=1))
    assert x.astype(np.float32).dtype == np.float32


def test_properties_and_conversions():
    x = Tensor(A)
    assert (x.shape, x.ndim, x.size, x.dtype) == ((2, 3), 2, 6, np.float64)
    assert isinstance(np.asarray(x), np.ndarray)
    np.testing.assert_array_equal(x.numpy(), A)
    scalar = Tensor(2.5)
    assert (float(scalar), int(scalar), bool(scalar), scalar.item()) == (2.5, 2, True, 2.5)
    assert len(x) == 2
    rows = list(x)
    assert len(rows) == 2 and all(isinstance(r, Tensor) for r in rows)
    np.testing.assert_array_equal(rows[1], A[1])
    assert x.tolist() == A.tolist()


def test_0d_tensor_has_no_length_or_iteration():
    with pytest.raises(TypeError, match="0-d"):
        len(Tensor(1.0))
    with pytest.raises(TypeError, match="0-d"):
        iter(Tensor(1.0))


def test_repr_is_readable():
    assert repr(knp.array([1.0, 2.0])) == "Tensor([1., 2.])"
    assert repr(knp.ones(2, dtype=np.float32)) == "Tensor([1., 1.], dtype=float32)"
    assert repr(Tensor(3)) == "Tensor(3)"


def test_tracked_tensors_refuse_assignment_naming_at():
    def f(x):
        x[0] = 1.0
        return x.sum()

    with pytest.raises(TypeError, match=r"\.at\[index\]\.set"):
        kenaz.grad(f)(Tensor(A))


def test_untracked_tensors_are_changed_in_place():
    x = Tensor(A.copy())
    x[0] = 1.0
    assert (x.numpy()[0] == 1.0).all()


def test_object_arrays_are_refused():
    with pytest.raises(TypeError, match="dtype"):
        Tensor(np.array(["a", "b"]))


def test_dtypes_follow_numpy_promotion():
    f32 = knp.ones(2, dtype=np.float32)
    assert (f32 * 2.0).dtype == np.float32  # Python scalars are weak (NEP 50)
    assert (f32 * np.ones(2)).dtype == np.float64
    assert (Tensor(np.arange(3)) * 1.5).dtype == np.float64
    assert kenaz.grad(lambda x: knp.sum(x * 2.0))(f32).dtype == np.float32
