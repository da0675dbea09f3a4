"""kenaz.scipy: special functions, distributions and linalg against SciPy, derivatives, vmap."""

import warnings

import numpy as np
import pytest
import scipy.linalg
import scipy.special
import scipy.stats
from _check import check, check_vmap

import kenaz
import kenaz.scipy.linalg as ksl
import kenaz.scipy.special as ks
import kenaz.scipy.stats as kst

rng = np.random.default_rng(4)
positive = rng.uniform(0.5, 3.0, 4)
unit = rng.uniform(0.1, 0.9, 4)
signed = rng.uniform(-2.0, 2.0, 4)

# name, arguments (all differentiated unless "fixed" holds the index of a held argument)
SPECIAL = [
    ("gammaln", (positive,)),
    ("digamma", (positive,)),
    ("gamma", (positive,)),
    ("rgamma", (positive,)),
    ("erf", (signed,)),
    ("erfc", (signed,)),
    ("erfinv", (unit * 2 - 1,)),
    ("erfcinv", (unit * 2,)),
    ("expit", (signed,)),
    ("logit", (unit,)),
    ("log_expit", (signed,)),
    ("ndtr", (signed,)),
    ("ndtri", (unit,)),
    ("log_ndtr", (signed * 3,)),
    ("xlogy", (signed, positive)),
    ("xlog1py", (signed, unit)),
    ("beta", (positive, positive[::-1])),
    ("betaln", (positive, positive[::-1])),
    ("entr", (positive,)),
    ("rel_entr", (positive, positive[::-1])),
    ("kl_div", (positive, positive[::-1])),
    ("i0", (signed,)),
    ("i1", (signed,)),
    ("i0e", (signed,)),
    ("i1e", (signed,)),
    ("j0", (signed,)),
    ("j1", (signed,)),
    ("y0", (positive,)),
    ("y1", (positive,)),
]


@pytest.mark.parametrize("name, args", SPECIAL, ids=[s[0] for s in SPECIAL])
def test_special(name, args):
    f = getattr(ks, name)
    np.testing.assert_allclose(f(*args).numpy(), getattr(scipy.special, name)(*args), rtol=1e-12)
    check(f"special.{name}", f, *args)
    check_vmap(f"special.{name}", f, *[np.stack([a, a[::-1]]) for a in args])


ORDERED = [("polygamma", 2, positive), ("iv", 1.5, positive), ("ive", 2.0, signed),
           ("jv", 1.0, signed), ("jn", 2, signed), ("yv", 0.5, positive), ("yn", 1, positive),
           ("gammainc", 2.5, positive), ("gammaincc", 1.5, positive), ("stdtr", 3.0, signed),
           ("multigammaln", 3, positive + 2)]  # fmt: skip


@pytest.mark.parametrize("name, order, x", ORDERED, ids=[o[0] for o in ORDERED])
def test_special_with_order(name, order, x):
    f = getattr(ks, name)
    expected = getattr(scipy.special, name)(order, x) if name != "multigammaln" else (
        scipy.special.multigammaln(x, order)
    )
    call = (lambda v: f(v, order)) if name == "multigammaln" else (lambda v: f(order, v))
    np.testing.assert_allclose(call(x).numpy(), expected, rtol=1e-11)
    check(f"special.{name}", call, x)
    check_vmap(f"special.{name}", call, np.stack([x, x[::-1]]))


def test_derivative_in_an_order_parameter_raises():
    with pytest.raises(NotImplementedError, match="order"):
        kenaz.grad(lambda v: ks.iv(v, 1.0))(1.5)
    with pytest.raises(NotImplementedError, match="betainc with respect to a"):
        kenaz.grad(lambda a: ks.betainc(a, 2.0, 0.5))(1.5)


