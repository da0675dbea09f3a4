"""custom_jvp and custom_vjp under every transformation, to second order."""

from __future__ import annotations

import numpy as np
import pytest

import kenaz
import kenaz.numpy as knp
from kenaz import custom_jvp, custom_vjp, grad, jvp, vjp


# -- the examples of the docs --------------------------------------------------------------
@custom_jvp
def log1pexp(x):
    return knp.maximum(x, 0.0) + knp.log1p(knp.exp(-knp.abs(x)))


@log1pexp.defjvp
def _log1pexp_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return log1pexp(x), t * knp.expit(x)


@custom_vjp
def clip_gradient(x, bound):
    return x


def _clip_fwd(x, bound):
    return x, bound


def _clip_bwd(bound, g):
    return knp.clip(g, -bound, bound), None


clip_gradient.defvjp(_clip_fwd, _clip_bwd)


@custom_vjp
def sin_vjp(x):
    return knp.sin(x)


sin_vjp.defvjp(lambda x: (knp.sin(x), knp.cos(x)), lambda cos_x, g: (g * cos_x,))


def expit(x):
    return 1 / (1 + np.exp(-x))


def test_no_transformation_runs_the_function():
    assert float(log1pexp(1.0)) == pytest.approx(np.log1p(np.e))
    assert float(clip_gradient(3.0, 1.0)) == 3.0


def test_custom_jvp_grad_is_stable_where_autodiff_is_not():
    assert float(grad(log1pexp)(1000.0)) == 1.0
    assert float(grad(log1pexp)(-1000.0)) == 0.0
    assert float(grad(log1pexp)(0.3)) == pytest.approx(expit(0.3))


def test_custom_jvp_uses_the_rule_in_forward_and_reverse():
    calls = []

    @custom_jvp
    def f(x):
        return knp.sin(x)

    @f.defjvp
    def _(primals, tangents):
        calls.append(1)
        (x,), (t,) = primals, tangents
        return f(x), 2.0 * t  # deliberately not the true derivative

    assert float(jvp(f, (1.0,), (1.0,))[1]) == 2.0
    assert float(grad(f)(1.0)) == 2.0
    assert calls


@pytest.mark.parametrize("x", [-2.0, 0.0, 0.7, 30.0])
def test_custom_jvp_second_order_all_combinations(x):
    s = expit(x)
    second = s * (1 - s)
    assert float(grad(grad(log1pexp))(x)) == pytest.approx(second)
    assert float(jvp(grad(log1pexp), (x,), (1.0,))[1]) == pytest.approx(second)
    assert float(grad(lambda y: jvp(log1pexp, (y,), (1.0,))[1])(x)) == pytest.approx(second)
    assert float(jvp(lambda y: jvp(log1pexp, (y,), (1.0,))[1], (x,), (1.0,))[1]) == pytest.approx(
        second
    )


def test_custom_jvp_several_arguments_and_pytrees():
    @custom_jvp
    def f(params, x):
        return {"out": params["w"] * knp.sin(x) + params["b"]}

    @f.defjvp
    def _(primals, tangents):
        (p, x), (tp, tx) = primals, tangents
        out = f(p, x)
        return out, {"out": tp["w"] * knp.sin(x) + p["w"] * knp.cos(x) * tx + tp["b"]}

    params = {"w": knp.array([1.0, 2.0]), "b": knp.array(0.5)}
    x = knp.array([0.3, -0.4])
    loss = lambda p, x: knp.sum(f(p, x)["out"] ** 2)
    gp, gx = grad(loss, argnums=(0, 1))(params, x)
    out = params["w"].numpy() * np.sin(x.numpy()) + 0.5
    np.testing.assert_allclose(gp["w"].numpy(), 2 * out * np.sin(x.numpy()))
    np.testing.assert_allclose(gp["b"].numpy(), np.sum(2 * out))
    np.testing.assert_allclose(gx.numpy(), 2 * out * params["w"].numpy() * np.cos(x.numpy()))


def test_custom_jvp_nondiff_argnums():
    @custom_jvp
    def apply(fn, x):
        return fn(x)

    apply.nondiff_argnums = apply.nondiff_argnums  # attribute exists
    apply2 = custom_jvp(lambda fn, x: fn(x), nondiff_argnums=(0,))

    @apply2.defjvp
    def _(fn, primals, tangents):
        (x,), (t,) = primals, tangents
        return fn(x), 3.0 * t

    assert float(grad(lambda x: apply2(knp.sin, x))(0.2)) == 3.0
    assert float(jvp(lambda x: apply2(knp.sin, x), (0.2,), (1.0,))[1]) == 3.0


