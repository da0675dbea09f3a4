"""Issue 24, items 3 and 4 (NumPy): the keyword arguments NumPy users pass, and the
functions whose derivatives kenaz used to refuse, against NumPy's values and
finite differences (check_grads)."""

import numpy as np
import pytest

import kenaz
import kenaz.numpy as knp
from kenaz.testing import check_grads

rng = np.random.default_rng(24)
x = rng.standard_normal((3, 4))
v = rng.standard_normal(3)


def same(ours, theirs, **tolerance):
    np.testing.assert_allclose(np.asarray(ours), theirs, **tolerance)


# -- pad ----------
PAD_MODES = [
    ("constant", {"constant_values": ((1.0, 2.0), (3.0, 4.0))}), ("edge", {}), ("wrap", {}),
    ("reflect", {}), ("symmetric", {}), ("reflect", {"reflect_type": "odd"}),
    ("symmetric", {"reflect_type": "odd"}), ("linear_ramp", {"end_values": (5.0, -2.0)}),
    ("maximum", {}), ("minimum", {"stat_length": 2}), ("mean", {"stat_length": ((1, 2), (3, 1))}),
    ("median", {}),
]  # fmt: skip


@pytest.mark.parametrize("mode, options", PAD_MODES, ids=[f"{m}{o}" for m, o in PAD_MODES])
def test_pad_modes(mode, options):
    for width in (((2, 5), (6, 1)), 1):  # longer than the axes: reflections repeat
        same(knp.pad(x, width, mode, **options), np.pad(x, width, mode, **options))
    check_grads(lambda a: knp.pad(a, ((1, 2), (3, 1)), mode, **options), (x,), order=1)


def test_pad_integers_and_empty():
    ints = np.arange(5)
    for mode in ("mean", "linear_ramp", "median"):
        np.testing.assert_array_equal(np.asarray(knp.pad(ints, 3, mode)), np.pad(ints, 3, mode))
    assert knp.pad(x, 2, "empty").shape == (7, 8)
    with pytest.raises(ValueError, match="mode 'nope'"):
        knp.pad(x, 1, "nope")


# -- roll, take, diff, linspace, atleast_*, count_nonzero, ravel, einsum ----------
def test_roll_take_diff():
    for shift, axis in (((1, 2), (0, 1)), (3, None), ((1, -2, 1), (1, 1, 0)), (2, (0, 1))):
        same(knp.roll(x, shift, axis), np.roll(x, shift, axis))
    check_grads(lambda a: knp.roll(a, (1, 2), (0, 1)), (x,))
    for mode in ("wrap", "clip"):
        same(knp.take(x, [0, 7, -9], axis=1, mode=mode), np.take(x, [0, 7, -9], axis=1, mode=mode))
        same(knp.take(x, [20, -30], mode=mode), np.take(x, [20, -30], mode=mode))
    check_grads(lambda a: knp.take(a, [0, 7, -9], axis=1, mode="wrap"), (x,))
    out = knp.zeros(3)
    assert knp.take(x, [0, 1, 2], out=out) is out
    same(out, np.take(x, [0, 1, 2]))
    same(knp.diff(x, prepend=0.0, append=x[:, :1]), np.diff(x, prepend=0.0, append=x[:, :1]))
    same(knp.diff(x, n=2, axis=0, prepend=x[:1]), np.diff(x, n=2, axis=0, prepend=x[:1]))
    check_grads(lambda a: knp.diff(a, prepend=a[:, :1], append=1.0), (x,))


def test_linspace_atleast_count_ravel_einsum():
    samples, step = knp.linspace(0.0, 1.0, 5, retstep=True)
    expected_samples, expected_step = np.linspace(0.0, 1.0, 5, retstep=True)
    same(samples, expected_samples)
    same(step, expected_step)
    check_grads(lambda a, b: knp.linspace(a, b, 4, retstep=True), (0.5, 2.0))
    assert [t.shape for t in knp.atleast_1d(1.0, [2.0, 3.0])] == [(1,), (2,)]
    assert [t.shape for t in knp.atleast_3d(1.0, x)] == [u.shape for u in np.atleast_3d(1.0, x)]
    same(knp.count_nonzero(x > 0, axis=1, keepdims=True),
         np.count_nonzero(x > 0, axis=1, keepdims=True))  # fmt: skip
    for order in "CFAK":
        same(knp.ravel(x, order), np.ravel(x, order))
        same(knp.ravel(x.T, order), np.ravel(x.T, order))
    check_grads(lambda a: knp.ravel(a, "F"), (x,))
    b, c = rng.standard_normal((4, 5)), rng.standard_normal((2, 3, 4))
    sublists = [
        (x, [0, 1], b, [1, 2]), (x, [0, 1], b, [1, 2], [2, 0]),
        (c, [Ellipsis, 1], b, [1, 2], [Ellipsis, 2]), (x, [0, 1], [1, 0]),
    ]  # fmt: skip
    for arguments in sublists:
        same(knp.einsum(*arguments), np.einsum(*arguments))
    check_grads(lambda p, q: knp.einsum(p, [0, 1], q, [1, 2], [0, 2]), (x, b))


