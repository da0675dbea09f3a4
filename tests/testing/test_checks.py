"""kenaz.testing: check_grads and check_op pass correct rules and catch wrong ones by name."""

from __future__ import annotations

import numpy as np
import pytest

import kenaz.numpy as knp
import kenaz.testing
import kenaz.testing.batching
from kenaz import Op
from kenaz.ops.elementwise import cos, sin, stop_gradient
from kenaz.testing import check_grads, check_op, default_tolerance, numerical_jvp

X = np.array([0.3, -1.2, 2.0])


def _sine(jvp=None, vjp=None, impl=np.sin) -> Op:
    """A sine op with replaceable rules."""
    return Op(
        "test_sin",
        impl,
        jvp=[jvp or (lambda t, ans, x: t * cos(x))],
        vjp=[vjp or (lambda ans, x: lambda g: g * cos(x))],
    )


# -- correct rules pass ------------------------------------------------------------------------
def test_correct_op_passes_at_both_precisions():
    for dtype in (np.float64, np.float32):
        check_op(_sine(), (X.astype(dtype),), order=2, batching=False)


def test_check_grads_accepts_pytrees_and_integer_arguments():
    def f(params, power):
        return {"out": knp.sum(params["w"] ** power) * params["b"], "twice": [params["b"] * 2]}

    check_grads(f, ({"w": X, "b": np.array(1.5)}, 3))


@pytest.mark.parametrize("modes", [("fwd",), ("rev",), ("fwd", "rev")])
def test_check_grads_modes(modes):
    check_grads(lambda x: knp.exp(x) * x, (X,), modes=modes, order=3)


# -- wrong rules are caught, and named ---------------------------------------------------------
def test_wrong_jvp_rule():
    wrong = _sine(jvp=lambda t, ans, x: t * sin(x))
    with pytest.raises(AssertionError, match=r"check_op\(test_sin\).*jvp rule differs.*max error"):
        check_op(wrong, (X,), batching=False)


def test_wrong_vjp_rule():
    wrong = _sine(vjp=lambda ans, x: lambda g: 2 * g * cos(x))
    with pytest.raises(AssertionError, match="vjp rule is not the transpose of the jvp rule"):
        check_op(wrong, (X,), batching=False)


def test_wrong_second_derivative_is_caught_at_order_2():
    # First derivatives are right, but the rule hides its own derivative.
    frozen = _sine(
        jvp=lambda t, ans, x: t * stop_gradient(cos(x)),
        vjp=lambda ans, x: lambda g: g * stop_gradient(cos(x)),
    )
    check_op(frozen, (X,), order=1, batching=False)
    with pytest.raises(AssertionError, match="order 2"):
        check_op(frozen, (X,), order=2, batching=False)
    check_grads(frozen, (X,), order=1)
    with pytest.raises(AssertionError, match=r"(fwd|rev) of (fwd|rev), order 2"):
        check_grads(frozen, (X,), order=2)


def test_check_grads_names_the_mode_and_order():
    wrong = _sine(vjp=lambda ans, x: lambda g: -g * cos(x))
    check_grads(wrong, (X,), modes=("fwd",), order=1)
    with pytest.raises(AssertionError, match=r"check_grads: rev, order 1: vjp disagrees"):
        check_grads(wrong, (X,), modes=("rev",), order=1)


def test_impl_modifying_its_input():
    def sine_in_place(x):
        np.sin(x, out=x)
        return x.copy()

    with pytest.raises(AssertionError, match="primal computation modified its input"):
        check_op(_sine(impl=sine_in_place), (X.copy(),), batching=False)


def test_rule_modifying_the_cotangent():
    def scale_in_place(g, x):
        g.numpy()[...] *= 1.0  # writes (even the same values) are allowed; a change is not
        g.numpy()[...] += 1.0
        return g * cos(x)

    wrong = _sine(vjp=lambda ans, x: lambda g: scale_in_place(g, x))
    with pytest.raises(AssertionError, match="vjp rule modified its input or cotangent"):
        check_op(wrong, (X,), batching=False)


def test_tangent_of_the_wrong_dtype():
    upcast = _sine(jvp=lambda t, ans, x: t.astype(np.float64) * cos(x).astype(np.float64))
    with pytest.raises(AssertionError, match="tangent does not match the output.*float64.*float32"):
        check_op(upcast, (X.astype(np.float32),), batching=False)


def test_finite_differences_off_checks_only_the_rules_consistency():
    inconsistent_with_fd = _sine(
        jvp=lambda t, ans, x: 2 * t * cos(x), vjp=lambda ans, x: lambda g: 2 * g * cos(x)
    )
    check_op(inconsistent_with_fd, (X,), finite_differences=False, batching=False)


# -- tolerances and finite differences ---------------------------------------------------------
def test_default_tolerances_follow_the_dtype():
    assert default_tolerance(np.float32).rtol > default_tolerance(np.float64).rtol
    assert default_tolerance(np.complex64) == default_tolerance(np.float32)