@pytest.mark.parametrize("name", ["gammainc", "gammaincc"])
def test_incomplete_gamma_in_its_shape(name):
    """Derivatives in the shape ``a`` (a series of digammas), against finite differences
    of SciPy's values and to second order, also at x = 0 and for large x."""
    a = np.array([0.5, 1.5, 2.5, 7.0, 3.0])
    x = np.array([0.3, 1.0, 4.0, 40.0, 0.0])
    f = getattr(ks, name)
    step = 1e-6
    expected = (getattr(scipy.special, name)(a + step, x)
                - getattr(scipy.special, name)(a - step, x)) / (2 * step)  # fmt: skip
    _, tangent = kenaz.jvp(lambda p: f(p, x), (a,), (np.ones(5),))
    np.testing.assert_allclose(tangent.numpy(), expected, atol=1e-8)
    check(f"special.{name}", f, a[:4], x[:4])
    check(f"special.{name}", f, a[:4].astype(np.float32), x[:4].astype(np.float32), order=1)
    check_vmap(f"special.{name}", f, np.stack([a, a + 1]), x, in_axes=(0, None))


def test_gamma_and_chi2_cdfs_in_their_shapes():
    x = np.array([0.5, 1.5, 4.0])
    for shape_parameter in (0.7, 2.5):
        check("stats.gamma.cdf", lambda s: kst.gamma.cdf(x, s, 0.1, 1.5), shape_parameter)
        check("stats.chi2.cdf", lambda df: kst.chi2.cdf(x, df), shape_parameter * 2)
        check("stats.chi2.logcdf", lambda df: kst.chi2.logcdf(x, df), shape_parameter * 2)
    grad = kenaz.grad(lambda df: kst.chi2.cdf(3.0, df))(4.0)
    step = 1e-6
    expected = (scipy.stats.chi2.cdf(3.0, 4.0 + step) - scipy.stats.chi2.cdf(3.0, 4.0 - step)) / (
        2 * step
    )
    np.testing.assert_allclose(float(grad), expected, rtol=1e-7)


@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1)])
def test_logsumexp_softmax(axis):
    x = rng.standard_normal((3, 4))
    b = rng.uniform(0.5, 1.5, (3, 4))
    np.testing.assert_allclose(
        ks.logsumexp(x, axis=axis).numpy(), scipy.special.logsumexp(x, axis=axis)
    )
    np.testing.assert_allclose(
        ks.logsumexp(x, axis=axis, b=b, keepdims=True).numpy(),
        scipy.special.logsumexp(x, axis=axis, b=b, keepdims=True),
    )
    check("special.logsumexp", lambda v, w: ks.logsumexp(v, axis=axis, b=w), x, b)
    if axis is not None and axis != (0, 1):
        np.testing.assert_allclose(
            ks.softmax(x, axis=axis).numpy(), scipy.special.softmax(x, axis=axis)
        )
        np.testing.assert_allclose(
            ks.log_softmax(x, axis=axis).numpy(), scipy.special.log_softmax(x, axis=axis)
        )
        check("special.softmax", lambda v: ks.softmax(v, axis=axis), x)
        check("special.log_softmax", lambda v: ks.log_softmax(v, axis=axis), x)
    check_vmap("special.logsumexp", lambda v: ks.logsumexp(v, axis=0), x)
    check_vmap("special.softmax", lambda v: ks.softmax(v, axis=0), x)
    check_vmap("special.log_softmax", lambda v: ks.log_softmax(v, axis=0), x)


def test_logsumexp_return_sign_and_large_values():
    x = np.array([1000.0, 1000.0, -5.0])
    b = np.array([1.0, -2.0, 1.0])
    out, sign = ks.logsumexp(x, b=b, return_sign=True)
    expected, expected_sign = scipy.special.logsumexp(x, b=b, return_sign=True)
    np.testing.assert_allclose(out.numpy(), expected)
    assert float(sign) == expected_sign
    check("special.logsumexp", lambda v: ks.logsumexp(v, b=b, return_sign=True)[0], x)
    g = kenaz.grad(ks.logsumexp)(np.array([1000.0, 1000.0]))
    np.testing.assert_allclose(g.numpy(), [0.5, 0.5])


