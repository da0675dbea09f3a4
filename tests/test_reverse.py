"""Reverse mode: grad, value_and_grad, vjp; nesting, control flow, pytrees, options, errors."""

from __future__ import annotations

import re

import numpy as np
import pytest

import kenaz
import kenaz.numpy as knp
from kenaz import grad, jvp, value_and_grad, vjp
from kenaz.effects import current_handlers, current_scopes


def quadratic(x):
    return x**2 + 3 * x + 2


# -- the classic example and perturbation confusion ---------------------------------------------
def test_classic_example_value_and_gradient():
    value, gradient = value_and_grad(quadratic)(5.0)
    assert float(value) == 42.0
    assert float(gradient) == 13.0
    assert float(grad(quadratic)(5.0)) == 13.0


def test_no_perturbation_confusion_grad_of_grad():
    assert float(grad(lambda x: grad(lambda y: x * y)(x))(2.0)) == 1.0


def test_no_perturbation_confusion_jvp_inside_grad():
    def f(x):
        return jvp(lambda y: x * y, (x,), (1.0,))[1]  # d/dy (x y) = x

    assert float(grad(f)(2.0)) == 1.0


def test_no_perturbation_confusion_vjp_inside_grad():
    def f(x):
        _, pullback = vjp(lambda y: x * y, x)
        return pullback(1.0)[0]

    assert float(grad(f)(2.0)) == 1.0


def test_four_nested_grads_of_sin_give_sin():
    x = np.linspace(-2.0, 2.0, 7)
    fourth = grad(grad(grad(grad(knp.sin))))
    np.testing.assert_allclose([float(fourth(v)) for v in x], np.sin(x), rtol=1e-12)


def test_second_derivative_of_the_classic_example():
    assert float(grad(grad(quadratic))(5.0)) == 2.0
    assert float(grad(grad(grad(quadratic)))(5.0)) == 0.0


# -- control flow --------------------------------------------------------------------------
def piecewise(x):
    if x > 0:
        return x**3
    return -2 * x


@pytest.mark.parametrize(("x", "expected"), [(2.0, 12.0), (-1.0, -2.0)])
def test_gradient_through_if(x, expected):
    assert float(grad(piecewise)(x)) == expected


def test_gradient_through_for():
    def repeated_multiply(x):
        y = x
        for _ in range(4):
            y = y * x
        return y  # x**5

    assert float(grad(repeated_multiply)(2.0)) == 5 * 2.0**4


def test_gradient_through_while():
    def halve_until_small(x):
        y = x
        while y > 1.0:
            y = y / 2
        return y  # x / 16 for x in (8, 16]

    assert float(grad(halve_until_small)(12.0)) == pytest.approx(1 / 16)


def test_gradient_through_recursion():
    def power(x, n):
        return 1.0 if n == 0 else x * power(x, n - 1)

    assert float(grad(power)(3.0, 4)) == pytest.approx(4 * 27.0)


# -- vjp ----------------------------------------------------------------------------------
def test_vjp_pullback_can_be_called_many_times():
    out, pullback = vjp(lambda x: knp.sin(x) * x, np.array([0.5, 1.0]))
    expected = np.cos([0.5, 1.0]) * [0.5, 1.0] + np.sin([0.5, 1.0])
    for scale in (1.0, 2.0, -3.0):
        (g,) = pullback(np.full(2, scale))
        np.testing.assert_allclose(g, scale * expected)


def test_vjp_of_several_outputs_and_inputs():
    out, pullback = vjp(lambda x, y: (x * y, x + y), 2.0, 3.0)
    assert [float(o) for o in out] == [6.0, 5.0]
    gx, gy = pullback((1.0, 10.0))
    assert (float(gx), float(gy)) == (3.0 + 10.0, 2.0 + 10.0)


def test_vjp_has_aux():
    out, pullback, aux = vjp(lambda x: (x * 2, "note"), 1.0, has_aux=True)
    assert aux == "note"
    assert float(pullback(1.0)[0]) == 2.0


def test_vjp_of_output_returned_twice():
    _, pullback = vjp(lambda x: (lambda s: (s, s))(knp.sin(x)), 0.0)
    assert float(pullback((1.0, 1.0))[0]) == 2.0


def test_vjp_cotangent_shape_must_match():
    _, pullback = vjp(knp.sin, np.ones(3))
    with pytest.raises(ValueError, match=r"shape \(2,\).*shape \(3,\)"):
        pullback(np.ones(2))


# -- pytrees and options ---------------------------------------------------------------------
def test_pytree_inputs_and_outputs():
    params = {"w": np.array([1.0, 2.0]), "b": 0.5, "layers": [np.ones(2), None]}

    def loss(p):
        return knp.sum(p["w"] * p["layers"][0]) + p["b"] ** 2

    g = grad(loss)(params)
    assert set(g) == {"w", "b", "layers"}
    np.testing.assert_array_equal(g["w"], [1.0, 1.0])
    assert float(g["b"]) == 1.0
    np.testing.assert_array_equal(g["layers"][0], [1.0, 2.0])
    assert g["layers"][1] is None


