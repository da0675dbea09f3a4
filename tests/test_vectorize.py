"""``vmap``: axes, pytrees, nesting, composition, errors and the per-example fallback."""

from __future__ import annotations

import io
import warnings

import numpy as np
import pytest

import kenaz
import kenaz.numpy as knp
from kenaz import Op, debug, grad, jvp, vjp, vmap
from kenaz.errors import ConcretizationError, EscapedTracerError, KenazError

RNG = np.random.default_rng(0)
XS = RNG.uniform(-1, 1, (5, 3))
YS = RNG.uniform(-1, 1, (5, 3))


def loop(f, *batches):
    """``stack([f(*examples) for examples in zip(*batches)])`` as NumPy."""
    return np.stack([np.asarray(f(*examples)) for examples in zip(*batches, strict=True)])


def close(actual, expected, **kwargs) -> None:
    np.testing.assert_allclose(np.asarray(actual), np.asarray(expected), **kwargs)


# -- axes ----------------------------------------------------------------------------------
def test_matches_a_loop_over_examples():
    f = lambda x, y: knp.sum(knp.sin(x) * y) + x @ y
    close(vmap(f)(XS, YS), loop(f, XS, YS))


def test_per_example_shape_inside():
    shapes = []
    vmap(lambda x: shapes.append((x.shape, x.ndim, x.size, x.dtype)) or x)(knp.ones((4, 2, 3)))
    assert shapes == [((2, 3), 2, 6, np.dtype(np.float64))]


@pytest.mark.parametrize("axis", [0, 1, -1, -2])
def test_in_axes_int_and_negative(axis):
    x = RNG.uniform(size=(4, 6))
    expected = loop(lambda v: knp.cumsum(v) * 2, np.moveaxis(x, axis, 0))
    close(vmap(lambda v: knp.cumsum(v) * 2, in_axes=axis)(x), expected)


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_out_axes(axis):
    x = RNG.uniform(size=(5, 2, 3))
    out = vmap(lambda v: v.T, out_axes=axis)(x)
    close(out, np.moveaxis(np.transpose(x, (0, 2, 1)), 0, axis))


def test_in_axes_tuple_with_none_shares_an_argument():
    w = RNG.uniform(size=(3, 2))
    close(vmap(lambda x, w: x @ w, in_axes=(0, None))(XS, w), XS @ w)
    close(vmap(lambda x, w: x @ w, in_axes=[0, None])(XS, w), XS @ w)


def test_in_axes_pytree_prefix():
    params = {"w": RNG.uniform(size=(3,)), "b": RNG.uniform(size=(5,))}
    f = lambda p, x: knp.sum(p["w"] * x) + p["b"]
    out = vmap(f, in_axes=({"w": None, "b": 0}, 0))(params, XS)
    close(out, XS @ params["w"] + params["b"])


def test_keyword_arguments_are_batched_on_axis_0():
    out = vmap(lambda x, *, scale: x * scale, in_axes=0)(XS, scale=np.arange(5.0))
    close(out, XS * np.arange(5.0)[:, None])


def test_pytree_outputs_and_out_axes_prefix():
    out = vmap(lambda x: {"a": x, "b": (x.sum(), x * 2)}, out_axes={"a": 1, "b": 0})(XS)
    close(out["a"], XS.T)
    close(out["b"][0], XS.sum(1))
    close(out["b"][1], XS * 2)


def test_unbatched_outputs_are_broadcast_or_kept_with_none():
    const = knp.array([1.0, 2.0])
    out, kept = vmap(lambda x: (const, const), out_axes=(0, None))(XS)
    close(out, np.tile([1.0, 2.0], (5, 1)))
    close(kept, [1.0, 2.0])
    close(vmap(lambda x: 3.0)(XS), np.full(5, 3.0))


def test_axis_size_without_batched_inputs():
    out = vmap(lambda w: w * 2, in_axes=None, axis_size=4)(knp.ones(3))
    close(out, np.full((4, 3), 2.0))
    with pytest.raises(ValueError, match="axis_size"):
        vmap(lambda w: w, in_axes=None)(knp.ones(3))
    with pytest.raises(ValueError, match="axis_size=3 but"):
        vmap(lambda x: x, axis_size=3)(XS)


def test_mismatched_batch_sizes():
    with pytest.raises(ValueError, match=r"different sizes.*argument 0: 5, argument 1: 4"):
        vmap(lambda x, y: x)(XS, np.ones((4, 3)))


