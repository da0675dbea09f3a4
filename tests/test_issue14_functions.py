"""Issue 14, item 2: r_, c_, cross's axes, gammasgn (tests/test_convert.py), scipy.signal.

Each is checked against NumPy/SciPy, with ``check_grads`` to order 2, and ``vmap``
against a loop.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.signal

import kenaz
import kenaz.numpy as knp
import kenaz.scipy.signal as signal
from kenaz.testing import check_grads

rng = np.random.default_rng(14)


def check_vmap(f, *args):
    batched = kenaz.vmap(f)(*[np.stack([a, 0.5 * a[::-1]]) for a in args])
    for i in range(2):
        expected = f(*[a if i == 0 else 0.5 * a[::-1] for a in args])
        np.testing.assert_allclose(np.asarray(batched)[i], np.asarray(expected), rtol=1e-12)


INDEX_TRICKS = {
    "r_ joins": (lambda a, b: knp.r_[a, 0.5, b], lambda a, b: np.r_[a, 0.5, b]),
    "r_ with a range": (lambda a, b: knp.r_[0:1:3j, a * b], lambda a, b: np.r_[0:1:3j, a * b]),
    "r_ directive": (lambda a, b: knp.r_["0,2", a, b], lambda a, b: np.r_["0,2", a, b]),
    "r_ trans1d": (lambda a, b: knp.r_["-1,2,0", a, b], lambda a, b: np.r_["-1,2,0", a, b]),
    "c_ columns": (lambda a, b: knp.c_[a, b, a * b], lambda a, b: np.c_[a, b, a * b]),
}


@pytest.mark.parametrize("name", list(INDEX_TRICKS))
def test_index_tricks(name):
    ours, numpys = INDEX_TRICKS[name]
    a, b = rng.normal(size=3), rng.normal(size=3)
    np.testing.assert_allclose(ours(a, b).numpy(), numpys(a, b))
    check_grads(ours, (a, b), order=2)
    if name != "r_ with a range":
        check_vmap(ours, a, b)


CROSS = [
    {},
    {"axisa": 0},
    {"axisa": 0, "axisb": 0, "axisc": 0},
    {"axis": 0},
    {"axisc": 0},
]


@pytest.mark.parametrize("keywords", CROSS, ids=[str(k) for k in CROSS])
def test_cross_axes(keywords):
    first = keywords.get("axisa", keywords.get("axis", -1)) == 0
    second = keywords.get("axisb", keywords.get("axis", -1)) == 0
    a = rng.normal(size=(3, 4) if first else (4, 3))
    b = rng.normal(size=(3, 4) if second else (4, 3))
    f = lambda x, y: knp.cross(x, y, **keywords)  # noqa: E731
    np.testing.assert_allclose(f(a, b).numpy(), np.cross(a, b, **keywords))
    check_grads(f, (a, b), order=2)
    check_vmap(f, a, b)


@pytest.mark.filterwarnings("ignore:Arrays of 2-dimensional vectors:DeprecationWarning")
def test_cross_of_2_vectors():
    a, b = rng.normal(size=(4, 2)), rng.normal(size=(4, 3))
    np.testing.assert_allclose(knp.cross(a, a[::-1]).numpy(), np.cross(a, a[::-1]))
    np.testing.assert_allclose(knp.cross(a, b).numpy(), np.cross(a, b))
    check_grads(knp.cross, (a, b), order=2)


SIGNAL = [
    ("convolve", (6,), (3,), "full"), ("convolve", (3,), (5,), "valid"),
    ("convolve", (4, 5), (2, 3), "same"), ("convolve", (3, 4, 2), (2, 2, 2), "full"),
    ("correlate", (6,), (3,), "full"), ("correlate", (5, 4), (2, 3), "same"),
    ("correlate", (2, 3), (4, 5), "valid"),
    ("convolve2d", (4, 5), (2, 3), "full"), ("convolve2d", (4, 5), (3, 3), "same"),
    ("convolve2d", (2, 3), (4, 5), "valid"),
    ("correlate2d", (4, 5), (2, 2), "same"), ("correlate2d", (2, 3), (4, 5), "valid"),
]  # fmt: skip


@pytest.mark.parametrize("name, shape1, shape2, mode", SIGNAL)
def test_signal(name, shape1, shape2, mode):
    a, v = rng.normal(size=shape1), rng.normal(size=shape2)
    ours = lambda x, y: getattr(signal, name)(x, y, mode=mode)  # noqa: E731
    np.testing.assert_allclose(ours(a, v).numpy(), getattr(scipy.signal, name)(a, v, mode=mode))
    check_grads(ours, (a, v), order=2)
    check_vmap(ours, a, v)
    complex_a = a + 1j * rng.normal(size=shape1)
    np.testing.assert_allclose(
        ours(complex_a, v).numpy(), getattr(scipy.signal, name)(complex_a, v, mode=mode)
    )


def test_convolve2d_fillvalue_is_differentiable():
    a, v = rng.normal(size=(3, 4)), rng.normal(size=(2, 2))
    f = lambda x, fill: signal.convolve2d(x, v, fillvalue=fill)  # noqa: E731
    np.testing.assert_allclose(f(a, 0.7).numpy(), scipy.signal.convolve2d(a, v, fillvalue=0.7))
    check_grads(f, (a, 0.7), order=2)


def test_signal_errors():
    with pytest.raises(ValueError, match="mode"):
        signal.convolve([1.0], [1.0], mode="middle")
    with pytest.raises(ValueError, match="at least as large"):
        signal.convolve(np.ones((2, 5)), np.ones((3, 2)), mode="valid")
    with pytest.raises(NotImplementedError, match="boundary"):
        signal.convolve2d(np.ones((2, 2)), np.ones((2, 2)), boundary="wrap")
