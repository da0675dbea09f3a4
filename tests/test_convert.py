"""Issue 14: lists of tensors are array-likes, and tracked tensors never silently become
constants (kenaz.convert; docs/conventions.md, "Conversions")."""

from __future__ import annotations

import numpy as np
import pytest

import kenaz
import kenaz.numpy as knp
import kenaz.scipy.special as sp
from kenaz.convert import TrackedConversionError
from kenaz.testing import check_grads

mask = np.array([True, False])
w = np.array([1.0, 2.0])

# (name, f of a scalar x, derivative at x = 1.5)
LIST_CASES = [
    ("append", lambda x: knp.sum(knp.append([x, 2 * x], 3.0)), 3.0),
    ("mean", lambda x: knp.mean([x, x + 2]), 1.0),
    ("dot", lambda x: knp.dot([x, 1.0], w), 1.0),
    ("where", lambda x: knp.sum(knp.where(mask, [x, x], 0.0)), 1.0),
    ("array", lambda x: knp.sum(knp.array([[x, 1.0], [2.0, x * x]])), 4.0),
    ("primitive", lambda x: knp.sum(knp.sin([x, 1.0])), np.cos(1.5)),
    ("full", lambda x: knp.sum(knp.full((3,), x)), 3.0),
    ("pad", lambda x: knp.sum(knp.pad(knp.ones(2), 1, constant_values=x)), 2.0),
]


@pytest.mark.parametrize("name, f, expected", LIST_CASES, ids=[c[0] for c in LIST_CASES])
def test_lists_of_tensors_differentiate_under_grad_jvp_and_vmap(name, f, expected):
    assert float(kenaz.grad(f)(1.5)) == pytest.approx(expected, rel=1e-12)
    assert float(kenaz.jvp(f, (1.5,), (1.0,))[1]) == pytest.approx(expected, rel=1e-12)
    xs = np.array([1.5, 0.3, -0.8])
    np.testing.assert_allclose(kenaz.vmap(f)(xs).numpy(), [float(f(v)) for v in xs])
    check_grads(f, (1.5,), order=2)


CONVERSIONS = {
    "np.asarray": np.asarray,
    "np.array of a list": lambda t: np.array([t, t]),
    "t.numpy()": lambda t: t.numpy(),
    "__array__": lambda t: t.__array__(),
    "Tensor(t)": kenaz.Tensor,
    "np.from_dlpack": np.from_dlpack,
}


@pytest.mark.parametrize("convert", list(CONVERSIONS.values()), ids=list(CONVERSIONS))
@pytest.mark.parametrize("transform", ["grad", "jvp", "vmap"])
def test_a_tracked_tensor_does_not_become_a_numpy_array(convert, transform):
    f = lambda x: knp.sum(x * convert(x))  # noqa: E731
    with pytest.raises(TrackedConversionError, match="kenaz.numpy"):
        if transform == "grad":
            kenaz.grad(f)(1.5)
        elif transform == "jvp":
            kenaz.jvp(f, (1.5,), (1.0,))
        else:
            kenaz.vmap(f)(np.array([1.5, 2.0]))


@pytest.mark.parametrize("convert", list(CONVERSIONS.values()), ids=list(CONVERSIONS))
def test_conversions_pass_outside_transformations_and_for_untracked_tensors(convert):
    t = knp.array(1.5)
    assert np.sum(np.asarray(convert(t))) > 0  # outside any transformation
    c = knp.array(2.0)  # made outside: no running transformation tracks it
    g = kenaz.grad(lambda x: x * float(np.sum(np.asarray(convert(c)))))(1.5)
    assert float(g) == float(np.sum(np.asarray(convert(c))))
    stopped = kenaz.grad(lambda x: knp.sum(x * convert(kenaz.stop_gradient(x))))(1.5)
    assert float(stopped) == pytest.approx(float(np.sum(np.asarray(convert(t)))))


def test_control_flow_values_keep_working_inside_transformations():
    """int, bool, comparisons and formatting stay allowed (issue 22): float() and the
    other number conversions raise, see tests/test_number_conversions.py."""

    def f(x):
        assert bool(x > 0) and int(x) == 1 and f"{x:.2f}" == "1.50" and str(x) == "1.5"
        return x * x

    assert float(kenaz.grad(f)(1.5)) == 3.0
    assert float(kenaz.jvp(f, (1.5,), (1.0,))[1]) == 3.0


def test_conversions_after_the_transformation_returns_pass():
    out, pullback = kenaz.vjp(lambda x: x * 2, knp.array([1.0, 2.0]))
    np.testing.assert_array_equal(np.asarray(out), [2.0, 4.0])  # grad's level is not running
    assert out.numpy().shape == (2,)