# -- put, place, put_along_axis, fill_diagonal ----------
WRITES = [
    ("put", ([0, 5, 5, -1], [1.0, 2.0, 3.0])),
    ("place", (x > 0, [7.0, 8.0])),
    ("fill_diagonal", (9.0,)),
    ("put_along_axis", (np.array([[0], [2], [1]]), [[5.0], [6.0], [7.0]], 1)),
]


@pytest.mark.parametrize("name, arguments", WRITES, ids=[w[0] for w in WRITES])
def test_writes_in_place_and_functional(name, arguments):
    ours, theirs = knp.array(x.copy()), x.copy()
    assert getattr(knp, name)(ours, *arguments) is None  # in place, as NumPy
    getattr(np, name)(theirs, *arguments)
    same(ours, theirs)
    same(getattr(knp, name)(knp.array(x.copy()), *arguments, inplace=False), theirs)
    on_tensor = knp.array(x.copy())
    getattr(np, name)(on_tensor, *arguments)  # NumPy's own function on an untracked Tensor
    same(on_tensor, theirs)


def test_writes_under_transformations_carry_derivatives():
    def f(a, values):
        out = knp.zeros((3, 4))
        knp.put(out, [0, 5, 7], values)  # an untracked buffer takes the values' derivative
        copy = a * 1.0
        knp.fill_diagonal(copy, values[:2])
        knp.place(copy, a > 0.5, values * 2)
        return (out * copy).sum() + (copy**2).sum()

    check_grads(f, (x, v))

    def g(a, values):
        copy = a * 1.0
        np.put_along_axis(
            copy, np.array([[0], [2], [1]]), values[:, None], 1
        )  # NumPy's, dispatched
        return (copy**2).sum()

    check_grads(g, (x, v))
    check_grads(lambda a, values: knp.put(a, [1, 2], values[:2], inplace=False), (x, v))
    for mode in ("wrap", "clip"):
        ours, theirs = knp.array(x.copy()), x.copy()
        knp.put(ours, [20, -30], [1.0, 2.0], mode=mode)
        np.put(theirs, [20, -30], [1.0, 2.0], mode=mode)
        same(ours, theirs)
    batched = kenaz.vmap(lambda row, value: knp.put(row, [0], value, inplace=False))(x, v)
    same(batched[:, 0], v)
    with pytest.raises(TypeError, match="inplace=False"):
        kenaz.vmap(lambda row, value: knp.put(row, [0], value))(x, v)


# -- bincount, histogram ----------
def test_bincount_and_histogram_weights():
    values, weights = np.array([0, 1, 1, 3, 5]), rng.standard_normal(5)
    same(knp.bincount(values, weights, minlength=8), np.bincount(values, weights, minlength=8))
    np.testing.assert_array_equal(np.asarray(knp.bincount(values)), np.bincount(values))
    check_grads(lambda w: knp.bincount(values, weights=w), (weights,))
    data, data_weights = rng.standard_normal(50), rng.uniform(0.0, 1.0, 50)
    for options in ({}, {"bins": 5}, {"bins": [-1.0, 0.0, 0.5, 2.0]}, {"range": (-1.0, 1.0)},
                    {"density": True}, {"weights": data_weights}, {"bins": "auto"},
                    {"weights": data_weights, "density": True, "bins": 4}):  # fmt: skip
        hist, edges = knp.histogram(data, **options)
        expected_hist, expected_edges = np.histogram(data, **options)
        same(hist, expected_hist, err_msg=str(options))
        same(edges, expected_edges)
    check_grads(lambda w: knp.histogram(data, bins=4, weights=w)[0], (data_weights,))
    check_grads(lambda w, a: knp.histogram(a, bins=4, weights=w, density=True),
                (data_weights, data))  # fmt: skip


