"""Symbolic zeros: an unused output of a multiple-result op gets ``None``, never an array of zeros.

With arrays of zeros filled in, a rule multiplies them by its other terms,
and where those are infinite (eigenvector and singular-vector derivatives at
repeated values) ``0 * inf`` is NaN. The tests below show both sides: the
rules given ``None`` stay finite, and the same rules given zeros give NaN.
"""

from __future__ import annotations

import numpy as np
import pytest

import kenaz
import kenaz.numpy as knp
from kenaz import Op
from kenaz.numpy import linalg as la
from kenaz.ops import decompositions
from kenaz.reverse import transpose


def test_a_pullback_receives_none_for_unused_outputs():
    received = []

    def vjp_maker(ans, x):
        def pullback(cotangents):
            received.append(cotangents)
            g_sin, g_cos = cotangents
            total = knp.zeros_like(x)
            if g_sin is not None:
                total = total + g_sin * knp.cos(x)
            if g_cos is not None:
                total = total - g_cos * knp.sin(x)
            return total

        return pullback

    sincos = Op(
        "sincos",
        lambda x: (np.sin(x), np.cos(x)),
        jvp=[lambda t, ans, x: (t * ans[1], -t * ans[0])],
        vjp=[vjp_maker],
        multiple_results=True,
    )
    g = kenaz.grad(lambda x: sincos(x)[0])(0.5)
    assert float(g) == pytest.approx(np.cos(0.5))
    (g_sin, g_cos), = received
    assert g_sin is not None and g_cos is None  # not an array of zeros


def test_an_op_with_only_a_jvp_rule_is_transposed_with_symbolic_zeros():
    sincos = Op(
        "sincos",
        lambda x: (np.sin(x), np.cos(x)),
        jvp=[lambda t, ans, x: (t * ans[1], -t * ans[0])],
        multiple_results=True,
    )
    assert float(kenaz.grad(lambda x: sincos(x)[1])(0.5)) == pytest.approx(-np.sin(0.5))
    kenaz.testing.check_grads(lambda x: sincos(x)[0] * sincos(x)[1], (0.3,), order=2)


def test_eigenvalues_alone_at_repeated_eigenvalues_are_finite_and_zeros_would_give_nan():
    a = np.eye(3)  # every eigenvalue repeated: the eigenvector terms are infinite
    g = kenaz.grad(lambda x: knp.sum(la.eigh(x)[0]))(a)
    np.testing.assert_allclose(g.numpy(), np.eye(3), atol=1e-12)  # d trace / dA = I
    # The same rule, handed an array of zeros for the eigenvectors' cotangent: NaN.
    w, v = decompositions.eigh_op(a)
    pullback = decompositions.eigh_op.vjp[0]((w, v), kenaz.Tensor(a))
    with np.errstate(divide="ignore", invalid="ignore"):
        filled = pullback((knp.ones(3), knp.zeros((3, 3))))
    assert np.isnan(filled.numpy()).any()
    np.testing.assert_allclose(pullback((knp.ones(3), None)).numpy(), np.eye(3), atol=1e-12)


def test_singular_values_alone_at_repeated_values_are_finite_and_zeros_would_give_nan():
    a = np.eye(3)  # every singular value repeated
    g = kenaz.grad(lambda x: knp.sum(la.svd(x)[1]))(a)
    np.testing.assert_allclose(g.numpy(), np.eye(3), atol=1e-12)  # U V^T
    # svd's vjp is the transpose of its jvp rule; with zeros for U and V^T: NaN.
    ans = decompositions.svd_op(a)
    zero = kenaz.Tensor(np.zeros((3, 3)))

    def linear(t):
        return decompositions.svd_op.jvp[0](t, ans, kenaz.Tensor(a))

    g_s = knp.ones(3)
    with np.errstate(divide="ignore", invalid="ignore"):
        (filled,) = transpose(linear, [zero], (knp.zeros((3, 3)), g_s, knp.zeros((3, 3))))
    assert np.isnan(filled.numpy()).any()
    (symbolic,) = transpose(linear, [zero], (None, g_s, None))
    np.testing.assert_allclose(symbolic.numpy(), np.eye(3), atol=1e-12)


def test_custom_vjp_bwd_still_receives_arrays_for_unused_outputs():
    @kenaz.custom_vjp
    def pair(x):
        return x * 2.0, x * 3.0

    seen = []

    def bwd(residual, g):
        seen.append(g)
        return (2.0 * g[0] + 3.0 * g[1],)

    pair.defvjp(lambda x: (pair(x), None), bwd)
    assert float(kenaz.grad(lambda x: pair(x)[0])(1.0)) == 2.0
    (g_first, g_second), = seen
    assert isinstance(g_second, kenaz.Tensor) and float(g_second) == 0.0
