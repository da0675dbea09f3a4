"""Programs written for NumPy run unmodified on Tensors: format specs, NumPy's utilities,
matplotlib, np.testing and SciPy's compiled routines (issue 17)."""

import warnings

import numpy as np
import pytest

import kenaz
import kenaz.numpy as knp


# -- format specs --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "spec", [".6f", "15", ">10.3e", "<12.4g", "+.2%", "e", "", "^20", "010.3f", ",.2f"]
)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_format_specs_of_a_0d_tensor_are_numpys(spec, dtype):
    for make in (lambda v: knp.sum(knp.ones(3, dtype=dtype)) * v, lambda v: knp.array(v, dtype)):
        t = make(dtype(1234.56789 / 3))
        expected = format(np.asarray(t.numpy())[()], spec) if spec else str(t)
        assert format(t, spec) == expected
        assert f"{t:{spec}}" == expected


def test_format_in_a_training_log():
    loss = knp.mean((knp.arange(4.0) - 1.5) ** 2)
    accuracy = knp.mean(knp.array([1.0, 0.0, 1.0, 1.0]))
    line = f"loss {loss:.6f} acc {accuracy:15} {accuracy:>10.3e}"
    assert line == f"loss {1.25:.6f} acc {0.75:15} {0.75:>10.3e}"
    assert f"{knp.array(7):d}" == "7"
    assert f"{knp.array(True)}" == f"{np.array(True)}" == "True"  # str(), as NumPy


def test_format_of_an_nd_tensor_follows_numpy():
    t = knp.array([1.0, 2.0])
    assert f"{t}" == str(t)
    with pytest.raises(TypeError):
        format(np.array([1.0, 2.0]), ".2f")  # NumPy refuses a spec for n-d arrays ...
    with pytest.raises(TypeError):
        format(t, ".2f")  # ... and so does kenaz
    assert f"{knp.array([[3.5]])[0, 0]:.1f}" == "3.5"


def test_format_inside_grad_prints_the_value():
    seen = []

    def f(x):
        loss = (x * x).sum()
        seen.append(f"{loss:.3f}")
        return loss

    kenaz.grad(f)(knp.ones(2))
    assert seen == ["2.000"]


