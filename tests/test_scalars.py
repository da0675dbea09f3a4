"""0-d results are numbers to other libraries, as NumPy's scalars are (issue 26, item 3).

Outside transformations a 0-d tensor of a NumPy value answers ``isinstance`` checks
for ``numbers.Real`` (``Integral`` for integers, ``Complex`` for complex), so
``numpy.isscalar``, ``operator.index``, ``math.isfinite`` and matplotlib's argument
checks accept it; ``type(t)`` stays ``Tensor``. Inside a differentiating
transformation a tracked tensor is no number (conventions.md: its conversions raise).
"""

import copy
import math
import numbers
import operator
import pickle

import matplotlib
import numpy as np

import kenaz
import kenaz.numpy as knp

matplotlib.use("Agg")


def test_a_0d_float_result_is_a_real_number():
    loss = knp.sum(knp.array([0.25, 0.5]))
    assert type(loss) is kenaz.Tensor  # the type kenaz's own code tests
    assert isinstance(loss, kenaz.Tensor)
    assert isinstance(loss, numbers.Real) and isinstance(loss, numbers.Number)
    assert not isinstance(loss, numbers.Integral)
    assert np.isscalar(loss) and np.isscalar(knp.sum(np.ones(3))) == np.isscalar(np.sum(np.ones(3)))
    assert math.isfinite(loss) and not math.isfinite(knp.inf * loss)
    assert knp.isscalar(loss)


def test_integer_and_complex_results():
    count = knp.sum(knp.array([1, 2, 3]))
    assert isinstance(count, numbers.Integral) and operator.index(count) == 6
    assert [0, 1, 2, 3, 4, 5, 6][count] == 6
    z = knp.sum(knp.array([1 + 2j]))
    assert isinstance(z, numbers.Complex) and not isinstance(z, numbers.Real)
    flag = knp.all(knp.array([True]))
    # NumPy's bool_ is no numbers.Number either; np.isscalar still says True for it.
    assert not isinstance(flag, numbers.Number) and not isinstance(np.bool_(True), numbers.Number)


def test_arrays_are_not_numbers():
    for value in (knp.ones(3), knp.ones((1,)), knp.ones((2, 2))):
        assert not isinstance(value, numbers.Number)
        assert not np.isscalar(value)
        assert np.isscalar(value) == np.isscalar(np.asarray(value))


def test_inside_a_transformation_a_tracked_tensor_is_no_number():
    seen = {}

    def f(x):
        seen["tracked"] = (isinstance(x, numbers.Real), np.isscalar(x))
        constant = knp.sum(knp.ones(2))  # made inside, but no transformation tracks it
        seen["constant"] = isinstance(constant, numbers.Real)
        return x * x

    kenaz.grad(f)(1.5)
    assert seen == {"tracked": (False, False), "constant": True}
    kenaz.jvp(f, (1.5,), (1.0,))
    assert seen["tracked"] == (False, False)
    kenaz.vmap(f)(np.ones(3))  # a batched view is never a number
    assert seen["tracked"] == (False, False)


def test_str_prints_like_numpy_and_repr_says_tensor():
    loss = knp.sum(knp.array([0.1, 0.2]))
    assert str(loss) == str(np.sum(np.array([0.1, 0.2])))
    assert str(knp.ones((2, 2))) == str(np.ones((2, 2)))
    assert f"{loss}" == str(loss) and f"{loss:.2f}" == "0.30"
    assert repr(loss).startswith("Tensor(")
    assert repr(knp.ones(2)) == "Tensor([1., 1.])"


def test_round_pickle_and_copy():
    loss = knp.sum(knp.array([1.25, 1.25]))
    assert round(loss) == round(np.float64(2.5)) and type(round(loss)) is int
    assert float(round(loss, 1)) == 2.5
    for clone in (pickle.loads(pickle.dumps(loss)), copy.copy(loss), copy.deepcopy(loss)):
        assert type(clone) is kenaz.Tensor and float(clone) == 2.5


def test_matplotlib_accepts_0d_results():
    import matplotlib.pyplot as plt

    alpha = knp.mean(knp.array([0.25, 0.75]))
    figure, axes = plt.subplots()
    try:
        (line,) = axes.plot([0, 1], [1, 0], alpha=alpha, linewidth=alpha * 4)
        points = axes.scatter([0, 1], [1, 0], s=alpha * 100, alpha=alpha)
        figure.canvas.draw()
        assert float(line.get_alpha()) == 0.5 and float(line.get_linewidth()) == 2.0
        np.testing.assert_allclose(points.get_sizes(), [50.0])
    finally:
        plt.close(figure)
