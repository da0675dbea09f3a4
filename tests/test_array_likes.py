"""NumPy's array-likes are kenaz's array-likes (issue 26, item 1).

pandas Series, DataFrame and Index, xarray objects, memoryviews and objects with
``__array__`` or ``__array_interface__`` convert as ``numpy.asarray`` converts them,
with the core install alone; only real Array API arrays (CuPy, Dask, strict) take
the backend path. Values and derivatives equal those of ``numpy.asarray(x)``.
"""

import subprocess
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import kenaz
import kenaz.numpy as knp


class WithArray:
    """An object NumPy converts through ``__array__``."""

    def __init__(self, value):
        self.value = np.asarray(value)

    def __array__(self, dtype=None, copy=None):
        return np.asarray(self.value, dtype=dtype)


class WithInterface:
    """An object NumPy converts through ``__array_interface__`` (and has a shape)."""

    def __init__(self, value):
        self.value = np.ascontiguousarray(value)
        self.__array_interface__ = self.value.__array_interface__
        self.shape = self.value.shape


VECTOR = np.array([0.5, -1.25, 2.0])
MATRIX = np.array([[0.5, -1.0], [1.5, 2.0], [-0.25, 0.75]])
ARRAY_LIKES = {
    "Series": lambda: pd.Series(VECTOR),
    "Index": lambda: pd.Index(VECTOR),
    "DataFrame": lambda: pd.DataFrame(MATRIX, columns=["a", "b"]),
    "xarray.DataArray": lambda: xr.DataArray(MATRIX, dims=("row", "col")),
    "memoryview": lambda: memoryview(VECTOR.copy()),
    "__array__": lambda: WithArray(MATRIX),
    "__array_interface__": lambda: WithInterface(VECTOR),
}


def loss(x):
    return knp.sum(knp.sin(x) * x) + knp.mean(knp.square(x))


def mixed(x):
    # the array-like as the other operand of a tensor's operator, and of functions
    w = knp.ones(np.shape(np.asarray(x)))
    return (
        knp.sum(x * w)
        + knp.sum(knp.where(knp.greater(x, 0), x, 0.0) * w)
        + knp.dot(knp.ravel(x), knp.ravel(w))
    )


@pytest.mark.parametrize("name", list(ARRAY_LIKES))
def test_values_equal_those_of_numpy_asarray(name):
    x = ARRAY_LIKES[name]()
    plain = np.asarray(x)
    np.testing.assert_allclose(loss(x).numpy(), loss(plain).numpy())
    np.testing.assert_allclose(mixed(x).numpy(), mixed(plain).numpy())
    np.testing.assert_array_equal(knp.asarray(x).numpy(), plain)
    assert type(knp.array(x)._value) is np.ndarray


@pytest.mark.parametrize("name", list(ARRAY_LIKES))
def test_derivatives_equal_those_of_numpy_asarray(name):
    x = ARRAY_LIKES[name]()
    plain = np.asarray(x)
    np.testing.assert_allclose(kenaz.grad(loss)(x).numpy(), kenaz.grad(loss)(plain).numpy())
    tangent = np.ones_like(plain)
    value, derivative = kenaz.jvp(loss, (x,), (tangent,))
    expected_value, expected_derivative = kenaz.jvp(loss, (plain,), (tangent,))
    np.testing.assert_allclose(value.numpy(), expected_value.numpy())
    np.testing.assert_allclose(derivative.numpy(), expected_derivative.numpy())
    per_row = kenaz.vmap(lambda row: knp.sum(knp.sin(row) * row))
    np.testing.assert_allclose(per_row(x).numpy(), per_row(plain).numpy())


@pytest.mark.parametrize("name", ["Series", "DataFrame", "Index"])
def test_an_array_like_constant_inside_a_transformation(name):
    data = ARRAY_LIKES[name]()
    plain = np.asarray(data)

    def weighted(w):
        return knp.sum(data * w) + knp.sum(w * data) + knp.sum(knp.multiply(data, w))

    w = np.full(plain.shape, 0.5)
    np.testing.assert_allclose(kenaz.grad(weighted)(w).numpy(), 3 * plain)


def test_pandas_defers_to_tensors():
    """``series * tensor`` is kenaz's product (a Tensor), as ``ndarray * tensor`` is."""
    out = pd.Series(VECTOR) * knp.ones(3)
    assert isinstance(out, kenaz.Tensor) and type(out._value) is np.ndarray
    assert isinstance(pd.DataFrame(MATRIX) + knp.ones((3, 2)), kenaz.Tensor)


def test_object_data_is_refused_naming_the_type():
    with pytest.raises(TypeError, match="Series"):
        knp.sin(pd.Series(["a", "b"]))


def test_core_install_alone():
    """Without array-api-compat (the backends' extra), array-likes still convert."""
    script = textwrap.dedent(
        """
        import sys
        sys.modules["array_api_compat"] = None  # as if not installed: importing it fails
        import numpy as np, pandas as pd, kenaz, kenaz.numpy as knp
        s = pd.Series([0.5, 1.5]); df = pd.DataFrame({"a": [1.0, 2.0], "b": [3.0, 4.0]})
        assert float(knp.sum(knp.sin(s))) == float(np.sum(np.sin(s.to_numpy())))
        np.testing.assert_allclose(kenaz.grad(lambda x: knp.sum(x ** 2))(df).numpy(), 2 * df)
        np.testing.assert_allclose((s * knp.ones(2)).numpy(), s.to_numpy())
        np.testing.assert_allclose(kenaz.vmap(knp.sum)(df).numpy(), [4.0, 6.0])
        print("ok")
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