# -- NumPy's utilities -------------------------------------------------------------------------
def test_error_state_and_print_options():
    x = knp.zeros(2)
    with np.errstate(divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.isinf(np.log(x).numpy()).all()
    with knp.errstate(divide="ignore"):
        knp.log(x)
    old = knp.seterr(all="ignore")
    try:
        assert knp.geterr()["divide"] == "ignore"
    finally:
        np.seterr(**old)
    with knp.printoptions(precision=2):
        assert "3.14" in np.array2string(knp.array([np.pi]))
        assert "3.14" in repr(knp.array([np.pi]))


def test_histogram_and_plt_hist():
    data = knp.array(np.random.default_rng(0).standard_normal(200))
    counts, edges = np.histogram(data, bins=7)
    expected_counts, expected_edges = np.histogram(data.numpy(), bins=7)
    np.testing.assert_array_equal(counts, expected_counts)
    np.testing.assert_allclose(edges, expected_edges)
    counts, edges = knp.histogram(data, bins=7, range=(-3, 3), density=True)
    np.testing.assert_allclose(
        counts.numpy(), np.histogram(data.numpy(), 7, (-3, 3), density=True)[0]
    )
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure = plt.figure()
    try:
        n, bins, _ = plt.hist(data, bins=5)
        np.testing.assert_array_equal(n, np.histogram(data.numpy(), bins=5)[0])
        plt.plot(knp.arange(3.0), knp.arange(3.0) ** 2)
        plt.imshow(knp.ones((4, 4)))
    finally:
        plt.close(figure)


def test_fill_diagonal_and_dtype_helpers():
    cov = knp.ones((3, 3)) * 0.1
    np.fill_diagonal(cov, 1.0)
    np.testing.assert_allclose(np.diag(cov.numpy()), 1.0)
    assert knp.issubdtype(cov.dtype, knp.floating)
    assert knp.promote_types(knp.float32, knp.int64) == np.float64
    assert knp.finfo(cov.dtype).eps == np.finfo(np.float64).eps
    assert knp.common_type(cov) is np.float64
    assert np.can_cast(cov, np.float32, casting="same_kind")


def test_np_testing_on_tensors():
    t = knp.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(t, [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(t, t)
    np.testing.assert_array_almost_equal(t, t + 1e-9)
    knp.testing.assert_allclose(t * 2, np.array([2.0, 4.0, 6.0]))
    with pytest.raises(AssertionError):
        np.testing.assert_allclose(t, [1.0, 2.0, 4.0])


def test_grad_of_numpy_code_still_differentiates():
    def f(x):
        return np.sum(np.sin(x) ** 2) + np.linalg.norm(x)

    x = np.array([0.3, -1.2, 2.0])
    expected = 2 * np.sin(x) * np.cos(x) + x / np.linalg.norm(x)
    np.testing.assert_allclose(kenaz.grad(f)(knp.asarray(x)).numpy(), expected)


# -- SciPy -----------------------------------------------------------------------------------
scipy = pytest.importorskip("scipy")


def test_minimize_with_a_tensor_x0():
    from scipy.optimize import minimize

    target = knp.array([1.0, -2.0, 0.5])

    def objective(x):
        return knp.sum((knp.asarray(x) - target) ** 2)

    for method in ["BFGS", "L-BFGS-B", "Nelder-Mead", "CG"]:
        result = minimize(objective, knp.zeros(3), method=method, options={"maxiter": 2000})
        np.testing.assert_allclose(result.x, target.numpy(), atol=1e-3)
    value_and_grad = kenaz.value_and_grad(objective)
    result = minimize(value_and_grad, knp.zeros(3), jac=True, method="L-BFGS-B")
    assert result.success
    np.testing.assert_allclose(result.x, target.numpy(), atol=1e-6)


def test_optimize_roots_and_fits():
    from scipy import optimize

    t = knp.array([1.0, 8.0, 27.0])
    np.testing.assert_allclose(optimize.root(lambda x: x**3 - t, knp.ones(3)).x, [1, 2, 3])
    np.testing.assert_allclose(optimize.brentq(knp.sin, 2.0, 4.0), np.pi)
    xs = knp.linspace(0.0, 1.0, 10)
    (slope, intercept), _ = optimize.curve_fit(lambda x, a, b: a * x + b, xs, 2 * xs + 1)
    np.testing.assert_allclose([slope, intercept], [2.0, 1.0])
    fit = optimize.least_squares(lambda x: x - t, knp.zeros(3))
    np.testing.assert_allclose(fit.x, t.numpy(), atol=1e-6)


def test_integrate():
    from scipy import integrate

    value, _ = integrate.quad(knp.sin, 0.0, knp.array(np.pi))
    np.testing.assert_allclose(value, 2.0)
    solution = integrate.solve_ivp(lambda s, y: -y, (0.0, 1.0), knp.ones(2), rtol=1e-8)
    np.testing.assert_allclose(solution.y[:, -1], np.exp(-1.0), rtol=1e-6)
    states = integrate.odeint(lambda y, s: -y, knp.ones(2), knp.linspace(0.0, 1.0, 5))
    np.testing.assert_allclose(states[-1], np.exp(-1.0), rtol=1e-6)
    np.testing.assert_allclose(integrate.trapezoid(knp.ones(5), knp.linspace(0.0, 1.0, 5)), 1.0)


def test_interpolate():
    from scipy import interpolate

    x = knp.linspace(0.0, 1.0, 6)
    y = x**2
    np.testing.assert_allclose(interpolate.interp1d(x, y)(knp.array(0.5)), 0.26, atol=0.02)
    np.testing.assert_allclose(interpolate.CubicSpline(x, y)(0.5), 0.25)
    np.testing.assert_allclose(interpolate.make_interp_spline(x, y, k=3)(0.5), 0.25)
    grid = interpolate.RegularGridInterpolator((x,), y)
    np.testing.assert_allclose(grid(knp.array([[0.5]])), 0.26, atol=0.02)


def test_linalg():
    from scipy import linalg

    a = knp.array([[4.0, 1.0], [1.0, 3.0]])
    b = knp.array([1.0, 2.0])
    expected = np.linalg.solve(a.numpy(), b.numpy())
    np.testing.assert_allclose(linalg.solve(a, b), expected)
    np.testing.assert_allclose(linalg.cho_solve(linalg.cho_factor(a), b), expected)
    np.testing.assert_allclose(linalg.lu_solve(linalg.lu_factor(a), b), expected)
    np.testing.assert_allclose(linalg.eigh(a)[0], np.linalg.eigvalsh(a.numpy()))
    np.testing.assert_allclose(linalg.expm(knp.zeros((2, 2))), np.eye(2))
    np.testing.assert_allclose(linalg.svd(a)[1], np.linalg.svd(a.numpy())[1])


def test_stats():
    from scipy import stats

    sample = knp.array(np.random.default_rng(1).standard_normal(50))
    np.testing.assert_allclose(stats.norm.pdf(knp.zeros(1)), [1 / np.sqrt(2 * np.pi)])
    np.testing.assert_allclose(stats.describe(sample).mean, sample.numpy().mean())
    np.testing.assert_allclose(stats.norm.fit(sample)[0], sample.numpy().mean())
    assert 0 <= stats.ttest_ind(sample, sample + 1).pvalue <= 1
    assert stats.pearsonr(sample, 2 * sample)[0] == pytest.approx(1.0)
    assert stats.gaussian_kde(sample)(knp.zeros(1)).shape == (1,)
    np.testing.assert_allclose(stats.zscore(sample).mean(), 0.0, atol=1e-12)


def test_a_tracked_tensor_is_not_handed_to_numpy_silently():
    def f(x):
        counts, edges = np.histogram(x, bins=3)  # the edges depend on x: kenaz's histogram
        return edges.sum()  # 4 min + 2 (max - min)

    np.testing.assert_allclose(kenaz.grad(f)(knp.array([0.0, 1.0, 2.0])).numpy(), [2, 0, 2])
    with pytest.raises(TypeError, match="numpy.histogram2d"):
        kenaz.grad(lambda x: np.histogram2d(x, x, bins=3)[0].sum())(knp.array([0.0, 1.0, 2.0]))

    def g(x):
        return np.histogram(kenaz.numpy.stop_gradient(x), bins=3)[0].sum() + x.sum()

    np.testing.assert_allclose(kenaz.grad(g)(knp.ones(3)).numpy(), [1.0, 1.0, 1.0])


def test_ndarray_methods_numpy_programs_call():
    x = knp.array([3.0, 1.0, 2.0])
    assert bool(x.all()) and bool((x > 2).any())
    np.testing.assert_array_equal(x.argsort().numpy(), [1, 2, 0])
    np.testing.assert_array_equal(x.nonzero()[0].numpy(), [0, 1, 2])
    assert x.nbytes == 24 and x.itemsize == 8
    np.testing.assert_array_equal(x.take([0, 2]).numpy(), [3.0, 2.0])
    np.testing.assert_array_equal(x.repeat(2).numpy(), [3, 3, 1, 1, 2, 2])
    assert x.tobytes() == np.array([3.0, 1.0, 2.0]).tobytes()
    m = knp.arange(9.0).reshape(3, 3)
    np.testing.assert_array_equal(m.diagonal().numpy(), [0, 4, 8])
    assert float(m.trace()) == 12.0
    kenaz.testing.check_grads(lambda a: a.reshape(3, 3).diagonal().sum() * a.trace(), (np.eye(3),))
    # ndarray's in-place methods change an untracked Tensor, as NumPy's
    x.sort()
    np.testing.assert_array_equal(x.numpy(), [1, 2, 3])
    x.fill(7.0)
    np.testing.assert_array_equal(x.numpy(), [7, 7, 7])
    y = knp.zeros(4)
    y.put([0, 2], [5.0, 6.0])
    np.testing.assert_array_equal(y.numpy(), [5, 0, 6, 0])

    def sorts_in_place(v):
        v.sort()
        return v.sum()

    with pytest.raises(TypeError, match=r"\.at\[index\]"):
        kenaz.grad(sorts_in_place)(knp.ones(3))