# -- distributions -----------------------------------------------------------------------------
x4 = rng.uniform(0.2, 2.0, 4)
DISTRIBUTIONS = [
    ("norm", "logpdf", (signed, 0.3, 1.5)),
    ("norm", "pdf", (signed, 0.3, 1.5)),
    ("norm", "cdf", (signed, 0.3, 1.5)),
    ("norm", "logcdf", (signed * 4, 0.3, 1.5)),
    ("norm", "sf", (signed, 0.3, 1.5)),
    ("norm", "logsf", (signed, 0.3, 1.5)),
    ("norm", "ppf", (unit, 0.3, 1.5)),
    ("t", "logpdf", (signed, 3.5, 0.2, 1.3)),
    ("t", "pdf", (signed, 3.5, 0.2, 1.3)),
    ("t", "cdf", (signed, 3.5, 0.2, 1.3)),
    ("t", "logcdf", (signed, 3.5, 0.2, 1.3)),
    ("gamma", "logpdf", (x4, 2.5, 0.1, 1.5)),
    ("gamma", "pdf", (x4, 2.5, 0.1, 1.5)),
    ("gamma", "cdf", (x4, 2.5, 0.1, 1.5)),
    ("gamma", "logcdf", (x4, 2.5, 0.1, 1.5)),
    ("chi2", "logpdf", (x4, 3.0)),
    ("chi2", "pdf", (x4, 3.0)),
    ("chi2", "cdf", (x4, 3.0)),
    ("chi2", "logcdf", (x4, 3.0)),
    ("beta", "logpdf", (unit, 2.5, 1.5)),
    ("beta", "pdf", (unit, 2.5, 1.5)),
    ("beta", "cdf", (unit, 2.5, 1.5)),
    ("beta", "logcdf", (unit, 2.5, 1.5)),
]


@pytest.mark.parametrize(
    "dist, method, args", DISTRIBUTIONS, ids=[f"{d}.{m}" for d, m, _ in DISTRIBUTIONS]
)
def test_distributions(dist, method, args):
    ours = getattr(getattr(kst, dist), method)
    np.testing.assert_allclose(
        ours(*args).numpy(), getattr(getattr(scipy.stats, dist), method)(*args), rtol=1e-10
    )
    x, rest = args[0], args[1:]
    check(f"stats.{dist}.{method}", lambda v: ours(v, *rest), x)
    check_vmap(f"stats.{dist}.{method}", lambda v: ours(v, *rest), np.stack([x, x[::-1]]))
    if dist in ("norm", "t", "gamma") and method.endswith("pdf"):  # shape/loc/scale too
        params = [np.asarray(p, dtype=float) for p in rest]
        check(f"stats.{dist}.{method}", lambda *p: ours(x, *p), *params, order=1)


def test_poisson():
    k = np.array([0, 1, 3, 7])
    mu = np.array([0.5, 2.0, 3.0, 6.5])
    for method in ("logpmf", "pmf", "cdf", "logcdf"):
        ours = getattr(kst.poisson, method)
        np.testing.assert_allclose(
            ours(k, mu).numpy(), getattr(scipy.stats.poisson, method)(k, mu), rtol=1e-10
        )
        check(f"stats.poisson.{method}", lambda m, f=ours: f(k, m), mu)
        check_vmap(f"stats.poisson.{method}", lambda m, f=ours: f(k, m), np.stack([mu, mu + 1]))
    assert float(kst.poisson.logpmf(1.5, 2.0)) == -np.inf