def test_std_of_constant_data_has_zero_derivative():
    """Decision (issue 14): the subgradient 0, as HIPS autograd, not NaN."""
    assert float(kenaz.grad(lambda x: knp.std(x))(np.array([1.5]))[0]) == 0.0
    np.testing.assert_array_equal(kenaz.grad(lambda x: knp.std(x))(np.full(3, 2.0)).numpy(), 0)
    check_grads(lambda x: knp.std(x), (np.array([0.3, 1.2, -0.4]),), order=2)


def test_gammasgn_and_longdouble():
    x = np.array([-2.5, -0.5, 0.7, 3.1])
    np.testing.assert_array_equal(sp.gammasgn(x).numpy(), [-1.0, -1.0, 1.0, 1.0])
    check_grads(lambda v: sp.gammasgn(v) * v * v, (x,), order=2)
    batched = kenaz.vmap(sp.gammasgn)(np.stack([x, -x]))
    expected = [sp.gammasgn(x).numpy(), sp.gammasgn(-x).numpy()]
    np.testing.assert_array_equal(batched.numpy(), expected)
    assert knp.longdouble is np.longdouble


def test_numpy_functions_that_only_inspect_values_still_work_inside_grad():
    """numpy.iscomplexobj / digitize / isin on a tracked tensor read its value (their
    answers carry no derivative), rather than being refused."""

    def f(x):
        bins = np.digitize(x, [0.0, 1.0])
        assert not np.iscomplexobj(x) and bool(np.isin(x, [1.5]))
        return x * float(bins)

    assert float(kenaz.grad(f)(1.5)) == 2.0


def test_found_by_the_sweep_label_smoothing_at_zero_is_differentiated():
    """nn.softmax_cross_entropy skipped label_smoothing when it was 0 (its default), so its
    derivative there was silently 0."""
    import kenaz.nn as nn

    logits = np.array([[0.3, -0.4, 1.1], [0.9, 0.2, -0.7]])
    labels = np.array([2, 0])

    def loss(s):
        return nn.softmax_cross_entropy(logits, labels, label_smoothing=s)

    check_grads(loss, (0.0,))
    assert float(kenaz.grad(loss)(0.0)) != 0.0


@pytest.mark.parametrize("name, f, expected", LIST_CASES, ids=[c[0] for c in LIST_CASES])
def test_lists_of_tensors_under_nested_transformations(name, f, expected):
    """The handler that meets the list stacks it with itself installed, so the levels
    outside it see the stacking too: grad(grad), jvp(grad), vmap(grad), linearize."""
    second = kenaz.grad(kenaz.grad(f))(1.5)
    h = 1e-4
    fd = (float(kenaz.grad(f)(1.5 + h)) - float(kenaz.grad(f)(1.5 - h))) / (2 * h)
    assert float(second) == pytest.approx(fd, rel=1e-6, abs=1e-8)
    assert float(kenaz.jvp(kenaz.grad(f), (1.5,), (1.0,))[1]) == pytest.approx(float(second))
    xs = np.array([1.5, 0.3])
    per_example = [float(kenaz.grad(f)(v)) for v in xs]
    np.testing.assert_allclose(kenaz.vmap(kenaz.grad(f))(xs).numpy(), per_example)
    _, f_jvp = kenaz.linearize(f, 1.5)
    assert float(f_jvp(1.0)) == pytest.approx(expected, rel=1e-12)


def test_a_refused_conversion_names_the_function_and_the_argument():
    from kenaz.convert import accepts_nested_lists

    def scale(a, factor):  # a composite that (wrongly) reads ``factor`` through NumPy
        return knp.asarray(a) * float(np.asarray(factor).sum())

    wrapped = accepts_nested_lists(scale, "kenaz.example")
    with pytest.raises(TrackedConversionError, match=r"kenaz\.example\.scale: its argument factor"):
        kenaz.grad(lambda x: wrapped(2.0, x))(1.5)
    assert float(kenaz.grad(lambda x: wrapped(x, 3.0))(1.5)) == 3.0


HOT_FRONT_ENDS = ["sum", "mean", "max", "var", "std", "prod", "cumsum", "argmax", "dot",
                  "matmul", "einsum", "reshape", "transpose", "squeeze", "expand_dims",
                  "concatenate", "stack", "where", "clip", "round", "moveaxis", "broadcast_to",
                  "tensordot", "outer", "pad"]  # fmt: skip


