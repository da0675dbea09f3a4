"""Forward mode: jvp and linearize; nesting with reverse mode, pytrees, errors."""

from __future__ import annotations

import numpy as np
import pytest

import kenaz
import kenaz.numpy as knp
from kenaz import grad, jvp, linearize, vjp
from kenaz.effects import current_handlers, current_scopes


def quadratic(x):
    return x**2 + 3 * x + 2


def test_classic_example_by_jvp():
    value, tangent = jvp(quadratic, (5.0,), (1.0,))
    assert (float(value), float(tangent)) == (42.0, 13.0)


def test_no_perturbation_confusion_jvp_of_jvp():
    def f(x):
        return jvp(lambda y: x * y, (x,), (1.0,))[1]

    assert float(jvp(f, (2.0,), (1.0,))[1]) == 1.0


def test_no_perturbation_confusion_grad_inside_jvp():
    def f(x):
        return grad(lambda y: x * y)(x)

    assert float(jvp(f, (2.0,), (1.0,))[1]) == 1.0


def test_no_perturbation_confusion_vjp_of_jvp():
    def f(x):
        return jvp(lambda y: x * y, (x,), (1.0,))[1]

    _, pullback = vjp(f, 2.0)
    assert float(pullback(1.0)[0]) == 1.0


def test_jvp_of_grad_is_the_second_derivative():
    _, second = jvp(grad(quadratic), (5.0,), (1.0,))
    assert float(second) == 2.0
    _, hvp = jvp(grad(lambda x: knp.sum(knp.sin(x))), (np.array([0.3, 0.7]),), (np.ones(2),))
    np.testing.assert_allclose(hvp, -np.sin([0.3, 0.7]))


def test_grad_of_jvp():
    g = grad(lambda x: jvp(knp.exp, (x,), (2.0,))[1])(0.5)
    assert float(g) == pytest.approx(2 * np.exp(0.5))


def test_four_nested_jvps_of_sin():
    def derivative(f):
        return lambda x: jvp(f, (x,), (1.0,))[1]

    fourth = derivative(derivative(derivative(derivative(knp.sin))))
    assert float(fourth(0.7)) == pytest.approx(np.sin(0.7))


def test_jvp_through_control_flow():
    def f(x):
        total = 0.0
        for k in range(3):
            if k % 2 == 0:
                total = total + x**k
        while total < 10:
            total = total * 2
        return total

    # x = 2: 1 + x**2 = 5, doubled once: 2 + 2 x**2, derivative 4 x = 8
    assert float(jvp(f, (2.0,), (1.0,))[1]) == 8.0


@pytest.mark.parametrize(
    "f",
    [
        knp.sin,
        lambda x: knp.sum(x**3),
        lambda x: (x * 2, knp.cumsum(x)),
        lambda x: x[::2] @ x[1::2],
    ],
    ids=["sin", "sum-cube", "tuple", "slices-matmul"],
)
def test_linearize_equals_jvp(f):
    x, t = np.array([0.2, -0.5, 1.5, 0.9]), np.array([1.0, -2.0, 0.5, 3.0])
    out, f_jvp = linearize(f, x)
    expected_out, expected_tangent = jvp(f, (x,), (t,))
    for a, b in zip(np.atleast_1d(out), np.atleast_1d(expected_out), strict=True):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b))
    tangent = f_jvp(t)
    for a, b in zip(np.atleast_1d(tangent), np.atleast_1d(expected_tangent), strict=True):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-13)
    np.testing.assert_allclose(np.asarray(f_jvp(2 * t)), 2 * np.asarray(tangent), rtol=1e-13)


def test_pytrees_in_and_out():
    primals = ({"a": 1.0, "b": [2.0, np.array([3.0, 4.0])]},)
    tangents = ({"a": 1.0, "b": [0.0, np.array([1.0, 0.0])]},)
    out, tangent = jvp(
        lambda p: {"sum": p["a"] * p["b"][0] + knp.sum(p["b"][1])}, primals, tangents
    )
    assert float(out["sum"]) == 9.0
    assert float(tangent["sum"]) == 2.0 + 1.0


def test_has_aux():
    out, tangent, aux = jvp(lambda x: (x * 3, "aux"), (1.0,), (1.0,), has_aux=True)
    assert (float(out), float(tangent), aux) == (3.0, 3.0, "aux")


def test_integer_primal_is_refused_unless_allow_int():
    with pytest.raises(TypeError, match=r"kenaz.jvp: argument 1 has dtype int64.*allow_int=True"):
        jvp(lambda x, n: x * n, (2.0, 3), (1.0, 0))
    out, tangent = jvp(lambda x, n: x * n, (2.0, 3), (1.0, 0), allow_int=True)
    assert (float(out), float(tangent)) == (6.0, 3.0)


def test_output_independent_of_input_has_zero_tangent():
    _, tangent = jvp(lambda x: knp.ones(3), (1.0,), (1.0,))
    np.testing.assert_array_equal(tangent, np.zeros(3))


def test_tangent_shape_must_match():
    with pytest.raises(ValueError, match=r"tangent of shape \(2,\).*primal of shape \(3,\)"):
        jvp(knp.sin, (np.ones(3),), (np.ones(2),))


def test_primals_must_be_a_tuple():
    with pytest.raises(TypeError, match=r"jvp\(f, \(x,\), \(t,\)\)"):
        jvp(knp.sin, 1.0, 1.0)


def test_non_tensor_output_is_refused():
    with pytest.raises(TypeError, match="str"):
        jvp(lambda x: "text", (1.0,), (1.0,))


def test_handler_stack_is_restored_after_an_exception():
    def fails(x):
        knp.sin(x)
        raise KeyError("inside")

    before = (current_handlers(), current_scopes())
    for call in (
        lambda: jvp(fails, (1.0,), (1.0,)),
        lambda: linearize(fails, 1.0),
        lambda: jvp(grad(fails), (1.0,), (1.0,)),
        lambda: grad(lambda x: jvp(fails, (x,), (1.0,))[1])(1.0),
    ):
        with pytest.raises(KeyError):
            call()
        assert (current_handlers(), current_scopes()) == before


def test_linearize_gives_an_integer_output_a_float0_tangent_whatever_the_rule_returns() -> None:
    """A staged (jitted) call's joint rule returns a tangent for every output, also for an
    integer one; linearize keeps float0 for it, as jvp does, and the float output's
    tangent is the analytic one."""
    def f(x):
        return knp.sin(x), knp.argmax(knp.reshape(x, (-1,)))

    x = np.ones((2, 3)) * np.arange(3)
    for fun in (f, kenaz.jit(f)):
        _, f_jvp = linearize(fun, x)
        dsin, dargmax = f_jvp(x + 1)
        np.testing.assert_allclose(np.asarray(dsin), np.cos(x) * (x + 1))
        assert dargmax.dtype == kenaz.float0 and dargmax.shape == ()
        _, f_jvp = linearize(lambda v, fun=fun: jvp(fun, (v,), (knp.cos(v),)), x)
        (_, dargmax), _ = f_jvp(x + 1)
        assert dargmax.dtype == kenaz.float0 and dargmax.shape == ()