# -- piecewise, apply_along_axis, apply_over_axes ----------
def test_piecewise_and_apply():
    points = rng.standard_normal(6)
    functions = [lambda t: -t, lambda t: t * t, lambda t: 3 * t]

    def f(p):
        return knp.piecewise(p, [p < 0, p >= 0.5], functions)

    same(f(points), np.piecewise(points, [points < 0, points >= 0.5], functions))
    same(knp.piecewise(points, [points < 0], [1.5, 2.0]),
         np.piecewise(points, [points < 0], [1.5, 2.0]))  # fmt: skip
    check_grads(f, (points,))
    cube = rng.standard_normal((3, 4, 2))
    for axis in (0, 1, 2):
        same(knp.apply_along_axis(lambda r: knp.outer(r, r), axis, cube),
             np.apply_along_axis(lambda r: np.outer(r, r), axis, cube))  # fmt: skip
        same(knp.apply_along_axis(knp.sum, axis, cube), np.apply_along_axis(np.sum, axis, cube))
    check_grads(lambda a: knp.apply_along_axis(lambda r: knp.outer(r, r), 1, a), (cube,))
    same(knp.apply_over_axes(knp.sum, cube, [0, 2]), np.apply_over_axes(np.sum, cube, [0, 2]))
    check_grads(lambda a: knp.apply_over_axes(knp.sum, a, [0, 2]), (cube,))


# -- roots, polydiv, sort_complex, real_if_close ----------
def test_roots_polydiv_sort_complex():
    for p in ([1.0, -3.0, 2.0], [0.0, 2.0, 0.0, 1.0, 0.0], [1.0, 0.0, 1.0], [3.0, 1.0, -2.0, 5.0]):
        ours, theirs = np.asarray(knp.roots(p)), np.roots(p)
        assert ours.dtype == theirs.dtype
        same(np.sort_complex(ours), np.sort_complex(theirs), atol=1e-12)
    check_grads(knp.roots, (np.array([1.0, -3.0, 2.0]),))
    check_grads(lambda p: knp.abs(knp.roots(p)) ** 2, (np.array([1.0, 1.0, 2.0]),), modes=("fwd",))
    u, w = np.array([3.0, 5.0, 2.0, 1.0]), np.array([2.0, 1.0])
    for a, b in (
        (u, w),
        (w, u),
        (u, np.array([2.0])),
        (np.array([1.0, 2.0, 1.0]), np.array([1.0, 1.0])),
    ):
        quotient, remainder = knp.polydiv(a, b)
        expected_quotient, expected_remainder = np.polydiv(a, b)
        same(quotient, expected_quotient)
        same(remainder, expected_remainder, atol=1e-14)
    check_grads(knp.polydiv, (u, w))
    c = np.array([1 + 2j, 1 - 1j, -3, 0.5j])
    same(knp.sort_complex(c), np.sort_complex(c))
    assert np.asarray(knp.sort_complex(v)).dtype == np.sort_complex(v).dtype
    check_grads(knp.sort_complex, (np.array([1 + 2j, 2 - 1j, -3, 0.5j]),))  # distinct real parts


# -- quantile methods, cov weights, unique(axis=), nanargmax(keepdims=), real_if_close ----------
QUANTILE_METHODS = [
    "inverted_cdf", "averaged_inverted_cdf", "closest_observation", "interpolated_inverted_cdf",
    "hazen", "weibull", "linear", "median_unbiased", "normal_unbiased", "lower", "higher",
    "midpoint", "nearest",
]  # fmt: skip


@pytest.mark.parametrize("method", QUANTILE_METHODS)
def test_quantile_methods(method):
    data = rng.standard_normal((4, 7))
    q = np.array([0.0, 0.1, 0.5, 0.77, 1.0])
    for axis in (None, 0, (0, 1)):
        same(knp.quantile(data, q, axis=axis, method=method),
             np.quantile(data, q, axis=axis, method=method))  # fmt: skip
    same(knp.percentile(data, [10, 90], axis=1, method=method, keepdims=True),
         np.percentile(data, [10, 90], axis=1, method=method, keepdims=True))  # fmt: skip
    with_nan = data.copy()
    with_nan[0, 2] = np.nan
    same(knp.nanquantile(with_nan, q, axis=1, method=method),
         np.nanquantile(with_nan, q, axis=1, method=method))  # fmt: skip
    check_grads(lambda a: knp.quantile(a, [0.3, 0.6], axis=1, method=method), (data,), order=1)
    if method in ("linear", "hazen", "weibull", "median_unbiased"):  # continuous in q
        check_grads(lambda p: knp.quantile(data, p, axis=1, method=method), (np.array([0.3, 0.6]),))