def test_explicit_tolerance_can_loosen_the_check():
    slightly_wrong = _sine(
        jvp=lambda t, ans, x: t * cos(x) * 1.01, vjp=lambda ans, x: lambda g: g * cos(x) * 1.01
    )
    with pytest.raises(AssertionError):
        check_op(slightly_wrong, (X,), batching=False)
    check_op(slightly_wrong, (X,), rtol=0.05, batching=False)


def test_numerical_jvp_is_accurate():
    estimate = numerical_jvp(knp.exp, (X,), (np.ones(3),), eps=1e-5)
    np.testing.assert_allclose(estimate, np.exp(X), rtol=1e-9)


def test_numerical_jvp_of_integer_outputs_is_zero():
    estimate = numerical_jvp(lambda x: knp.argmax(x), (X,), (np.ones(3),), eps=1e-5)
    assert float(estimate) == 0.0


@pytest.mark.parametrize(("modes", "order"), [(("sideways",), 1), ((), 1), (("fwd",), 0)])
def test_bad_arguments(modes, order):
    with pytest.raises(ValueError, match="check_grads"):
        check_grads(knp.sin, (X,), modes=modes, order=order)


# -- the batching hook ---------------------------------------------------------------------------
def test_check_op_runs_the_batching_check(monkeypatch):
    calls = []
    monkeypatch.setattr(
        kenaz.testing.batching, "check_batching", lambda *args, **kwargs: calls.append(args)
    )
    check_op(_sine(), (X,))
    check_op(_sine(), (X,), batching=False)
    assert len(calls) == 1


@pytest.mark.parametrize(
    "f",
    [lambda z: knp.exp(z) * z, lambda z: knp.sum(knp.real(z * knp.conj(z))), knp.abs],
    ids=["holomorphic", "real-valued", "abs"],
)
def test_check_grads_of_complex_functions(f):
    check_grads(f, (np.array([0.3 + 0.2j, -1.0 + 0.5j]),))


# -- ops with one rule: the other is its transpose (issue 27) ----------------------------------
def _sine_with_one_rule(jvp=None, vjp=None) -> Op:
    return Op(
        "test_sin", np.sin, jvp=None if jvp is None else [jvp], vjp=None if vjp is None else [vjp]
    )


RIGHT_JVP = lambda t, ans, x: t * cos(x)
RIGHT_VJP = lambda ans, x: lambda g: g * cos(x)


@pytest.mark.parametrize("rule", ["jvp", "vjp"])
def test_an_op_with_one_rule_passes_to_second_order(rule):
    op = _sine_with_one_rule(**{rule: RIGHT_JVP if rule == "jvp" else RIGHT_VJP})
    for dtype in (np.float64, np.float32):
        check_op(op, (X.astype(dtype),), order=2, batching=False)
    for modes in [("fwd",), ("rev",)]:
        check_grads(op, (X,), modes=modes, order=2)


def test_a_wrong_vjp_only_rule_is_named():
    wrong = _sine_with_one_rule(vjp=lambda ans, x: lambda g: g * sin(x))
    with pytest.raises(AssertionError, match="jvp transposed from the vjp rule differs.*vjp rule"):
        check_op(wrong, (X,), batching=False)
    for modes in [("fwd",), ("rev",)]:
        with pytest.raises(AssertionError, match=r"check_grads: (fwd|rev), order 1"):
            check_grads(wrong, (X,), modes=modes, order=1)


def test_a_wrong_jvp_only_rule_is_named():
    wrong = _sine_with_one_rule(jvp=lambda t, ans, x: t * sin(x))
    with pytest.raises(AssertionError, match=r"check_op\(test_sin\).*jvp rule differs"):
        check_op(wrong, (X,), batching=False)
    with pytest.raises(AssertionError, match=r"check_grads: rev, order 1"):
        check_grads(wrong, (X,), modes=("rev",), order=1)


@pytest.mark.parametrize("rule", ["jvp", "vjp"])
def test_a_rule_that_is_not_linear_cannot_be_transposed_and_is_caught(rule):
    # Right at the cotangent (tangent) 1, wrong elsewhere: not linear, so not a rule.
    nonlinear = _sine_with_one_rule(
        jvp=(lambda t, ans, x: t * t * cos(x)) if rule == "jvp" else None,
        vjp=(lambda ans, x: lambda g: g * g * cos(x)) if rule == "vjp" else None,
    )
    with pytest.raises(AssertionError, match=r"check_op\(test_sin\)"):
        check_op(nonlinear, (X,), batching=False, finite_differences=False)


@pytest.mark.parametrize("rule", ["jvp", "vjp"])
def test_a_wrong_second_derivative_of_a_one_rule_op_is_caught_at_order_2(rule):
    frozen = _sine_with_one_rule(
        jvp=(lambda t, ans, x: t * stop_gradient(cos(x))) if rule == "jvp" else None,
        vjp=(lambda ans, x: lambda g: g * stop_gradient(cos(x))) if rule == "vjp" else None,
    )
    check_op(frozen, (X,), order=1, batching=False)
    with pytest.raises(AssertionError, match="order 2"):
        check_op(frozen, (X,), order=2, batching=False)