def test_dirichlet_and_multivariate_normal():
    alpha = np.array([1.5, 2.0, 3.0])
    x = np.array([0.2, 0.3, 0.5])
    np.testing.assert_allclose(
        float(kst.dirichlet.logpdf(x, alpha)), scipy.stats.dirichlet.logpdf(x, alpha)
    )
    check("stats.dirichlet.logpdf", kst.dirichlet.logpdf, x, alpha)
    check("stats.dirichlet.pdf", kst.dirichlet.pdf, x, alpha, order=1)
    check_vmap("stats.dirichlet.logpdf", kst.dirichlet.logpdf, np.stack([x, x[::-1]]), alpha,
               in_axes=(0, None))  # fmt: skip

    a = rng.standard_normal((3, 3))
    cov = a @ a.T + np.eye(3)
    mean = rng.standard_normal(3)
    points = rng.standard_normal((5, 3))
    np.testing.assert_allclose(
        kst.multivariate_normal.logpdf(points, mean, cov).numpy(),
        scipy.stats.multivariate_normal.logpdf(points, mean, cov),
    )
    np.testing.assert_allclose(
        float(kst.multivariate_normal.entropy(mean, cov)),
        scipy.stats.multivariate_normal.entropy(mean, cov),
    )
    np.testing.assert_allclose(
        kst.multivariate_normal.pdf(points, mean, 2.0).numpy(),
        scipy.stats.multivariate_normal.pdf(points, mean, 2.0),
    )

    def logpdf(p, m, factor):
        return kst.multivariate_normal.logpdf(p, m, factor @ factor.T + np.eye(3))

    check("stats.multivariate_normal.logpdf", logpdf, points, mean, a)
    check("stats.multivariate_normal.pdf", lambda p: kst.multivariate_normal.pdf(p, mean, cov),
          points[0], order=1)  # fmt: skip
    check_vmap("stats.multivariate_normal.logpdf", logpdf, points, mean, a, in_axes=(0, None, None))


# -- linalg ----------------------------------------------------------------------------------------
def test_solve_triangular_and_cholesky_solves():
    a = rng.standard_normal((3, 3)) + 3 * np.eye(3)
    b = rng.standard_normal((3, 2))
    for lower in (True, False):
        for trans in (0, 1, 2, "T"):
            for unit_diagonal in (False, True):
                expected = scipy.linalg.solve_triangular(
                    a, b, trans=trans, lower=lower, unit_diagonal=unit_diagonal
                )
                ours = ksl.solve_triangular(
                    a, b, trans=trans, lower=lower, unit_diagonal=unit_diagonal
                )
                np.testing.assert_allclose(ours.numpy(), expected)
    check("scipy.linalg.solve_triangular",
          lambda m, v: ksl.solve_triangular(m, v, lower=True, trans=1), a, b)  # fmt: skip
    check("scipy.linalg.solve_triangular", lambda m, v: ksl.solve_triangular(m, v), a, b[:, 0])
    spd = a @ a.T + np.eye(3)
    for lower in (True, False):
        factor = ksl.cho_factor(spd, lower=lower)
        np.testing.assert_allclose(ksl.cho_solve(factor, b).numpy(), np.linalg.solve(spd, b))
    np.testing.assert_allclose(ksl.cholesky(spd).numpy(), scipy.linalg.cholesky(spd))

    def cho(m, v):
        return ksl.cho_solve(ksl.cho_factor(m @ m.T + np.eye(3)), v)

    check("scipy.linalg.cho_solve", cho, a, b)
    check_vmap("scipy.linalg.solve_triangular", lambda m, v: ksl.solve_triangular(m, v),
               np.stack([a, a.T]), b, in_axes=(0, None))  # fmt: skip
    check_vmap("scipy.linalg.cho_solve", cho, np.stack([a, a.T]), b, in_axes=(0, None))


def test_expm_sqrtm():
    a = rng.standard_normal((3, 3))
    for scale in (0.1, 1.0, 8.0):
        np.testing.assert_allclose(
            ksl.expm(scale * a).numpy(), scipy.linalg.expm(scale * a), rtol=1e-11
        )
    check("scipy.linalg.expm", ksl.expm, a)
    check("scipy.linalg.expm", ksl.expm, 6 * a, order=1, rtol=1e-4)
    spd = a @ a.T + np.eye(3)
    np.testing.assert_allclose(ksl.sqrtm(spd).numpy(), scipy.linalg.sqrtm(spd), rtol=1e-10)
    check("scipy.linalg.sqrtm", ksl.sqrtm, spd)
    check("scipy.linalg.sqrtm", ksl.sqrtm, a + 4 * np.eye(3), order=1)
    check_vmap("scipy.linalg.sqrtm", ksl.sqrtm, np.stack([spd, spd + np.eye(3)]))
    # The number of squarings depends on the values: vmap needs method="loop".
    with pytest.raises(TypeError, match="loop"):
        kenaz.vmap(ksl.expm)(np.stack([a, 2 * a]))
    looped = kenaz.vmap(ksl.expm, method="loop")(np.stack([a, 2 * a]))
    np.testing.assert_allclose(looped.numpy()[1], scipy.linalg.expm(2 * a), rtol=1e-11)


