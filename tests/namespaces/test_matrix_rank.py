"""``kenaz.numpy.linalg.matrix_rank``: NumPy's count, on the input's backend (lazy on Dask)."""

from __future__ import annotations

import numpy as np
import pytest

import kenaz
import kenaz.numpy as knp

_rng = np.random.default_rng(0)
MATRICES = {
    "full rank": _rng.standard_normal((4, 3)),
    "rank 3 of 4x5": _rng.standard_normal((4, 3)) @ _rng.standard_normal((3, 5)),
    "zero": np.zeros((3, 3)),
    "stack": _rng.standard_normal((2, 3, 4, 2)) @ _rng.standard_normal((2, 3, 2, 4)),
    "tiny": np.eye(4) * 1e-20,
    "vector of zeros": np.zeros(2),
    "vector": np.array([0.0, 1.0]),
}


@pytest.mark.parametrize("name", sorted(MATRICES))
@pytest.mark.parametrize("options", [{}, {"tol": 0.5}, {"rtol": 1e-3}], ids=str)
def test_equals_numpy(name, options):
    a = MATRICES[name]
    expected = np.asarray(np.linalg.matrix_rank(a, **options))
    got = knp.linalg.matrix_rank(a, **options)
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got.numpy(), expected)
    if a.ndim >= 2:
        n = min(a.shape[-2:])
        h = a[..., :n, :n] + np.swapaxes(a[..., :n, :n], -1, -2)
        np.testing.assert_array_equal(
            knp.linalg.matrix_rank(h, hermitian=True, **options).numpy(),
            np.linalg.matrix_rank(h, hermitian=True, **options),
        )


def test_no_derivative_and_no_refusal_under_grad():
    a = MATRICES["full rank"]
    g = kenaz.grad(lambda x: knp.sum(x) * knp.linalg.matrix_rank(x))(a)
    np.testing.assert_array_equal(g.numpy(), np.full_like(a, 3.0))


def test_lazy_on_dask():
    da = pytest.importorskip("dask.array")
    a = MATRICES["stack"]
    rank = knp.linalg.matrix_rank(da.from_array(a, chunks=(1, 2, 4, 4)))
    assert type(rank._value).__module__.startswith("dask")
    np.testing.assert_array_equal(rank._value.compute(), np.linalg.matrix_rank(a))


def test_on_strict_arrays():
    xps = pytest.importorskip("array_api_strict")
    a = MATRICES["rank 3 of 4x5"]
    rank = knp.linalg.matrix_rank(xps.asarray(a))
    assert type(rank._value).__module__.startswith("array_api_strict")
    assert int(rank) == 3