def test_custom_vjp_clip_gradient():
    assert float(grad(lambda x: 10 * clip_gradient(x, 1.0))(3.0)) == 1.0
    assert float(grad(lambda x: 0.5 * clip_gradient(x, 1.0))(3.0)) == 0.5
    g = grad(lambda x: knp.sum(clip_gradient(x, 2.0) * knp.array([1.0, 5.0, -9.0])))(knp.ones(3))
    np.testing.assert_allclose(g.numpy(), [1.0, 2.0, -2.0])


def test_custom_vjp_uses_bwd_and_residuals():
    x = knp.array([0.1, 0.5, 2.0])
    out, pullback = vjp(sin_vjp, x)
    np.testing.assert_allclose(out.numpy(), np.sin(x.numpy()))
    np.testing.assert_allclose(pullback(knp.ones(3))[0].numpy(), np.cos(x.numpy()))


def test_custom_vjp_second_order_differentiates_fwd_and_bwd():
    # d2/dx2 sin = -sin, through the residual cos(x) computed in fwd.
    for x in [0.0, 0.4, 2.0]:
        assert float(grad(grad(sin_vjp))(x)) == pytest.approx(-np.sin(x))
        assert float(jvp(grad(sin_vjp), (x,), (1.0,))[1]) == pytest.approx(-np.sin(x))


def test_custom_vjp_forward_mode_differentiates_the_original_function():
    assert float(jvp(sin_vjp, (0.5,), (2.0,))[1]) == pytest.approx(2 * np.cos(0.5))
    # clip_gradient's rule is ignored forward: the identity's derivative.
    assert float(jvp(lambda x: 10 * clip_gradient(x, 1.0), (3.0,), (1.0,))[1]) == 10.0
    out, f_jvp = kenaz.linearize(sin_vjp, 0.5)
    assert float(f_jvp(1.0)) == pytest.approx(np.cos(0.5))


def test_linearize_custom_jvp():
    out, f_jvp = kenaz.linearize(log1pexp, 1000.0)
    assert float(f_jvp(2.0)) == 2.0


def test_custom_vjp_bwd_called_once_for_several_inputs():
    calls = []

    @custom_vjp
    def mul(x, y):
        return x * y

    def bwd(res, g):
        calls.append(1)
        x, y = res
        return g * y, g * x

    mul.defvjp(lambda x, y: (x * y, (x, y)), bwd)
    gx, gy = grad(lambda x, y: mul(x, y), argnums=(0, 1))(3.0, 4.0)
    assert (float(gx), float(gy)) == (4.0, 3.0)
    assert len(calls) == 1


def test_perturbation_confusion_with_custom_rules():
    # d/dx [ d/dy (x * y) ] = 1, with the product behind a custom rule.
    @custom_vjp
    def mul(x, y):
        return x * y

    mul.defvjp(lambda x, y: (x * y, (x, y)), lambda res, g: (g * res[1], g * res[0]))
    assert float(grad(lambda x: grad(lambda y: mul(x, y))(x))(2.0)) == 1.0


def test_a_closed_over_differentiated_tensor_is_lifted_and_differentiated():
    # Closure conversion (issue 22): the rule covers x; w, closed over, is differentiated
    # through the function itself. d/dw f(2w) with f(x) = x * w and a rule saying
    # df/dx = 1: 2 * 1 (through x, by the rule) + x = 2w (through w) = 8 at w = 3.
    def loss(w):
        @custom_vjp
        def f(x):
            return x * w

        f.defvjp(lambda x: (x * w, None), lambda res, g: (g,))
        return f(w * 2.0)

    assert float(grad(loss)(3.0)) == 8.0

    def loss_constant_argument(w):  # no argument is differentiated: only the closure is
        @custom_vjp
        def f(x):
            return x * w

        f.defvjp(lambda x: (x * w, None), lambda res, g: (g,))
        return f(knp.array(2.0))

    assert float(grad(loss_constant_argument)(3.0)) == 2.0
    # forward mode differentiates the original function, closure included
    assert float(jvp(loss_constant_argument, (3.0,), (1.0,))[1]) == 2.0


def test_a_tensor_only_a_rule_reads_cannot_be_lifted_and_is_an_error():
    def loss(w):
        @custom_vjp
        def f(x):
            return x * 2.0

        f.defvjp(lambda x: (x * w, None), lambda res, g: (g,))  # fwd reads w, f does not
        return f(knp.array(2.0) + w)

    with pytest.raises(ValueError, match=r"(?s)reverse rule of custom_vjp\[f\].*never reads it"):
        grad(loss)(3.0)