def test_float32_is_preserved():
    v = rng.uniform(0.2, 0.8, 4).astype(np.float32)
    functions = [
        lambda x: kst.norm.logpdf(x, 0.0, 1.0), lambda x: kst.t.cdf(x, 3.0),
        lambda x: kst.gamma.logpdf(x, 2.0), lambda x: kst.chi2.cdf(x, 3),
        lambda x: kst.beta.logpdf(x, 2.0, 3.0), lambda x: kst.poisson.logpmf(3, x),
        ks.gammaln, ks.digamma, ks.erfinv, ks.logit, ks.i0, ks.j1, ks.softmax, ks.logsumexp,
        lambda x: ksl.expm(x[:2, None] * x[None, :2]),
    ]  # fmt: skip
    for f in functions:
        assert f(v).dtype == np.float32
        assert kenaz.grad(lambda x, f=f: f(x).sum())(v).dtype == np.float32


def test_multivariate_normal_allow_singular():
    factor = rng.standard_normal((3, 2))  # a rank-2 covariance in 3 dimensions
    cov, mean = factor @ factor.T, rng.standard_normal(3)
    points = mean + rng.standard_normal((4, 2)) @ factor.T  # on its support
    for x in (points, points + np.array([1.0, 0.0, 0.0])):  # on and off the support
        np.testing.assert_allclose(
            kst.multivariate_normal.logpdf(x, mean, cov, allow_singular=True).numpy(),
            scipy.stats.multivariate_normal.logpdf(x, mean, cov, allow_singular=True),
        )
    full = cov + np.eye(3)
    np.testing.assert_allclose(
        kst.multivariate_normal.logpdf(points, mean, full, allow_singular=True).numpy(),
        scipy.stats.multivariate_normal.logpdf(points, mean, full),
    )

    def on_support(f, z, m):  # the rank stays 2 under every perturbation of f
        return kst.multivariate_normal.logpdf(m + z @ f.T, m, f @ f.T, allow_singular=True)

    check("stats.multivariate_normal.logpdf", on_support, factor, rng.standard_normal((4, 2)), mean)


def _scipy_namespaces():
    import kenaz.scipy.signal as kss

    found = [ksl, ks, kss] + [getattr(kst, name) for name in kst.__all__]
    return {module.__name__: module for module in found}


@pytest.mark.parametrize("namespace", sorted(_scipy_namespaces()))
def test_each_public_function_is_finished_where_it_is_defined(namespace):
    """No pass rewrites a name after its module defined it: the namespace's function is
    the defining module's own object, and it accepts lists of tensors (the retry of
    kenaz.convert.accepts_nested_lists) unless it is a primitive."""
    import importlib
    import inspect

    module = _scipy_namespaces()[namespace]
    for name in module.__all__:
        f = getattr(module, name)
        inner = getattr(f, "__wrapped__", f)  # a scipy.special ufunc's keywords wrapper
        if isinstance(inner, kenaz.Op):
            continue
        assert getattr(f, "__kenaz_lists__", False) or getattr(inner, "__kenaz_lists__", False), (
            f"{namespace}.{name}"
        )
        defined_in = importlib.import_module(inspect.unwrap(f).__module__)
        if defined_in.__name__.startswith("kenaz.scipy"):
            assert getattr(defined_in, name) is f, f"{namespace}.{name} was rewritten"