def test_out_of_range_axes():
    with pytest.raises(ValueError, match=r"axis 2 of argument 0, which has shape \(5, 3\)"):
        vmap(lambda x: x, in_axes=2)(XS)
    with pytest.raises(ValueError, match="axis 0 of argument 0, which has shape ()"):
        vmap(lambda x: x)(1.0)
    with pytest.raises(ValueError, match="out_axes asks for axis 3"):
        vmap(lambda x: x, out_axes=3)(XS)


def test_bad_specifications():
    with pytest.raises(ValueError, match="in_axes has 1 entries but"):
        vmap(lambda x, y: x, in_axes=(0,))(XS, YS)
    with pytest.raises(TypeError, match="ints and None"):
        vmap(lambda x: x, in_axes="0")
    with pytest.raises(ValueError, match="method"):
        vmap(lambda x: x, method="unroll")
    with pytest.raises(ValueError, match="out_axes is None for output"):
        vmap(lambda x: x, out_axes=None)(XS)


# -- closures and nesting ---------------------------------------------------------------------
def test_closed_over_tensors_batched_and_not():
    shared = knp.array([1.0, -1.0, 2.0])
    out = vmap(lambda x: vmap(lambda y: x * y + shared)(YS))(XS)
    close(out, XS[:, None, :] * YS[None, :, :] + [1.0, -1.0, 2.0])


def test_three_levels_of_nesting():
    x = RNG.uniform(size=(2, 3, 4, 5))
    f = lambda v: knp.sum(knp.tanh(v) ** 2) * v[0]
    nested = vmap(vmap(vmap(f)))(x)
    close(nested, (np.tanh(x) ** 2).sum(-1) * x[..., 0])
    mixed = vmap(vmap(vmap(f, in_axes=1), in_axes=0), in_axes=2)(x)
    per_example_last = np.transpose(x, (2, 0, 3, 1))  # (outer, middle, inner, example)
    expected = (np.tanh(per_example_last) ** 2).sum(-1) * per_example_last[..., 0]
    close(mixed, expected)


def test_nested_outer_product():
    xs, ys = np.arange(3.0), np.arange(4.0)
    close(vmap(lambda x: vmap(lambda y: x * y)(ys))(xs), np.outer(xs, ys))
    close(
        vmap(vmap(lambda x, y: x * y, in_axes=(None, 0)), in_axes=(0, None))(xs, ys),
        np.outer(xs, ys),
    )


# -- composition with the other transformations --------------------------------------------
def f_scalar(x):
    return knp.sum(knp.sin(x) * x**2)


def df_scalar(x):
    return np.cos(x) * x**2 + 2 * x * np.sin(x)


def test_vmap_of_grad():
    close(vmap(grad(f_scalar))(XS), df_scalar(XS))


def test_grad_of_vmap_through_a_sum():
    g = grad(lambda x: vmap(f_scalar)(x).sum())(XS)
    close(g, df_scalar(XS))
    g_axis1 = grad(lambda x: vmap(f_scalar, in_axes=1)(x).sum())(XS)
    close(g_axis1, df_scalar(XS))


def test_vmap_of_vmap_of_grad():
    x = RNG.uniform(-1, 1, (2, 3, 4))
    close(vmap(vmap(grad(f_scalar)))(x), df_scalar(x))


def test_vmap_of_jvp_and_jvp_of_vmap():
    tangents = RNG.uniform(size=XS.shape)
    pushed = vmap(lambda x, t: jvp(f_scalar, (x,), (t,))[1])(XS, tangents)
    close(pushed, (df_scalar(XS) * tangents).sum(1))
    _, tangent_out = jvp(vmap(f_scalar), (XS,), (tangents,))
    close(tangent_out, (df_scalar(XS) * tangents).sum(1))


def test_vmap_of_vjp_pullback():
    out, pullback = vjp(lambda x: knp.tanh(x), XS[0])
    rows = vmap(pullback)(np.eye(3))
    close(rows[0], np.diag(1 - np.tanh(XS[0]) ** 2))


def test_vmap_of_debug_prints_per_example_shapes():
    buffer = io.StringIO()
    out = vmap(debug(lambda x: knp.sin(x) * 2, file=buffer, values=True))(XS)
    close(out, np.sin(XS) * 2)
    assert "sin(float64[3]) -> float64[3]" in buffer.getvalue()