def test_argnums_int_and_tuple():
    f = lambda x, y, z: x * y * z
    assert float(grad(f, argnums=1)(2.0, 3.0, 4.0)) == 8.0
    assert float(grad(f, argnums=-1)(2.0, 3.0, 4.0)) == 6.0
    gx, gz = grad(f, argnums=(0, 2))(2.0, 3.0, 4.0)
    assert (float(gx), float(gz)) == (12.0, 6.0)
    (gy,) = grad(f, argnums=(1,))(2.0, 3.0, 4.0)
    assert float(gy) == 8.0


def test_has_aux():
    g, aux = grad(lambda x: (x**2, {"value": x**2}), has_aux=True)(3.0)
    assert float(g) == 6.0
    assert float(aux["value"]) == 9.0
    (value, aux), g = value_and_grad(lambda x: (x**2, "aux"), has_aux=True)(3.0)
    assert (float(value), aux, float(g)) == (9.0, "aux", 6.0)


def test_allow_int_gives_a_float0_gradient_that_arithmetic_refuses():
    g = grad(lambda x, n: x * n, argnums=(0, 1), allow_int=True)(2.0, 3)
    assert float(g[0]) == 3.0
    assert g[1].dtype == kenaz.float0 and g[1].shape == ()
    with pytest.raises(TypeError):
        g[1] + 1.0


def test_keyword_arguments_are_not_differentiated():
    assert float(grad(lambda x, scale=1.0: x * scale)(2.0, scale=5.0)) == 5.0


def test_integer_valued_intermediate_has_no_gradient():
    g = grad(lambda x: (x * knp.argmax(x)).sum())(np.array([1.0, 3.0, 2.0]))
    np.testing.assert_array_equal(g, [1.0, 1.0, 1.0])


def test_float32_gradient_stays_float32():
    g = grad(lambda x: knp.sum(knp.exp(x) * 2.0))(np.ones(3, dtype=np.float32))
    assert g.dtype == np.float32


# -- errors --------------------------------------------------------------------------------
def test_non_scalar_output_names_the_shape_and_suggests_vjp():
    with pytest.raises(TypeError, match=r"shape \(3,\).*vjp"):
        grad(knp.sin)(np.ones(3))


def test_integer_input_without_allow_int():
    with pytest.raises(TypeError, match="allow_int=True"):
        grad(lambda n: n * 2.0)(3)


def test_non_tensor_output_is_refused():
    with pytest.raises(TypeError, match="str"):
        grad(lambda x: "not a tensor")(1.0)
    with pytest.raises(TypeError, match="str"):
        vjp(lambda x: "not a tensor", 1.0)


def test_tuple_output_to_grad_suggests_has_aux():
    with pytest.raises(TypeError, match="has_aux"):
        grad(lambda x: (x, x))(1.0)


def test_integer_output_to_grad_is_refused():
    with pytest.raises(TypeError, match="int64"):
        grad(lambda x: knp.argmax(x))(np.ones(3))


@pytest.mark.parametrize(
    "argnums",
    [2, -3, (0, 5), (), (0, 0), (1, -1)],
    ids=["2", "-3", "(0, 5)", "()", "(0, 0)", "(1, -1)"],
)
def test_bad_argnums(argnums):
    with pytest.raises(ValueError, match=r"argnums"):
        grad(lambda x, y: x * y, argnums=argnums)(1.0, 2.0)


def test_incompatible_shapes_inside_grad_name_the_op():
    with pytest.raises(ValueError, match=re.escape("kenaz.add: operands of shapes (3,) and (4,)")):
        grad(lambda x: (x + np.ones(4)).sum())(np.ones(3))


class Boom(Exception):
    pass


def _raise(x):
    raise Boom("inside")


@pytest.mark.parametrize(
    "transformed",
    [
        lambda: grad(_raise)(1.0),
        lambda: vjp(_raise, 1.0),
        lambda: grad(lambda x: grad(_raise)(x))(1.0),
        lambda: grad(lambda x: jvp(_raise, (x,), (1.0,))[1])(1.0),
        lambda: vjp(lambda x: kenaz.debug(grad(_raise), file=None)(x), 1.0),
        lambda: grad(lambda x: vjp(lambda y: knp.sin(y) * _raise(y), x)[0])(1.0),
    ],
    ids=["grad", "vjp", "grad-grad", "grad-jvp", "vjp-debug-grad", "grad-vjp-mid-op"],
)
def test_handler_stack_is_restored_after_an_exception(transformed):
    before = (current_handlers(), current_scopes())
    with pytest.raises(Boom):
        transformed()
    assert (current_handlers(), current_scopes()) == before


def test_handler_stack_is_restored_after_an_exception_in_the_backward_pass():
    def bad_backward(x):
        _, pullback = vjp(knp.sin, x)
        return pullback(np.ones(2))  # wrong cotangent shape, raised inside grad

    before = current_handlers()
    with pytest.raises(ValueError):
        grad(lambda x: bad_backward(x)[0])(1.0)
    assert current_handlers() == before