def test_missing_rule_and_bad_rules_give_clear_errors():
    f = custom_jvp(lambda x: x)
    assert float(f(2.0)) == 2.0  # fine without a transformation
    with pytest.raises(TypeError, match="defjvp"):
        grad(f)(1.0)
    g = custom_vjp(lambda x: x)
    g.defvjp(lambda x: (x, None), lambda res, ct: ct)  # not a tuple
    with pytest.raises(TypeError, match="one cotangent per differentiable argument"):
        grad(g)(1.0)
    h = custom_vjp(lambda x: x)
    h.defvjp(lambda x: (x, None), lambda res, ct: (knp.ones(3),))
    with pytest.raises(ValueError, match="shape"):
        grad(h)(1.0)


def test_debug_shows_a_custom_call_as_one_op(capsys):
    kenaz.debug(grad(log1pexp))(1.0)
    printed = capsys.readouterr().out
    assert "custom_jvp[log1pexp]" not in printed or "custom_jvp" in printed
    kenaz.debug(log1pexp)(1.0)  # no transformation inside debug: the call is seen as one op
    assert "custom_jvp[log1pexp]" in capsys.readouterr().out


def test_user_handler_outside_grad_sees_the_rule_ops():
    # grad inside a counting handler: the custom rule still applies.
    from collections import Counter

    class Count(kenaz.Handler):
        def __init__(self):
            self.counts = Counter()

        def handle(self, op, args, params):
            self.counts[op.name] += 1
            return kenaz.perform(op, *args, **params)

    counter = Count()
    with kenaz.handler(counter):
        g = grad(log1pexp)(1000.0)
    assert float(g) == 1.0

    # ... and grad outside a counting handler too.
    def counted(x):
        with kenaz.handler(Count()):
            return log1pexp(x)

    assert float(grad(counted)(1000.0)) == 1.0


# -- vmap and Jacobians ----------------------------------------------------------------------
def test_vmap_of_custom_jvp_and_vjp():
    xs = knp.array([-3.0, 0.0, 2.0, 1000.0])
    np.testing.assert_allclose(kenaz.vmap(grad(log1pexp))(xs).numpy(), expit(xs.numpy()))
    np.testing.assert_allclose(
        kenaz.vmap(grad(lambda x: 10 * clip_gradient(x, 1.0)))(xs).numpy(), np.ones(4)
    )
    np.testing.assert_allclose(kenaz.vmap(sin_vjp)(xs).numpy(), np.sin(xs.numpy()))


def test_grad_of_vmap_uses_the_batched_rule():
    xs = knp.array([-3.0, 0.0, 2.0, 1000.0])
    g = grad(lambda xs: knp.sum(kenaz.vmap(log1pexp)(xs)))(xs)
    np.testing.assert_allclose(g.numpy(), expit(xs.numpy()))
    g = grad(lambda xs: knp.sum(kenaz.vmap(lambda x: 10 * clip_gradient(x, 1.0))(xs)))(xs)
    np.testing.assert_allclose(g.numpy(), np.ones(4))
    g = grad(lambda xs: knp.sum(kenaz.vmap(sin_vjp)(xs)))(xs)
    np.testing.assert_allclose(g.numpy(), np.cos(xs.numpy()))
    t = jvp(lambda xs: kenaz.vmap(log1pexp)(xs), (xs,), (knp.ones(4),))[1]
    np.testing.assert_allclose(t.numpy(), expit(xs.numpy()))


def test_vmap_with_shared_arguments_sums_their_cotangents():
    @custom_vjp
    def scale(w, x):
        return w * x

    scale.defvjp(lambda w, x: (w * x, (w, x)), lambda res, g: (knp.sum(g * res[1]), g * res[0]))
    w = knp.array(2.0)
    xs = knp.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    loss = lambda w, xs: knp.sum(kenaz.vmap(scale, in_axes=(None, 0))(w, xs))
    gw, gx = grad(loss, argnums=(0, 1))(w, xs)
    assert float(gw) == pytest.approx(21.0)
    np.testing.assert_allclose(gx.numpy(), np.full((3, 2), 2.0))
    # the batch axis elsewhere than 0
    g = grad(lambda xs: knp.sum(kenaz.vmap(scale, in_axes=(None, 1))(w, xs) ** 2))(xs)
    np.testing.assert_allclose(g.numpy(), 8 * xs.numpy())