def test_debug_of_vmap_shows_batched_ops():
    buffer = io.StringIO()
    debug(vmap(lambda x: knp.sin(x)), file=buffer)(XS)
    assert "sin(float64[5,3]) -> float64[5,3]" in buffer.getvalue()


# -- perturbation confusion ----------------------------------------------------------------
def test_perturbation_confusion_vmap_variants():
    inner = lambda x: grad(lambda y: x * y)(x)  # d/dy (x y) = x, so d/dx of it is 1
    xs = knp.array([2.0, -3.0, 0.5])
    close(grad(inner)(2.0), 1.0)
    close(vmap(grad(inner))(xs), np.ones(3))
    close(grad(lambda x: vmap(inner)(x).sum())(xs), np.ones(3))
    close(vmap(lambda x: jvp(lambda y: x * y, (x,), (1.0,))[1])(xs), xs.numpy())
    # A per-example tensor closed over by an inner vmap is shared, not re-batched.
    rows = np.arange(6.0).reshape(2, 3)
    close(vmap(lambda x: vmap(lambda y: x * y)(x))(rows), rows[:, :, None] * rows[:, None, :])


# -- per-example gradients -------------------------------------------------------------------
def mlp_loss(params, x, y):
    (w1, b1), (w2, b2) = params
    hidden = knp.tanh(x @ w1 + b1)
    prediction = hidden @ w2 + b2
    return knp.sum((prediction - y) ** 2)


def test_per_example_gradients_of_an_mlp_equal_a_loop_of_grad():
    params = (
        (knp.array(RNG.normal(size=(4, 8))), knp.array(RNG.normal(size=8))),
        (knp.array(RNG.normal(size=(8, 1))), knp.array(RNG.normal(size=1))),
    )
    x, y = RNG.normal(size=(6, 4)), RNG.normal(size=(6, 1))
    batched = vmap(grad(mlp_loss), in_axes=(None, 0, 0))(params, x, y)
    looped = [grad(mlp_loss)(params, x[i], y[i]) for i in range(6)]
    for got, *want in zip(kenaz.tree.leaves(batched), *map(kenaz.tree.leaves, looped), strict=True):
        close(got, np.stack([np.asarray(w) for w in want]), rtol=1e-12, atol=1e-12)


def test_per_example_labels_index_log_probabilities():
    logits = RNG.normal(size=(4, 5))
    labels = np.array([0, 3, 3, 1])
    nll = lambda z, label: -(z - knp.logsumexp(z))[label]
    expected = [
        float(nll(knp.array(z), int(label))) for z, label in zip(logits, labels, strict=True)
    ]
    close(vmap(nll)(logits, labels), expected)
    close(vmap(grad(nll))(logits, labels), loop(grad(nll), logits, labels))


# -- concrete values, method="loop", escaped views ------------------------------------------
@pytest.mark.parametrize(
    "ask",
    [
        bool,
        float,
        int,
        lambda t: t.numpy(),
        np.asarray,
        lambda t: t.item(),
        lambda t: 1 if t else 0,
    ],
    ids=["bool", "float", "int", "numpy", "asarray", "item", "if"],
)
def test_concrete_values_of_batched_tensors_raise_with_the_fix(ask):
    with pytest.raises(ConcretizationError) as info:
        vmap(lambda x: ask(x.sum()))(XS)
    message = str(info.value)
    assert "per-example shape ()" in message
    assert 'vmap(f, method="loop")' in message
    assert isinstance(info.value, KenazError)


def test_repr_of_a_batched_tensor_does_not_raise():
    seen = []
    vmap(lambda x: seen.append(repr(x)) or x)(XS)
    assert seen == ["BatchedTensor(shape=(3,), dtype=float64, batch_size=5, inside vmap)"]


def relu_or_square(x):
    return x * 2 if x > 0 else x**2  # data-dependent control flow (bool of a comparison)


def test_method_loop_runs_python_control_flow():
    xs = knp.array([-2.0, 1.0, 3.0])
    close(vmap(relu_or_square, method="loop")(xs), [4.0, 2.0, 6.0])
    close(grad(lambda v: vmap(relu_or_square, method="loop")(v).sum())(xs), [-4.0, 2.0, 2.0])
    close(vmap(grad(relu_or_square), method="loop")(xs), [-4.0, 2.0, 2.0])
    out = vmap(lambda x, w: (x * w, w), in_axes=(0, None), out_axes=(1, None), method="loop")(
        np.ones((3, 2)), 5.0
    )
    close(out[0], np.full((2, 3), 5.0))
    close(out[1], 5.0)