@pytest.mark.parametrize(
    "transform",
    [
        lambda f: kenaz.grad(f)(1.0),
        lambda f: kenaz.jvp(f, (1.0,), (1.0,)),
        lambda f: kenaz.linearize(f, 1.0),
    ],
    ids=["grad", "jvp", "linearize"],
)
def test_a_list_of_tracked_tensors_given_to_a_primitive_is_stacked(transform):
    """kenaz.convert's rule: the handler stacks the list, so the derivative flows."""
    from kenaz.ops.elementwise import multiply

    result = transform(lambda x: multiply([x, x], 2.0).sum())
    tangent = result if not isinstance(result, tuple) else result[1]
    if callable(tangent):  # linearize: (out, f_jvp)
        tangent = tangent(1.0)
    assert float(tangent) == 4.0


def test_transformations_copy_the_function_s_attributes_as_functools_wraps_does():
    """grad, value_and_grad, vmap, jacrev, jacfwd and hessian copy what ``functools.wraps``
    copies (their own faster copy, ``kenaz.transform.wraps``): for a function with
    annotations and attributes, a lambda, an op and a partial."""
    import functools

    import kenaz
    import kenaz.numpy as knp

    def loss(x: float) -> float:
        """The loss."""
        return knp.sum(x * x)

    loss.marker = "kept"
    names = ("__module__", "__name__", "__qualname__", "__doc__", "__annotations__", "__dict__")
    for f in (loss, lambda x: x, knp.sin, functools.partial(loss)):

        def reference(*args):
            return args

        functools.update_wrapper(reference, f)
        for transform in (
            kenaz.grad,
            kenaz.value_and_grad,
            kenaz.vmap,
            kenaz.jacrev,
            kenaz.jacfwd,
            kenaz.hessian,
        ):
            wrapped = transform(f)
            assert wrapped.__wrapped__ is f
            for name in names:
                if name != "__dict__" and not hasattr(f, name):
                    continue  # not copied (an op has no name): each wrapper keeps its own
                expected = getattr(reference, name, None)
                found = getattr(wrapped, name, None)
                if name == "__dict__":  # the wrapper's own cells aside, the same entries
                    expected = {k: v for k, v in expected.items() if k != "__wrapped__"}
                    found = {k: v for k, v in found.items() if k != "__wrapped__"}
                assert found == expected, (transform.__name__, f, name)


def test_tape_entries_of_unary_and_binary_ops_follow_the_op_tables() -> None:
    """The tape handler's unrolled unary and binary paths record what its general loop
    records: one edge per tracked argument with a rule, its node, what the op states the
    pullback keeps (``rule_tables.kept_by``) and a pullback equal to the rule's; none for
    an untracked argument, an integer output or a rule-less argument (``where``'s
    condition, the general loop's case)."""
    from kenaz.effects import handler, perform_args
    from kenaz.ops.elementwise import add, arctan2, greater, multiply, sin, where
    from kenaz.reverse import ReverseHandler
    from kenaz.rule_tables import kept_by
    from kenaz.tensor import Tensor

    rng = np.random.default_rng(5)
    x0, y0 = knp.asarray(rng.uniform(-1, 1, 3)), knp.asarray(rng.uniform(-1, 1, 3))
    g = knp.asarray(rng.uniform(-1, 1, 3))
    cases = [  # (op, which of its arguments are watched)
        (multiply, (True, True)),
        (multiply, (True, False)),
        (multiply, (False, True)),
        (arctan2, (True, True)),
        (add, (True, True)),
        (sin, (True,)),
        (greater, (True, True)),  # a boolean output: no entry
        (where, (False, True, True)),  # three arguments: the general loop
    ]
    for op, watched in cases:
        rev = ReverseHandler()
        values = [x0 > 0, x0, y0] if len(watched) == 3 else [x0, y0][: len(watched)]
        args = tuple(rev.watch(v) if w else v for v, w in zip(values, watched, strict=True))
        with handler(rev):
            out = perform_args(op, args, {})
        if out.dtype.kind not in "fc":
            assert rev.tape == [], op.name
            continue
        node, edges, recorded = rev.tape[-1]
        assert recorded is op and out._trace[rev.level] == node
        expected = [
            (i, a._trace[rev.level])
            for i, a in enumerate(args)
            if isinstance(a, Tensor) and a._trace and op.vjp[i] is not None
        ]
        assert [parent for parent, _, _ in edges] == [n for _, n in expected], op.name
        for (i, _), (_, pullback, kept) in zip(expected, edges, strict=True):
            want = kept_by(op.saves, i, out, args)
            assert kept is want or (type(kept) is tuple and kept == want), op.name
            rule = op.vjp[i](out, *args)
            assert np.array_equal(np.asarray(pullback(g)), np.asarray(rule(g))), op.name
