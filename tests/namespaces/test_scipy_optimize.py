"""kenaz.scipy.optimize.minimize: SciPy's optimizers with kenaz derivatives, on pytrees.

Each method is compared with SciPy on the same problem with finite-difference
derivatives: the same optimum, and fewer evaluations of the function.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

pytest.importorskip("scipy")
import scipy.optimize  # noqa: E402

import kenaz.numpy as knp  # noqa: E402
from kenaz import Tensor  # noqa: E402
from kenaz.scipy.optimize import minimize  # noqa: E402

X0 = np.array([1.3, 0.7, 0.8, 1.9, 1.2])  # SciPy tutorial's start


def rosenbrock_flat(x):
    """SciPy's Rosenbrock, written with kenaz.numpy so that it also runs on NumPy arrays."""
    return knp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def rosenbrock_tree(params):
    """The same function of a pytree: a dict holding a scalar and a tuple of arrays."""
    x = knp.concatenate([knp.reshape(params["head"], (1,)), params["rest"][0], params["rest"][1]])
    return rosenbrock_flat(x)


def as_tree(x):
    return {"head": np.float64(x[0]), "rest": (np.array(x[1:3]), np.array(x[3:]))}


def tree_to_vector(tree):
    return np.concatenate(
        [np.atleast_1d(np.asarray(tree["head"])), np.asarray(tree["rest"][0]),
         np.asarray(tree["rest"][1])]
    )  # fmt: skip


class Counted:
    """A function that counts its calls (kenaz's gradient and HVP calls run it too)."""

    def __init__(self, f):
        self.f, self.calls = f, 0

    def __call__(self, *args):
        self.calls += 1
        return self.f(*args)


def scipy_by_finite_differences(method, second_order=False):
    """SciPy on the flat problem with finite-difference derivatives; returns (result, calls).

    The gradient is SciPy's forward differences (``approx_fprime``: n + 1 calls); a
    second-order method gets Hessian-vector products by SciPy's differences of that
    gradient (``hess="2-point"``), as a user without automatic derivatives would.
    """
    fun = Counted(lambda x: float(rosenbrock_flat(x)))
    kwargs = {}
    if second_order:
        kwargs["jac"] = lambda x: scipy.optimize.approx_fprime(x, fun)
        kwargs["hess"] = "2-point"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # e.g. "delta_grad == 0.0" from finite differences
        result = scipy.optimize.minimize(fun, X0, method=method, **kwargs)
    return result, fun.calls


def test_bfgs_on_a_pytree_finds_scipys_optimum_with_fewer_evaluations():
    counted = Counted(rosenbrock_tree)
    ours = minimize(counted, as_tree(X0), method="BFGS")
    theirs, their_calls = scipy_by_finite_differences("BFGS")
    assert ours.success
    np.testing.assert_allclose(tree_to_vector(ours.x), np.ones(5), atol=1e-5)
    np.testing.assert_allclose(theirs.x, np.ones(5), atol=1e-4)
    assert counted.calls == ours.nfev  # one call of fun per evaluation (value and gradient)
    print(f"BFGS: kenaz {ours.nfev} calls of fun; finite differences {their_calls}")
    # finite differences evaluate the function n + 1 times per gradient
    assert ours.nfev < their_calls / 3, (ours.nfev, their_calls)
    assert ours.fun < theirs.fun


def test_the_result_is_shaped_like_x0():
    ours = minimize(rosenbrock_tree, as_tree(X0), method="L-BFGS-B")
    assert set(ours.x) == {"head", "rest"}
    assert isinstance(ours.x["head"], Tensor) and ours.x["head"].shape == ()
    assert [leaf.shape for leaf in ours.x["rest"]] == [(2,), (2,)]
    assert isinstance(ours.x["rest"], tuple)
    assert ours.jac["rest"][1].shape == (2,)
    np.testing.assert_allclose(tree_to_vector(ours.jac), 0.0, atol=1e-3)
    assert isinstance(ours.fun, float)


@pytest.mark.parametrize("method", ["Newton-CG", "trust-ncg", "trust-krylov", "trust-constr"])
def test_hessian_vector_products_for_the_methods_that_take_them(method):
    counted = Counted(rosenbrock_tree)
    ours = minimize(counted, as_tree(X0), method=method)
    theirs, their_calls = scipy_by_finite_differences(method, second_order=True)
    # (Newton-CG's default xtol=1e-5 on the step stops it within 3e-4 of the optimum)
    np.testing.assert_allclose(tree_to_vector(ours.x), np.ones(5), atol=1e-3)
    np.testing.assert_allclose(theirs.x, np.ones(5), atol=1e-3)
    assert ours.nhev > 0
    # every call of fun counts: value and gradient, and each Hessian-vector product
    print(f"{method}: kenaz {counted.calls} calls of fun (nfev {ours.nfev}, nhev {ours.nhev});"
          f" finite differences {their_calls}")  # fmt: skip
    assert counted.calls < their_calls / 3, (counted.calls, their_calls)


@pytest.mark.parametrize("method", ["BFGS", "Newton-CG", "trust-krylov", "trust-exact"])
def test_same_path_as_scipy_with_its_handwritten_rosenbrock_derivatives(method):
    """SciPy ships Rosenbrock's exact derivatives: kenaz's must drive each method the same way."""
    ours = minimize(rosenbrock_tree, as_tree(X0), method=method)
    derivatives = {"jac": scipy.optimize.rosen_der}
    if method in ("Newton-CG", "trust-krylov"):
        derivatives["hessp"] = scipy.optimize.rosen_hess_prod
    elif method == "trust-exact":
        derivatives["hess"] = scipy.optimize.rosen_hess
    exact = scipy.optimize.minimize(scipy.optimize.rosen, X0, method=method, **derivatives)
    np.testing.assert_allclose(tree_to_vector(ours.x), exact.x, atol=1e-8)
    assert (ours.nit, ours.nfev) == (exact.nit, exact.nfev)