def test_escaped_per_example_tensor_raises_when_used():
    saved = []
    vmap(lambda x: saved.append(x) or x * 2)(XS)
    escaped = saved[0]
    for use in (
        lambda: escaped + 1,
        lambda: float(escaped.sum()),
        lambda: np.asarray(escaped),
        lambda: grad(lambda v: knp.sum(v * escaped))(np.ones(3)),
        lambda: vmap(lambda v: v * escaped)(YS),
    ):
        with pytest.raises(EscapedTracerError, match=r"shape \(3,\).*after the vmap"):
            use()
    assert "escaped" in repr(escaped)


# -- the per-example fallback ----------------------------------------------------------------
def test_op_without_batching_rule_falls_back_with_one_warning():
    cube = Op(
        "test_cube_without_rule",
        lambda x: x**3,
        jvp=[lambda t, ans, x: 3 * x * x * t],
        vjp=[lambda ans, x: lambda g: 3 * x * x * g],
    )
    with pytest.warns(UserWarning, match="'test_cube_without_rule' has no batching rule"):
        close(vmap(cube)(XS), XS**3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        close(vmap(cube, in_axes=1)(XS), XS.T**3)  # warned once only
        close(vmap(grad(lambda x: cube(x).sum()))(XS), 3 * XS**2)


def test_multiple_results_op_batches_with_and_without_rule():
    def split_impl(x):
        return x[..., 0], x[..., 1]

    def split_rule(op, args, batch_axes):
        (x,), (b,) = args, batch_axes
        x = knp.moveaxis(x, b, 0)
        return op(x), (0, 0)

    with_rule = Op("test_split", split_impl, batch=split_rule, multiple_results=True)
    without = Op("test_split_without_rule", split_impl, multiple_results=True)
    x = RNG.uniform(size=(4, 3, 2))
    for op in (with_rule, without):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            first, second = vmap(op)(x)
        close(first, x[..., 0])
        close(second, x[..., 1])


def test_numpy_predicates_and_sorting_batch():
    x = RNG.uniform(size=(4, 5))
    cases = {
        "any": (lambda v: knp.any(v > 0.5), lambda v: np.any(v > 0.5, axis=1)),
        "all": (lambda v: knp.all(v > 0.1), lambda v: np.all(v > 0.1, axis=1)),
        "count_nonzero": (lambda v: knp.count_nonzero(v > 0.5), lambda v: (v > 0.5).sum(1)),
        "isclose": (
            lambda v: knp.isclose(v, 0.5, atol=0.2),
            lambda v: np.isclose(v, 0.5, atol=0.2),
        ),
        "sort": (knp.sort, lambda v: np.sort(v, axis=1)),
        "argsort": (knp.argsort, lambda v: np.argsort(v, axis=1, kind="stable")),
        "median": (knp.median, lambda v: np.median(v, axis=1)),
    }
    for name, (ours, reference) in cases.items():
        np.testing.assert_allclose(np.asarray(vmap(ours)(x)), reference(x), err_msg=name)


def test_an_exception_inside_leaves_no_handler_behind():
    def fails(x):
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        vmap(fails)(XS)
    assert kenaz.effects.current_handlers() == ()
    close(vmap(knp.sin)(XS), np.sin(XS))


def test_shape_errors_name_per_example_shapes():
    from kenaz.errors import ShapeError

    with pytest.raises(ShapeError, match=r"per-example shapes \(3,\) and \(4,\)"):
        vmap(lambda a: a + knp.ones(4))(XS)
    with pytest.raises(ShapeError, match=r"per-example shapes \(3,\) and \(4,\)"):
        vmap(vmap(lambda a: a * knp.ones(4), in_axes=1))(np.ones((2, 3, 5)))


def test_vmap_checks_int_and_none_axes_without_optree(monkeypatch: pytest.MonkeyPatch) -> None:
    """Axes that are ints, None or tuples of them are checked without optree: its flatten
    briefly releases the GIL, and `grad` of a function that builds a `vmap` on every call
    then starved other threads for seconds. Axes in another container still go to optree,
    and a bad axis is still refused."""
    import optree

    calls: list[str] = []
    real_leaves, real_flatten = optree.tree_leaves, optree.tree_flatten

    def counted(name, real):
        return lambda *args, **kwargs: calls.append(name) or real(*args, **kwargs)

    monkeypatch.setattr(optree, "tree_leaves", counted("tree_leaves", real_leaves))
    monkeypatch.setattr(optree, "tree_flatten", counted("tree_flatten", real_flatten))
    for in_axes, out_axes in ((0, 0), (None, 1), ((0, None), 0), ((1, 0), (0, None))):
        vmap(lambda a, b: a, in_axes=in_axes, out_axes=out_axes)
    assert calls == []
    vmap(lambda a, b: a, in_axes=[0, {"w": None}])
    assert calls, "axes in a dict are flattened by optree"
    with pytest.raises(TypeError, match="in_axes must contain ints and None"):
        vmap(lambda a: a, in_axes=(0.5,))


def test_common_calls_skip_the_pytree_inputs_and_agree_with_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Tensors with int axes (negative ones too), shared tensors, numbers and tuples of them
    take vmap's short path, without `_Inputs`; what they give equals the general path's
    (``method="loop"``). A dict argument, or batched sizes that differ, still go through
    `_Inputs`, which finds the errors."""
    import kenaz.vectorize as vectorize

    xs, w = knp.asarray(np.arange(12.0).reshape(3, 4)), knp.asarray(np.arange(4.0))
    params = (w, 2.0)

    def f(p, x, y):
        return knp.sum(p[0] * x) * p[1] + y

    real = vectorize._Inputs
    for in_axes, args in (
        ((None, 0, 0), (params, xs, xs[:, 0])),
        ((None, -1, None), (params, xs.T, 1.5)),  # a negative axis, a shared number
    ):
        expected = vmap(f, in_axes=in_axes, method="loop")(*args)
        monkeypatch.setattr(vectorize, "_Inputs", None)  # any use raises
        got = vmap(f, in_axes=in_axes)(*args)
        monkeypatch.setattr(vectorize, "_Inputs", real)
        np.testing.assert_allclose(got.numpy(), expected.numpy())
    made: list[object] = []
    monkeypatch.setattr(vectorize, "_Inputs", lambda *a: made.append(a) or real(*a))
    out = vmap(lambda d, x: d["w"] * x, in_axes=(None, 0))({"w": w}, xs)
    np.testing.assert_allclose(out.numpy(), w.numpy() * xs.numpy())
    assert len(made) == 1, "a dict argument goes through _Inputs"
    with pytest.raises(ValueError, match="different sizes"):
        vmap(lambda a, b: a + b)(xs, knp.ones((2, 4)))
    assert len(made) == 2


def test_binary_ops_take_every_kind_of_operand_as_the_loop_does() -> None:
    """The batching handler's unrolled binary path (views, plain tensors, numbers, lists of
    tensors in either place, batch axes that line up or not) gives what running the function
    per example gives (``method="loop"``), bit for bit."""
    xs, ys = knp.asarray(XS), knp.asarray(YS)
    w = knp.asarray(RNG.uniform(-1, 1, 3))
    parts = [knp.asarray(0.5), knp.asarray(-1.5), knp.asarray(2.0)]
    cases = {
        "view, view": (lambda x, y: knp.arctan2(x, y), (xs, ys), 0),
        "views on different axes": (lambda x, y: x * y, (xs, ys.T), (0, 1)),
        "view, plain": (lambda x: x - w, (xs,), 0),
        "plain, view": (lambda x: knp.arctan2(w, x), (xs,), 0),
        "view, number": (lambda x: x / 3.0, (xs,), 0),
        "number, view": (lambda x: 2**x, (xs,), 0),
        "view, list": (lambda x: knp.add(x, parts), (xs,), 0),
        "list, view": (lambda x: knp.multiply(parts, x), (xs,), 0),
        "view (3,), view (3, 1)": (lambda x, y: x - y[:, None], (xs, ys), 0),
        "three operands": (lambda x, y: knp.where(x > 0, x, y), (xs, ys), 0),
    }
    for name, (f, args, in_axes) in cases.items():
        expected = vmap(f, in_axes=in_axes, method="loop")(*args).numpy()
        got = vmap(f, in_axes=in_axes)(*args).numpy()
        assert got.dtype == expected.dtype and np.array_equal(got, expected), name


def test_plain_inputs_of_grad_inside_vmap_skip_the_alias_only_when_nothing_sees_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``grad`` inside ``vmap`` gives a plain (shared) tensor its fresh identity without
    performing the alias through vmap's handler, which would only hand it on. With a
    handler outside that sees ops (a counter) the alias is performed, and it sees it. The
    per-example gradients are the same, bit for bit."""
    import kenaz.vectorize as vectorize

    class CountOps(kenaz.Handler):
        def __init__(self) -> None:
            self.names: list[str] = []

        def handle(self, op, args, params):
            self.names.append(op.name)
            return kenaz.perform_args(op, args, params)

    reached_vmap: list[str] = []
    real_handle = vectorize.BatchHandler.handle

    def spy(self, op, args, params):
        reached_vmap.append(op.name)
        return real_handle(self, op, args, params)

    monkeypatch.setattr(vectorize.BatchHandler, "handle", spy)
    w = knp.asarray(RNG.uniform(-1, 1, (3, 2)))
    per_example = vmap(grad(lambda w, x: knp.sum(knp.tanh(x @ w))), in_axes=(None, 0))
    plain = per_example(w, knp.asarray(XS)).numpy()
    assert "alias" not in reached_vmap
    counter = CountOps()
    with counter:
        seen = per_example(w, knp.asarray(XS)).numpy()
    assert reached_vmap.count("alias") == 1 and "alias" in counter.names
    assert np.array_equal(plain, seen)