# -- ufunc keywords: out positionally, where= as kenaz.numpy's ufuncs -------------------
def test_special_out_positionally_and_where_needs_out():
    x = np.array([0.5, -1.0, 2.0])
    out = np.zeros(3)
    assert ks.expit(x, out) is out
    np.testing.assert_allclose(out, scipy.special.expit(x), rtol=1e-12)
    kept = kenaz.numpy.full(3, 7.0)
    ks.xlogy(x, np.abs(x) + 1, kept, where=x > 0)
    expected = np.where(x > 0, scipy.special.xlogy(x, np.abs(x) + 1), 7)
    np.testing.assert_allclose(kept.numpy(), expected)
    with pytest.raises(TypeError, match="gammaln: where= needs out="):
        ks.gammaln(x, where=x > 0)  # SciPy leaves those entries uninitialized: no silent zeros
    with pytest.raises(TypeError, match="expit: cannot specify 'out' as both"):
        ks.expit(x, np.zeros(3), out=np.zeros(3))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_special_where_with_out_is_differentiable(dtype):
    x = np.array([0.5, -1.0, 2.0], dtype)

    def f(x):
        out = kenaz.numpy.ones(3, dtype=dtype)
        ks.gammaln(x, out=out, where=x > 0)  # gammaln(-1) is a pole: excluded, derivative 0
        return out

    g = kenaz.grad(lambda x: kenaz.numpy.sum(f(x)))(x)
    assert g.dtype == dtype
    expected = np.where(x > 0, scipy.special.digamma(np.abs(x)), 0.0)
    np.testing.assert_allclose(g.numpy(), expected, rtol=1e-5 if dtype == np.float32 else 1e-12)


def test_special_functions_keep_float32():
    """float32 in, float32 out, also for the composites (ndtr divided by a NumPy float64
    scalar and gave float64; found by scripts/compare_with_jax.py)."""
    x = np.array([0.3, 1.2], np.float32)
    calls = {
        "ndtr": (x,), "multigammaln": (x + 2, 2), "logit": (x / 2,), "log_expit": (x,),
        "entr": (x,), "betaln": (x, x), "kl_div": (x, x + 1), "softmax": (x,),
        "logsumexp": (x,), "polygamma": (1, x), "gammaln": (x,), "erf": (x,),
    }  # fmt: skip
    for name, args in calls.items():
        f = getattr(ks, name)
        assert f(*args).dtype == np.float32, name
        index = 1 if name == "polygamma" else 0

        def total(v, f=f, args=args, index=index):
            return kenaz.numpy.sum(f(*args[:index], v, *args[index + 1 :]))

        assert kenaz.grad(total)(args[index]).dtype == np.float32, name
    np.testing.assert_allclose(ks.ndtr(x).numpy(), scipy.special.ndtr(x), rtol=1e-6)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_logsumexp_over_an_empty_axis_is_minus_inf(dtype):
    """An empty sum: log(0) = -inf, as SciPy (it raised: max has no identity); softmax
    and log_softmax of an empty array are empty (found by compare_with_jax)."""
    a = np.zeros((2, 0), dtype)
    with np.errstate(divide="ignore"):
        np.testing.assert_array_equal(ks.logsumexp(a, axis=1).numpy(), [-np.inf, -np.inf])
        assert ks.logsumexp(a, axis=1).dtype == dtype
        assert ks.logsumexp(a, axis=0).shape == (0,)
        assert ks.log_softmax(a, axis=1).shape == ks.softmax(a, axis=0).shape == (2, 0)
        g = kenaz.grad(lambda v: kenaz.numpy.sum(ks.logsumexp(v, axis=1)))(a)
    assert g.shape == (2, 0) and g.dtype == dtype


def test_composites_take_scipy_s_dtype_with_python_numbers():
    """rel_entr(1.5, x32) is float32 in SciPy; kenaz gave float64 (the Python number was
    made a float64 tensor first). yn truncates a float order, as SciPy's (it gave yv)."""
    x = np.array([0.5, 2.0], np.float32)
    for name in ("rel_entr", "kl_div", "betaln", "beta"):
        f = getattr(ks, name)
        for args in ((1.5, x), (x, x), (np.arange(1, 3), 2)):
            ours, theirs = f(*args), getattr(scipy.special, name)(*args)
            assert ours.dtype == theirs.dtype, (name, args)
            np.testing.assert_allclose(ours.numpy(), theirs, rtol=1e-6)
        assert kenaz.grad(lambda v, f=f: kenaz.numpy.sum(f(1.5, v)))(x).dtype == np.float32
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SciPy warns that it truncates the order
        np.testing.assert_allclose(ks.yn(1.5, x).numpy(), scipy.special.yn(1.5, x), rtol=1e-6)