@pytest.mark.parametrize("method", ["dogleg", "trust-exact"])
def test_full_hessian_for_the_methods_that_need_it(method):
    # dogleg needs a positive definite Hessian: a convex problem (least squares plus x**4)
    a = np.array([[2.0, 1.0, 0.0], [0.5, 3.0, 1.0], [0.0, 1.0, 4.0], [1.0, 1.0, 1.0]])
    b = np.array([1.0, -2.0, 3.0, 0.5])

    def loss(p):
        x = knp.concatenate([p[0], p[1]])
        return knp.sum((a @ x - b) ** 2) + 0.1 * knp.sum(x**4)

    ours = minimize(loss, (np.zeros(2), np.zeros(1)), method=method)
    assert ours.success and ours.nhev > 0
    x = np.concatenate([np.asarray(leaf) for leaf in ours.x])
    gradient = 2 * a.T @ (a @ x - b) + 0.4 * x**3  # the optimum's gradient, by hand
    np.testing.assert_allclose(gradient, 0.0, atol=1e-6)
    np.testing.assert_allclose(np.concatenate([np.asarray(g) for g in ours.jac]), gradient,
                               atol=1e-12)  # fmt: skip


def test_full_hessian_on_request_agrees_with_hvp():
    by_hvp = minimize(rosenbrock_tree, as_tree(X0), method="Newton-CG")
    by_matrix = minimize(rosenbrock_tree, as_tree(X0), method="Newton-CG", hessian="full")
    np.testing.assert_allclose(tree_to_vector(by_hvp.x), tree_to_vector(by_matrix.x), atol=1e-6)
    assert by_hvp.nit == by_matrix.nit


def test_without_second_derivatives_scipy_approximates():
    ours = minimize(rosenbrock_tree, as_tree(X0), method="trust-constr", hessian=None)
    np.testing.assert_allclose(tree_to_vector(ours.x), np.ones(5), atol=1e-3)
    assert ours.nhev == 0


def test_gradient_free_methods_get_no_gradient_and_warn_nothing():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ours = minimize(lambda p: knp.sum((p - 3.0) ** 2), np.zeros(2), method="Nelder-Mead")
    np.testing.assert_allclose(np.asarray(ours.x), [3.0, 3.0], atol=1e-3)


def test_bounds_as_pytrees_with_l_bfgs_b():
    def loss(p):
        return knp.sum((p["w"] - 3.0) ** 2) + (p["b"] + 1.0) ** 2

    x0 = {"w": np.zeros(3), "b": 0.0}
    lower = {"w": np.array([-np.inf, -np.inf, 4.0]), "b": 0.0}
    upper = {"w": np.array([2.5, 2.5, np.inf]), "b": None}  # None: unbounded
    ours = minimize(loss, x0, bounds=(lower, upper))  # the default method is then L-BFGS-B
    np.testing.assert_allclose(np.asarray(ours.x["w"]), [2.5, 2.5, 4.0], atol=1e-6)
    np.testing.assert_allclose(float(ours.x["b"]), 0.0, atol=1e-8)
    # a scalar bound applies to every entry
    ours = minimize(loss, x0, bounds=(None, 1.0))
    np.testing.assert_allclose(np.asarray(ours.x["w"]), [1.0, 1.0, 1.0], atol=1e-6)
    np.testing.assert_allclose(float(ours.x["b"]), -1.0, atol=1e-6)


def test_args_callback_and_float32_leaves():
    seen_dtypes, steps = set(), []

    def loss(p, target, scale):
        seen_dtypes.add(p["w"].dtype)
        return scale * knp.sum((p["w"] - target) ** 2)

    x0 = {"w": np.zeros(4, dtype=np.float32)}
    target = np.arange(4.0, dtype=np.float32)
    ours = minimize(loss, x0, args=(target, 2.0), method="BFGS",
                    callback=lambda p: steps.append(np.asarray(p["w"]).copy()))  # fmt: skip
    assert seen_dtypes == {np.dtype(np.float32)}
    assert ours.x["w"].dtype == np.float32
    np.testing.assert_allclose(np.asarray(ours.x["w"]), target, atol=1e-4)
    assert steps and steps[-1].shape == (4,)


def test_trust_constr_callback_sees_the_pytree():
    steps = []
    minimize(rosenbrock_tree, as_tree(X0), method="trust-constr",
             callback=lambda p: steps.append(p["rest"][1].shape))  # fmt: skip
    assert steps and set(steps) == {(2,)}


def test_clear_errors():
    with pytest.raises(TypeError, match="must return a scalar.*shape \\(2,\\)"):
        minimize(lambda p: p * 2, np.ones(2))
    with pytest.raises(TypeError, match="complex"):
        minimize(lambda p: knp.sum(knp.abs(p)), np.ones(2, dtype=complex))
    with pytest.raises(ValueError, match="hessian must be one of"):
        minimize(rosenbrock_flat, X0, hessian="exact")
    with pytest.raises(ValueError, match="no arrays"):
        minimize(lambda p: 0.0, {})
    with pytest.raises(ValueError, match="not shaped like x0"):
        minimize(rosenbrock_flat, X0, bounds=((0.0, 1.0), None))
