"""NumPy's signatures: positional order, out= written as NumPy writes it, initial/where."""

import numpy as np
import pytest
from _check import check

import kenaz
import kenaz.numpy as knp

x = np.random.default_rng(10).standard_normal((3, 4))

CALLS = [
    ("sum", (x, 0, None, None, True), {}),
    ("sum", (x,), {"axis": 1, "initial": 2.0, "where": x > 0}),
    ("prod", (x, 1, None, None, False, 2.0), {}),
    ("mean", (x, (0, 1), None, None, True), {}),
    ("mean", (x,), {"axis": 0, "where": x > -0.5}),
    ("var", (x, 1, None, None, 1), {}),
    ("var", (x,), {"axis": 0, "correction": 1}),
    ("std", (x, None, None, None, 0, True), {}),
    ("max", (x, 1, None, True), {}),
    ("max", (x,), {"initial": 0.5}),
    ("max", (x,), {"axis": 0, "initial": -5.0, "where": x < 0.5}),
    ("min", (x, 0), {"initial": -0.1}),
    ("amax", (x, 1), {}),
    ("amin", (x, 1), {"keepdims": True}),
    ("argmax", (x, 1, None), {"keepdims": True}),
    ("argmin", (x,), {}),
    ("cumsum", (x, 1, None, None), {}),
    ("cumprod", (x, 0), {}),
    ("clip", (x, -0.5, 0.5, None), {}),
    ("clip", (x,), {"min": -0.2, "max": 0.3}),
    ("round", (x, 2, None), {}),
    ("around", (x, 1), {}),
    ("all", (x > -1, 1, None, True), {}),
    ("any", (x,), {"where": x > 1.0}),
    ("dot", (x, x.T, None), {}),
    ("matmul", (x, x.T), {"out": None}),
    ("einsum", ("ij,kj->ik", x, x), {"optimize": True}),
    ("concatenate", ([x, x], 1, None), {}),
    ("concat", ([x, x],), {"axis": None}),
    ("stack", ([x, x], 2, None), {"dtype": np.float32}),
]


@pytest.mark.parametrize("name, args, kwargs", CALLS, ids=[c[0] for c in CALLS])
def test_numpy_signature(name, args, kwargs):
    numpy_name = "concatenate" if name == "concat" else name
    expected = getattr(np, numpy_name)(*args, **kwargs)
    result = getattr(knp, name)(*args, **kwargs)
    np.testing.assert_allclose(np.asarray(result), expected, rtol=1e-12)
    assert np.asarray(result).dtype == np.asarray(expected).dtype


@pytest.mark.parametrize("name", ["sum", "prod", "mean", "var", "std", "max", "min", "argmax",
                                  "cumsum", "round", "all", "any", "clip"])  # fmt: skip
def test_out_is_written_as_numpy(name):
    args = (x, 0, 1) if name == "clip" else (x,)
    axis = {} if name in ("round", "clip") else {"axis": 0}
    expected = getattr(np, name)(*args, **axis)
    out = np.zeros_like(expected)
    assert getattr(knp, name)(*args, **axis, out=out) is out
    np.testing.assert_allclose(out, expected, rtol=1e-12)


def test_where_and_initial_are_differentiable():
    mask = x > 0
    check("sum", lambda v: knp.sum(v, axis=1, where=mask, initial=1.0), x)
    check("mean", lambda v: knp.mean(v, axis=0, where=x > -0.5), x)
    check("max", lambda v: knp.max(v, axis=0, initial=-5.0, where=x < 0.5), x)
    check("var", lambda v: knp.var(v, axis=1, correction=1), x)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_max_min_initial_over_empty_axes_and_masked_mean_dtype(dtype):
    """max/min with initial= over an empty axis is initial, as NumPy's (it raised), and
    mean(where=) of float32 data is float32 (it was float64); found by compare_with_jax."""
    for a, keywords in (
        (np.zeros((2, 0), dtype), {"axis": -1, "initial": 0.3}),
        (np.zeros((0, 3), dtype), {"axis": 0, "initial": -1.0, "keepdims": True}),
        (np.zeros((0,), dtype), {"initial": 2.0}),
    ):
        for ours, theirs in ((knp.max, np.max), (knp.min, np.min)):
            result, expected = ours(a, **keywords), theirs(a, **keywords)
            assert result.dtype == expected.dtype and result.shape == expected.shape
            np.testing.assert_array_equal(result, expected)
    g = kenaz.grad(lambda v: knp.sum(knp.max(v, axis=-1, initial=0.3)))(np.zeros((2, 0), dtype))
    assert g.shape == (2, 0) and g.dtype == dtype
    x, mask = np.array([[1.0, 2.0, 3.0]], dtype), np.array([[False, True, True]])
    assert knp.mean(x, where=mask).dtype == np.mean(x, where=mask).dtype == dtype
    g = kenaz.grad(lambda v: knp.mean(v * v, where=mask))(x)
    assert g.dtype == dtype
    np.testing.assert_allclose(g, [[0.0, 2.0, 3.0]], rtol=1e-6)