def test_hessian_and_jacobians_of_custom_functions():
    x = knp.array([0.5, -1.0, 2.0])
    s = expit(x.numpy())
    h = kenaz.hessian(lambda x: knp.sum(log1pexp(x)))(x)
    np.testing.assert_allclose(h.numpy(), np.diag(s * (1 - s)), atol=1e-12)
    h = kenaz.hessian(lambda x: knp.sum(sin_vjp(x)))(x)
    np.testing.assert_allclose(h.numpy(), np.diag(-np.sin(x.numpy())), atol=1e-12)
    for jac in (kenaz.jacfwd, kenaz.jacrev):
        np.testing.assert_allclose(jac(log1pexp)(x).numpy(), np.diag(s), atol=1e-12)
        np.testing.assert_allclose(jac(sin_vjp)(x).numpy(), np.diag(np.cos(x.numpy())), atol=1e-12)


def test_nested_vmap_of_custom_vjp():
    xs = knp.array(np.arange(6.0).reshape(2, 3) / 3)
    g = grad(lambda xs: knp.sum(kenaz.vmap(kenaz.vmap(sin_vjp))(xs)))(xs)
    np.testing.assert_allclose(g.numpy(), np.cos(xs.numpy()))


def test_perturbation_confusion_forward_and_vmap_variants():
    @custom_jvp
    def mul(x, y):
        return x * y

    mul.defjvp(lambda p, t: (mul(*p), t[0] * p[1] + p[0] * t[1]))
    inner = lambda x: jvp(lambda y: mul(x, y), (x,), (1.0,))[1]  # noqa: E731
    assert float(jvp(inner, (2.0,), (1.0,))[1]) == 1.0
    assert float(grad(inner)(2.0)) == 1.0
    assert float(grad(lambda x: grad(lambda y: mul(x, y))(x))(2.0)) == 1.0
    xs = knp.array([1.0, 2.0, 3.0])
    per_example = kenaz.vmap(lambda x: grad(lambda y: mul(x, y))(x))(xs)
    np.testing.assert_allclose(per_example.numpy(), xs.numpy())


def test_keyword_and_default_arguments_are_bound_positionally():
    @custom_vjp
    def scaled(x, scale=2.0):
        return x * scale

    scaled.defvjp(lambda x, scale=2.0: (x * scale, scale), lambda scale, g: (g * scale, None))
    assert float(grad(lambda x: scaled(x))(1.0)) == 2.0
    assert float(grad(lambda x: scaled(x, scale=3.0))(1.0)) == 3.0
    assert float(grad(lambda s: scaled(1.0, s))(3.0)) == 0.0  # bwd says so


# -- the rules agree with finite differences, to second order ------------------------------
@pytest.mark.parametrize("f", [log1pexp, sin_vjp, lambda x: clip_gradient(x, 1e6)])
def test_check_grads_to_second_order(f):
    from kenaz.testing import check_grads

    check_grads(f, [knp.array([-1.5, 0.2, 2.0])], order=2)


def test_check_grads_several_arguments_and_checkpoint():
    from kenaz.testing import check_grads

    @custom_vjp
    def mul_sin(x, y):
        return x * knp.sin(y)

    mul_sin.defvjp(
        lambda x, y: (x * knp.sin(y), (x, y)),
        lambda res, g: (g * knp.sin(res[1]), g * res[0] * knp.cos(res[1])),
    )
    args = [knp.array([0.3, -1.0]), knp.array([0.7, 2.0])]
    check_grads(mul_sin, args, order=2)
    check_grads(kenaz.checkpoint(lambda x, y: knp.tanh(x * y) ** 2), args, order=2)


def test_defjvps_per_argument_rules():
    f = custom_jvp(lambda x, y: knp.sin(x) * y)
    f.defjvps(lambda tx, out, x, y: knp.cos(x) * y * tx, None)  # y's derivative left out
    gx, gy = grad(f, argnums=(0, 1))(0.5, 2.0)
    assert float(gx) == pytest.approx(2 * np.cos(0.5)) and float(gy) == 0.0
    assert float(jvp(f, (0.5, 2.0), (1.0, 1.0))[1]) == pytest.approx(2 * np.cos(0.5))
    assert float(grad(grad(f))(0.5, 2.0)) == pytest.approx(-2 * np.sin(0.5))
    g = custom_jvp(lambda x: x)
    g.defjvps(None, None)
    with pytest.raises(TypeError, match="2 rules for 1"):
        grad(g)(1.0)