@pytest.mark.parametrize("name", HOT_FRONT_ENDS)
def test_front_ends_stack_their_own_lists_without_the_wrapper(name):
    """The primitives' front ends (kenaz.ops, numpy._signatures) call
    convert.array_argument before reading a shape: no retry wrapper (and its frame)."""
    f = getattr(knp, name)
    assert not getattr(f, "__kenaz_lists__", False), name
    assert f.__module__.startswith(kenaz.convert.STACKS_ITS_OWN_LISTS)


def test_composites_elsewhere_keep_the_retry():
    assert getattr(knp.average, "__kenaz_lists__", False)
    assert getattr(kenaz.numpy.linalg.norm, "__kenaz_lists__", False)


FRONT_END_LISTS = [
    ("reshape", lambda x: knp.sum(knp.reshape([x, 1.0, x * x, 2.0], (2, 2)) * w), 1.0 + 2 * 1.5),
    ("transpose", lambda x: knp.sum(knp.transpose([[x, 1.0], [2.0, x]])[0] * w), 1.0),
    ("concatenate", lambda x: knp.sum(knp.concatenate([[x, 1.0], w]) * 2.0), 2.0),
    ("stack", lambda x: knp.sum(knp.stack([[x, 1.0], w])[0] * w), 1.0),
    ("matmul", lambda x: knp.matmul([x, 2 * x], w), 5.0),
    ("einsum", lambda x: knp.einsum("i,i->", [x, 2 * x], w), 5.0),
    ("max", lambda x: knp.max([x, 1.0]), 1.0),
    ("var", lambda x: knp.var([x, 1.0]), 0.25),
    ("round", lambda x: knp.sum(knp.round([x, 1.0], 1)) + x, 1.0),
    ("expand_dims", lambda x: knp.sum(knp.expand_dims([x, 1.0], 0)), 1.0),
]


@pytest.mark.parametrize("name, f, expected", FRONT_END_LISTS, ids=[c[0] for c in FRONT_END_LISTS])
def test_unwrapped_front_ends_take_lists_of_tensors(name, f, expected):
    assert float(kenaz.grad(f)(1.5)) == pytest.approx(expected, rel=1e-12)
    assert float(kenaz.jvp(f, (1.5,), (1.0,))[1]) == pytest.approx(expected, rel=1e-12)
    xs = np.array([1.5, 0.3])
    np.testing.assert_allclose(kenaz.vmap(f)(xs).numpy(), [float(f(v)) for v in xs])
    assert float(f(knp.asarray(1.5))) == pytest.approx(float(f(1.5)))  # eagerly too


@pytest.mark.parametrize("transform", ["grad", "vmap"])
def test_a_refusal_inside_an_unwrapped_front_end_names_it_and_the_argument(transform):
    """Without the wrapper, the refused conversion still names the function the user
    called and the argument holding the tensor (found from the frames, on the error path)."""
    f = lambda x: knp.sum(knp.pad(knp.ones(2), x * 1.0))  # noqa: E731
    pattern = r"^kenaz\.numpy\.pad: its argument pad_width cannot be differentiated"
    with pytest.raises(TrackedConversionError, match=pattern):
        if transform == "grad":
            kenaz.grad(f)(1.0)
        else:
            kenaz.vmap(f)(np.array([1.0, 2.0]))


def test_a_refusal_in_user_code_names_no_function():
    with pytest.raises(TrackedConversionError, match=r"^kenaz: numpy\.asarray"):
        kenaz.grad(lambda x: knp.sum(x * np.asarray(x)))(1.0)


def test_a_refusal_names_the_namespace_function_also_when_kenaz_code_called_it():
    """As the wrapper did: ``kenaz.numpy.pad`` is named when another kenaz module (here a
    stand-in for kenaz.nn) called it, not only when the user did."""
    library: dict = {"__name__": "kenaz.example_library", "knp": knp}
    exec("def layer(x):\n    return knp.pad(knp.ones(2), x * 1.0)\n", library)  # noqa: S102
    with pytest.raises(TrackedConversionError, match=r"^kenaz\.numpy\.pad: its argument pad_width"):
        kenaz.grad(lambda x: knp.sum(library["layer"](x)))(1.0)


def test_a_refusal_inside_numpy_code_a_namespace_function_called_still_names_it(monkeypatch):
    """The frames between the namespace function and the refused conversion may be NumPy's
    own Python code (``np.ndim(a)`` converts ``a`` inside fromnumeric)."""
    namespace: dict = {"__name__": "kenaz.numpy", "np": np}
    exec("def probe(a, b):\n    return b * np.ndim([a, a])\n", namespace)  # noqa: S102
    monkeypatch.setattr(knp, "probe", namespace["probe"], raising=False)
    with pytest.raises(TrackedConversionError, match=r"^kenaz\.numpy\.probe: its argument a "):
        kenaz.grad(lambda x: knp.probe(x, x * 2.0))(1.0)