def test_elementwise_rule_pads_the_lower_rank_as_its_general_path_does() -> None:
    """Two operands batched in front with different per-example ranks: the elementwise
    rule's short path (one reshape of the lower-rank one) gives what its general path gives
    when the same batches come with the batch axis elsewhere, bit for bit."""
    from kenaz.ops import batching
    from kenaz.ops.elementwise import multiply, subtract

    x = knp.asarray(RNG.uniform(-1, 1, (5, 4, 1)))  # per example (4, 1)
    y = knp.asarray(RNG.uniform(-1, 1, (5, 3)))  # per example (3,)
    for op in (multiply, subtract):
        for a, b in ((x, y), (y, x)):
            short, short_axis = batching.elementwise(op, [a, b], [0, 0])
            moved = knp.moveaxis(a, 0, -1)
            general, general_axis = batching.elementwise(op, [moved, b], [a.ndim - 1, 0])
            assert short_axis == general_axis == 0
            assert np.array_equal(short.numpy(), general.numpy())


def test_a_tuple_of_outputs_batched_in_front_equals_the_pytree_path() -> None:
    """A tuple of outputs, each batched along axis 0 with ``out_axes=0`` (vmap of grad with
    respect to a tuple of parameters), is returned without the pytree pass over outputs:
    the same tensors as that pass gives (``out_axes`` spelled per output), and an output
    batched elsewhere, or not batched, still goes through it."""
    w, b = knp.asarray(RNG.uniform(-1, 1, (3, 2))), knp.asarray(RNG.uniform(-1, 1, 2))
    loss = grad(lambda p, x: knp.sum(knp.tanh(x @ p[0] + p[1])))
    xs = knp.asarray(XS)
    fast = vmap(loss, in_axes=((None, None), 0))((w, b), xs)
    general = vmap(loss, in_axes=((None, None), 0), out_axes=(0, 0))((w, b), xs)
    assert type(fast) is tuple and len(fast) == 2
    for got, expected in zip(fast, general, strict=True):
        assert np.array_equal(got.numpy(), expected.numpy())
    mixed = vmap(lambda x: (x * 2.0, knp.sum(w), x.T), in_axes=1)(knp.asarray(np.ones((2, 5, 3))))
    assert [m.shape for m in mixed] == [(5, 2, 3), (5,), (5, 3, 2)]


def test_vmap_of_a_float0_tangent_gives_a_batched_float0() -> None:
    """jvp gives an integer result a float0 tangent; vmap of it stacks that float0 (as JAX),
    in the vectorized and the loop methods, at any out axis: no error, never a number."""

    def f(x):
        return knp.sin(x), knp.argmax(x)

    def tangents(x):
        return kenaz.jvp(f, (x,), (knp.ones_like(x),))[1]

    xs = np.linspace(0.0, 1.0, 6).reshape(3, 2)
    for method in ("vectorize", "loop"):
        dsin, dargmax = kenaz.vmap(tangents, out_axes=(1, 0), method=method)(xs)
        np.testing.assert_allclose(np.asarray(dsin), np.cos(xs).T)  # the loop's answer
        assert dargmax.dtype == kenaz.float0 and dargmax.shape == (3,), method
    unbatched = kenaz.vmap(lambda _: tangents(xs[0]), axis_size=4)(np.ones(4))[1]
    assert unbatched.dtype == kenaz.float0 and unbatched.shape == (4,)