def test_quantile_weights():
    data, weights = rng.standard_normal((4, 7)), rng.uniform(0.1, 1.0, (4, 7))
    q = np.array([0.0, 0.3, 0.5, 1.0])
    for axis, w in ((None, weights), (1, weights), (1, weights[0])):
        same(knp.quantile(data, q, axis=axis, method="inverted_cdf", weights=w),
             np.quantile(data, q, axis=axis, method="inverted_cdf", weights=w))  # fmt: skip
    check_grads(lambda a: knp.quantile(a, q, axis=1, method="inverted_cdf", weights=weights),
                (data,), order=1)  # fmt: skip
    with pytest.raises(ValueError, match="inverted_cdf"):
        knp.quantile(data, q, weights=weights)


def test_cov_weights_unique_axis_nanargmax_real_if_close():
    data = rng.standard_normal((3, 6))
    frequencies, observations = np.array([1, 2, 0, 3, 1, 1]), rng.uniform(0.2, 1.0, 6)
    weightings = [
        {"aweights": observations}, {"fweights": frequencies},
        {"fweights": frequencies, "aweights": observations},
        {"aweights": observations, "ddof": 0}, {"aweights": observations, "ddof": 2},
    ]  # fmt: skip
    for options in weightings:
        same(knp.cov(data, **options), np.cov(data, **options), err_msg=str(options))
    check_grads(lambda m, w: knp.cov(m, aweights=w), (data, observations))
    rows = np.array([[1.0, 0, 0], [1, 0, 0], [2, 3, 4], [1, 0, 0]])
    for axis in (0, 1):
        ours = knp.unique(
            rows, axis=axis, return_index=True, return_inverse=True, return_counts=True
        )
        theirs = np.unique(
            rows, axis=axis, return_index=True, return_inverse=True, return_counts=True
        )
        for o, t in zip(ours, theirs, strict=True):
            same(o, t)
    check_grads(lambda m: knp.unique(m, axis=0), (rng.standard_normal((4, 3)),))
    with_nan = data.copy()
    with_nan[0, 1] = np.nan
    np.testing.assert_array_equal(np.asarray(knp.nanargmax(with_nan, axis=1, keepdims=True)),
                                  np.nanargmax(with_nan, axis=1, keepdims=True))  # fmt: skip
    np.testing.assert_array_equal(np.asarray(knp.nanargmin(with_nan, axis=0, keepdims=True)),
                                  np.nanargmin(with_nan, axis=0, keepdims=True))  # fmt: skip
    close_to_real = np.array([1 + 1e-17j, 2.0 + 0j])
    same(knp.real_if_close(close_to_real), np.real_if_close(close_to_real))
    check_grads(lambda z: knp.real_if_close(knp.astype(z, np.complex128)), (np.array([1.0, 2.0]),))


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int8, np.int64, bool])
def test_sort_complex_of_stacks_and_its_dtype_as_numpy(dtype):
    """sort_complex of a 2-d array raised (AttributeError), and float32 gave complex64
    where NumPy gives complex128 (found by a dtype sweep next to compare_with_jax)."""
    a = np.array([[3, 1, 2], [0, 1, 5]]).astype(dtype)
    ours, theirs = knp.sort_complex(a), np.sort_complex(a)
    assert ours.dtype == theirs.dtype
    np.testing.assert_array_equal(ours, theirs)
    if np.dtype(dtype).kind == "f":
        check_grads(lambda v: knp.real(knp.sort_complex(v)), (a + np.array([0.1, 0.3, 0.2]),))


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, np.int64])
def test_histogram_edges_are_numpy_s_to_the_last_bit(dtype):
    """The edges of float32 data are float32, as NumPy's (they were float64), computed
    with numpy.linspace's formula, so that every value falls in NumPy's bin."""
    data = np.random.default_rng(0).normal(size=50) * 3
    a = data.astype(dtype)
    for bins in (10, 7):
        (hist, edges), (expected_hist, expected_edges) = knp.histogram(a, bins), np.histogram(
            a, bins)  # fmt: skip
        assert edges.dtype == expected_edges.dtype
        np.testing.assert_array_equal(edges, expected_edges)
        np.testing.assert_array_equal(hist, expected_hist)
