"""Either rule gives the other (issue 27).

An op with only a vjp rule gets its jvp by transposing its pullback (which is
linear in the cotangent); an op with only a jvp rule gets its vjp by
transposing the jvp rule. Both derived rules are performed outward like any
rule, so they are differentiable to any order. Checked here against finite
differences (``kenaz.testing.numerical_jvp``), independently of the rules.
"""

from __future__ import annotations

import numpy as np
import pytest

import kenaz
import kenaz.numpy as knp
from kenaz import Op
from kenaz.ops.batching import elementwise
from kenaz.testing import check_grads, numerical_jvp

# Each op written with one rule only: HIPS autograd's defvjp style, and the jvp style.
sexp_vjp_only = Op("sexp", np.exp, vjp=[lambda ans, x: lambda g: g * ans], batch=elementwise)
smul_vjp_only = Op(
    "smul",
    np.multiply,
    vjp=[lambda ans, x, y: lambda g: g * y, lambda ans, x, y: lambda g: g * x],
    batch=elementwise,
)
sexp_jvp_only = Op("sexp_jvp", np.exp, jvp=[lambda t, ans, x: t * ans], batch=elementwise)


def _sincos_vjp(ans, x):
    def pullback(cotangents):
        g_sin, g_cos = cotangents
        total = knp.zeros_like(x)
        if g_sin is not None:
            total = total + g_sin * knp.cos(x)
        if g_cos is not None:
            total = total - g_cos * knp.sin(x)
        return total

    return pullback


sincos_vjp_only = Op(
    "sincos",
    lambda x: (np.sin(x), np.cos(x)),
    vjp=[_sincos_vjp],
    batch=lambda op, args, axes: (op(*args), (axes[0], axes[0])),  # elementwise
    multiple_results=True,
)


def scalar_function(x):
    """A function of a vector built from the vjp-only ops, with a non-diagonal Hessian."""
    s, c = sincos_vjp_only(x)
    return knp.sum(sexp_vjp_only(x) * s) + smul_vjp_only(x[0], x[1]) * knp.sum(c)


X = np.array([0.3, -0.2, 0.7])
TOL = dict(rtol=1e-6, atol=1e-6)


def numerical_hessian(f, x, eps=1e-4):
    """Second derivatives by central differences of central differences (no kenaz rule)."""
    n = x.size
    hess = np.zeros((n, n))
    basis = np.eye(n)
    for i in range(n):
        for j in range(n):
            ei, ej = eps * basis[i], eps * basis[j]
            signs = ((1, 1), (1, -1), (-1, 1), (-1, -1))
            corners = [float(f(x + a * ei + b * ej)) for a, b in signs]
            hess[i, j] = (corners[0] - corners[1] - corners[2] + corners[3]) / (4 * eps**2)
    return hess


def test_jvp_of_a_vjp_only_op_equals_finite_differences():
    t = np.array([1.0, -2.0, 0.5])
    _, tangent = kenaz.jvp(scalar_function, (X,), (t,))
    expected = numerical_jvp(scalar_function, (X,), (t,), eps=1e-6)
    np.testing.assert_allclose(np.asarray(tangent), expected, **TOL)


def test_jacfwd_of_a_vjp_only_op_equals_jacrev_and_finite_differences():
    vector_function = lambda x: sexp_vjp_only(x) * smul_vjp_only(x, x[::-1])
    jac = np.asarray(kenaz.jacfwd(vector_function)(X))
    columns = [numerical_jvp(vector_function, (X,), (e,), eps=1e-6) for e in np.eye(3)]
    np.testing.assert_allclose(jac, np.stack(columns, axis=-1), **TOL)
    np.testing.assert_allclose(jac, np.asarray(kenaz.jacrev(vector_function)(X)), rtol=1e-13)


def test_hessian_of_vjp_only_ops_equals_finite_differences():
    hess = np.asarray(kenaz.hessian(scalar_function)(X))
    np.testing.assert_allclose(hess, numerical_hessian(scalar_function, X), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(hess, hess.T, rtol=1e-12)


def test_vmap_of_hessian_of_vjp_only_ops_equals_finite_differences():
    batch = np.stack([X, 2.0 * X, -X])
    hessians = np.asarray(kenaz.vmap(kenaz.hessian(scalar_function))(batch))
    for row, hess in zip(batch, hessians):
        np.testing.assert_allclose(
            hess, numerical_hessian(scalar_function, row), rtol=1e-5, atol=1e-5
        )


def test_linearize_of_a_vjp_only_op_equals_jvp():
    t = np.array([0.5, 1.0, -1.0])
    out, f_jvp = kenaz.linearize(scalar_function, X)
    _, expected = kenaz.jvp(scalar_function, (X,), (t,))
    np.testing.assert_allclose(float(f_jvp(t)), float(expected), rtol=1e-13)
    assert float(out) == pytest.approx(float(scalar_function(X)))


@pytest.mark.parametrize("modes", [("fwd",), ("rev",), ("fwd", "rev")])
def test_vjp_only_and_jvp_only_ops_to_third_order(modes):
    f = lambda x: knp.sum(sexp_vjp_only(x) * sexp_jvp_only(-x * x) * sincos_vjp_only(x)[0])
    check_grads(f, (X,), modes=modes, order=3)


def test_an_unused_output_of_a_vjp_only_op_gets_its_tangent():
    _, (t_sin, t_cos) = kenaz.jvp(sincos_vjp_only, (X,), (np.ones(3),))
    np.testing.assert_allclose(np.asarray(t_sin), np.cos(X), rtol=1e-14)
    np.testing.assert_allclose(np.asarray(t_cos), -np.sin(X), rtol=1e-14)


def test_hessian_stays_forward_over_reverse_when_both_rules_exist():
    """A jvp rule that is given is used (not the transposed pullback)."""
    calls = []

    def jvp_rule(t, ans, x):
        calls.append("jvp")
        return t * ans

    both = Op("both", np.exp, jvp=[jvp_rule], vjp=[lambda ans, x: lambda g: g * ans])
    hess = kenaz.hessian(lambda x: knp.sum(both(x)))(X)
    np.testing.assert_allclose(np.asarray(hess), np.diag(np.exp(X)), rtol=1e-14)
    assert calls


def test_an_op_with_neither_rule_names_the_op():
    bare = Op("bare", np.exp)
    with pytest.raises(NotImplementedError, match="'bare' has no jvp rule.*nor a vjp rule"):
        kenaz.jvp(bare, (1.0,), (1.0,))
    with pytest.raises(NotImplementedError, match="'bare' has no vjp rule.*nor a jvp rule"):
        kenaz.grad(bare)(1.0)
