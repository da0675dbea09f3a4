"""Changing Tensors in place: NumPy's semantics where no transformation tracks them, clear
errors where one does, and the version check of what a tape saved (docs/conventions.md)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kenaz
import kenaz.numpy as knp
from kenaz import Tensor

# -- the four shapes of data preparation that used to stop programs ------------------------------


def test_data_preparation_in_place_updates():
    # features[:, 0] += 1 on knp.zeros
    features = knp.zeros((5, 3))
    features[:, 0] += 1
    np.testing.assert_array_equal(features.numpy()[:, 0], np.ones(5))
    assert float(features.sum()) == 5.0

    # images[mask] = 1.0 with a boolean mask (a Tensor and an ndarray mask)
    images = knp.zeros((4, 8, 8))
    mask = knp.arange(64).reshape(8, 8) % 3 == 0
    images[:, mask] = 1.0
    expected = np.zeros((4, 8, 8))
    expected[:, np.arange(64).reshape(8, 8) % 3 == 0] = 1.0
    np.testing.assert_array_equal(images.numpy(), expected)
    noisy = knp.ones((2, 3)) * 0.5
    noisy[noisy.numpy() > 0.2] = 1.0
    np.testing.assert_array_equal(noisy.numpy(), np.ones((2, 3)))

    # seqs[:, i, :] = one_hot(...) in a loop
    def one_hot(labels, depth):
        return knp.eye(depth)[labels]

    tokens = np.array([[0, 2, 1], [1, 1, 0]])
    seqs = knp.zeros((2, 3, 4))
    for i in range(3):
        seqs[:, i, :] = one_hot(tokens[:, i], 4)
    np.testing.assert_array_equal(seqs.numpy(), np.eye(4)[tokens])

    # occlusion[15:25, 15:25] = 0.0 on knp.ones
    occlusion = knp.ones((40, 40))
    occlusion[15:25, 15:25] = 0.0
    assert float(occlusion.sum()) == 1600 - 100


def test_the_prepared_data_then_feeds_a_gradient():
    x = knp.zeros((3, 2))
    x[:, 0] += knp.arange(3.0)
    x[1] = 5.0
    g = kenaz.grad(lambda w: ((x @ w) ** 2).sum())(knp.ones(2))
    expected = 2 * x.numpy().T @ (x.numpy() @ np.ones(2))
    np.testing.assert_allclose(g.numpy(), expected)


# -- NumPy's semantics --------------------------------------------------------------------------
def test_views_share_memory_as_numpys_do():
    x = knp.zeros(6)
    row = x[2:4]  # a basic index is a view, as in NumPy
    row += 1.0
    np.testing.assert_array_equal(x.numpy(), [0, 0, 1, 1, 0, 0])
    picked = x[[0, 1]]  # an advanced index is a copy
    picked[0] = 9.0
    assert float(x[0]) == 0.0
    reshaped = x.reshape(2, 3)
    reshaped[0, 0] = 7.0
    assert float(x[0]) == 7.0


def test_copies_are_copies():
    x = knp.ones(3)
    for copied in [x.copy(), knp.copy(x), knp.array(x), x.astype(x.dtype), +x, x.flatten()]:
        copied[0] = -1.0
        assert float(x[0]) == 1.0
    shared = knp.asarray(x)  # asarray does not copy, as NumPy's
    shared[0] = 2.0
    assert float(x[0]) == 2.0


def test_in_place_operators_keep_the_object_and_numpys_casting():
    x = knp.ones(3)
    alias = x
    x += 1
    x *= knp.array([1.0, 2.0, 3.0])
    x -= 0.5
    x /= 2
    x **= 2
    assert x is alias
    np.testing.assert_allclose(x.numpy(), ((np.array([2, 4, 6]) - 0.5) / 2) ** 2)
    ints = knp.arange(3)
    with pytest.raises(TypeError, match="Cannot cast"):
        ints += 1.5  # NumPy refuses same_kind-unsafe in-place casts too
    bits = knp.array([True, False])
    bits |= knp.array([False, True])
    assert bits.tolist() == [True, True]
    m = knp.eye(2)
    m @= knp.array([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(m.numpy(), [[1, 2], [3, 4]])


def test_a_numpy_scalar_value_is_rebound_as_numpy_scalars_are():
    total = knp.sum(knp.ones(3))  # a 0-d result holding a NumPy scalar
    same = total
    total += 1
    assert float(total) == 4.0 and float(same) == 3.0
    with pytest.raises(TypeError, match="NumPy scalar"):
        same[()] = 1.0


def test_read_only_memory_says_so():
    x = knp.broadcast_to(knp.ones(3), (2, 3))
    with pytest.raises(ValueError, match="read-only"):
        x[0, 0] = 2.0


@settings(max_examples=40, deadline=None)
@given(
    st.integers(0, 5),
    st.integers(0, 6),
    st.floats(-3, 3, allow_nan=False),
)
def test_assignment_matches_numpy(start, stop, value):
    ours, theirs = knp.arange(6.0), np.arange(6.0)
    ours[start:stop] = value
    theirs[start:stop] = value
    ours[start:stop] += 1.0
    theirs[start:stop] += 1.0
    np.testing.assert_array_equal(ours.numpy(), theirs)


def test_numpy_functions_that_write_into_a_tensor():
    m = knp.ones((3, 3))
    np.fill_diagonal(m, 0.0)
    np.testing.assert_array_equal(m.numpy(), 1 - np.eye(3))
    knp.fill_diagonal(m, 2.0)
    np.testing.assert_array_equal(np.diag(m.numpy()), [2, 2, 2])
    counts = knp.zeros(3)
    np.add.at(counts, [0, 0, 2], 1.0)
    np.testing.assert_array_equal(counts.numpy(), [2, 0, 1])
    target = knp.zeros(2)
    np.copyto(target, [3.0, 4.0])
    np.testing.assert_array_equal(target.numpy(), [3, 4])


# -- inside transformations ---------------------------------------------------------------------
def test_assigning_into_a_tracked_tensor_names_at():
    def f(x):
        x[0] = 0.0
        return x.sum()

    with pytest.raises(TypeError, match=r"x\.at\[index\]\.set\(value\)"):
        kenaz.grad(f)(knp.ones(3))

    def g(x):
        h = x * 2
        h[1:] += 1.0  # a view of a tracked tensor, then assigned back
        return h.sum()

    with pytest.raises(TypeError, match=r"\.at\[index\]"):
        kenaz.grad(g)(knp.ones(3))


def test_assigning_a_tracked_value_into_an_untracked_tensor_raises():
    def f(x):
        out = knp.zeros(3)
        out[0] = x[0] * 2  # would silently drop the derivative
        return out.sum()

    with pytest.raises(TypeError, match="silently dropped"):
        kenaz.grad(f)(knp.ones(3))
    with pytest.raises(TypeError, match="silently dropped"):
        kenaz.jvp(f, (knp.ones(3),), (knp.ones(3),))


def test_vmap_views_refuse_assignment():
    def f(x):
        x[0] = 1.0
        return x

    with pytest.raises(TypeError, match=r"\.at\[index\]"):
        kenaz.vmap(f)(knp.ones((2, 3)))

    def g(x):
        buffer = knp.zeros(3)
        buffer[0] = x[0]  # a batched value into an unbatched tensor
        return buffer

    with pytest.raises(TypeError, match="silently dropped"):
        kenaz.vmap(g)(knp.ones((2, 3)))


def test_untracked_scratch_tensors_inside_a_transformation_change_in_place():
    def f(x):
        weights = knp.ones(3)
        weights[0] = 3.0  # a constant built in place: fine
        acc = knp.zeros(3)
        acc += x  # a tracked operand: the name is rebound, the derivative flows
        acc *= weights
        return acc.sum()

    np.testing.assert_allclose(kenaz.grad(f)(knp.ones(3)).numpy(), [3, 1, 1])
    kenaz.testing.check_grads(f, (np.array([0.3, -1.0, 2.0]),), order=2)
    np.testing.assert_allclose(kenaz.vmap(kenaz.grad(f))(knp.ones((2, 3))).numpy(), [[3, 1, 1]] * 2)


def test_in_place_operator_on_a_tracked_tensor_rebinds_as_in_jax():
    def f(x):
        h = x * 2
        h += 1.0
        h *= x
        return h.sum()

    x = np.array([0.5, -1.0, 2.0])
    np.testing.assert_allclose(kenaz.grad(f)(x).numpy(), 4 * x + 1)


# -- the version check ---------------------------------------------------------------------------
def test_mutating_a_saved_input_before_the_backward_pass_raises_naming_the_op():
    scale = knp.array([1.0, 2.0, 3.0])

    def loss(x):
        y = knp.sin(x * scale)  # `mul` keeps `scale` for x's cotangent
        scale[0] = 10.0  # ... which is changed before the backward pass
        return y.sum()

    with pytest.raises(RuntimeError, match="`mul` saved for the backward pass was changed"):
        kenaz.grad(loss)(knp.ones(3))


def test_a_vjp_pullback_called_after_its_input_changed_raises():
    x = knp.array([0.1, 0.2, 0.3])
    out, pullback = kenaz.vjp(knp.sin, x)  # `sin` keeps x for cos(x)
    np.testing.assert_allclose(pullback(knp.ones(3))[0].numpy(), np.cos([0.1, 0.2, 0.3]))
    x[1] = 5.0
    with pytest.raises(RuntimeError, match="`sin` saved"):
        pullback(knp.ones(3))
    # Also through a view, and for the output an op kept (exp keeps its result).
    y = knp.array([0.1, 0.2])
    out, pullback = kenaz.vjp(knp.exp, y)
    out[0:1] *= 2.0
    with pytest.raises(RuntimeError, match="`exp` saved"):
        pullback(knp.ones(2))


def test_changes_that_no_entry_saved_are_fine():
    x = knp.array([1.0, 2.0])
    out, pullback = kenaz.vjp(lambda v: v * 3.0 + 1.0, x)  # nothing keeps x
    x[0] = 100.0
    np.testing.assert_allclose(pullback(knp.ones(2))[0].numpy(), [3.0, 3.0])

    def f(v):
        c = knp.ones(2)
        c[0] = 2.0  # changed *before* an op saves it: the op saw the new value
        return (v * c).sum()

    np.testing.assert_allclose(kenaz.grad(f)(x).numpy(), [2.0, 1.0])


def test_linearize_checks_its_residuals():
    x = knp.array([0.1, 0.2])
    _, f_jvp = kenaz.linearize(knp.sin, x)
    x[0] = 3.0
    with pytest.raises(RuntimeError, match="linearization"):
        f_jvp(knp.ones(2))


def test_a_changed_numpy_function_output_in_a_pullback_is_caught():
    m = knp.ones((2, 2))
    _, pullback = kenaz.vjp(lambda a: (a * m).sum(), knp.ones((2, 2)))
    np.fill_diagonal(m, 0.0)
    with pytest.raises(RuntimeError, match="`mul` saved"):
        pullback(knp.ones(()))


def test_tensor_of_a_user_array_shares_its_memory():
    data = np.zeros(3)
    t = Tensor(data)
    t[0] = 1.0
    assert data[0] == 1.0


def test_many_changes_keep_the_notes_bounded_and_still_caught():
    x = knp.array([0.1, 0.2, 0.3])
    _, pullback = kenaz.vjp(knp.sin, x)
    data = knp.zeros((1000, 2))
    for i in range(1000):  # data preparation while a pullback lives
        data[i, 0] = i
    assert len(pullback_notes(pullback)) <= 300
    pullback(knp.ones(3))  # nothing it saved changed
    x[0] = 1.0
    with pytest.raises(RuntimeError, match="`sin` saved"):
        pullback(knp.ones(3))


def pullback_notes(pullback):
    """The notes of the tape a vjp pullback keeps (found through its closure)."""
    from kenaz.reverse import ReverseHandler

    for cell in pullback.__closure__:
        if isinstance(cell.cell_contents, ReverseHandler):
            return cell.cell_contents.mutations
    raise AssertionError("no tape in the pullback's closure")


def test_custom_vjp_residuals_and_checkpoint_inputs_are_checked():
    @kenaz.custom_vjp
    def scaled(x, c):
        return x * c

    scaled.defvjp(lambda x, c: (x * c, (c,)), lambda res, g: (g * res[0], knp.zeros_like(res[0])))
    c = knp.array([1.0, 2.0])
    _, pullback = kenaz.vjp(lambda x: scaled(x, c), knp.ones(2))
    c[0] = 5.0
    with pytest.raises(RuntimeError, match="custom rule .* of `scaled`"):
        pullback(knp.ones(2))

    weights = knp.array([1.0, 2.0])

    def layer(x):
        return knp.sin(x * weights)

    _, pullback = kenaz.vjp(lambda v: kenaz.checkpoint(layer)(v).sum(), knp.ones(2))
    weights[1] = 7.0  # the recomputation in the backward pass would see it
    with pytest.raises(RuntimeError, match="checkpoint.* of `layer`"):
        pullback(knp.ones(()))


def test_custom_vjp_residuals_that_are_neither_inputs_nor_outputs_are_checked():
    # `scale` is no input of the call (no transformation tracks it, so it is not lifted)
    # and no output: only the residuals bwd reads keep it.
    scale, unrelated = knp.array([1.0, 2.0]), knp.array([3.0, 4.0])

    @kenaz.custom_vjp
    def scaled(x):
        return x * scale

    scaled.defvjp(lambda x: (x * scale, {"scale": scale}), lambda res, g: (g * res["scale"],))
    _, pullback = kenaz.vjp(scaled, knp.ones(2))
    unrelated[0] = 0.0  # memory no residual shares: no error
    np.testing.assert_array_equal(pullback(knp.ones(2))[0].numpy(), [1.0, 2.0])
    _, pullback = kenaz.vjp(scaled, knp.ones(2))
    scale[0] = 5.0  # bwd would read 5 instead of the 1 the forward pass used
    with pytest.raises(RuntimeError, match="custom rule .* of `scaled`"):
        pullback(knp.ones(2))


@pytest.mark.parametrize(
    "product",
    [lambda x, c: knp.sum(x * c), lambda x, c: knp.einsum("i,i->", x, c)],
    ids=["mul", "einsum"],
)
def test_a_product_keeps_only_the_operands_its_rule_reads(product):
    # x's rule reads c, not x: changing x after the forward pass is no error (einsum stated
    # all its operands, and raised here); changing c is.
    x, c = knp.array([1.0, 2.0]), knp.array([3.0, 4.0])
    _, pullback = kenaz.vjp(lambda x: product(x, c), x)
    x[0] = 5.0
    np.testing.assert_array_equal(pullback(knp.ones(()))[0].numpy(), [3.0, 4.0])
    _, pullback = kenaz.vjp(lambda x: product(x, c), knp.array([1.0, 2.0]))
    c[0] = 0.0
    with pytest.raises(RuntimeError, match="the op `(mul|einsum)`"):
        pullback(knp.ones(()))


_SPD = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])
# A function of a matrix whose op's rule does not read it (it reads the factors), and one
# whose rule does (slogdet: the inverse).
_DECOMPOSITIONS = {
    "qr": (lambda a: knp.sum(knp.linalg.qr(a)[1]), False),
    "svd": (lambda a: knp.sum(knp.linalg.svd(a, full_matrices=False)[1]), False),
    "solve's right-hand side": (lambda b: knp.sum(knp.linalg.solve(_SPD, b)), False),
    "slogdet": (lambda a: knp.linalg.slogdet(a)[1], True),
}


@pytest.mark.parametrize("name", list(_DECOMPOSITIONS))
def test_a_decomposition_keeps_what_its_rule_reads(name):
    f, reads_input = _DECOMPOSITIONS[name]
    x = knp.array(_SPD.copy())
    expected = kenaz.grad(f)(x).numpy()
    _, pullback = kenaz.vjp(f, x)
    x[0, 0] = 9.0  # after the forward pass
    if reads_input:
        with pytest.raises(RuntimeError, match="the op `slogdet`"):
            pullback(knp.ones(()))
    else:  # it stated everything, so this raised
        np.testing.assert_allclose(pullback(knp.ones(()))[0].numpy(), expected, rtol=1e-12)


def test_results_of_a_transformation_never_share_one_object():
    # add's pullback passes one cotangent to both inputs; changing one gradient in place
    # (an optimizer's `g *= lr`) must not change the other.
    x, y = knp.ones(3), knp.ones(3)
    gx, gy = kenaz.grad(lambda x, y: knp.sum(knp.sin(x + y)), argnums=(0, 1))(x, y)
    assert gx is not gy
    expected = np.cos(2.0) * np.ones(3)
    gx *= 0.5
    np.testing.assert_allclose(gy.numpy(), expected)
    np.testing.assert_allclose(gx.numpy(), 0.5 * expected)
    # jvp: x + 1 and x + 2 both pass the input's tangent through
    _, (t1, t2) = kenaz.jvp(lambda x: (x + 1, x + 2), (x,), (knp.ones(3),))
    assert t1 is not t2
    t1 *= 3.0
    np.testing.assert_array_equal(t2.numpy(), np.ones(3))
    # the copies are ops: a second derivative through them is still right
    hess = kenaz.jacfwd(kenaz.grad(lambda x, y: knp.sum((x + y) ** 3), argnums=(0, 1)))(x, y)
    np.testing.assert_allclose(hess[1].numpy(), 12.0 * np.eye(3))


def test_records_of_a_finished_transformation_do_not_make_a_tensor_tracked():
    # an aux output keeps its record of the grad that made it; a later grad does not track it
    def loss_and_hidden(x):
        hidden = x * 2.0
        return knp.sum(hidden), hidden

    _, hidden = kenaz.grad(loss_and_hidden, has_aux=True)(knp.ones(3))

    def loss(z):
        hidden[0] = 5.0  # scratch data for this grad: untracked by it
        return knp.sum(z * hidden)

    np.testing.assert_array_equal(kenaz.grad(loss)(knp.ones(3)).numpy(), [5.0, 2.0, 2.0])
    # while its own transformation runs, the same kind of tensor is tracked and refuses
    def tracked_assignment(x):
        y = x * 2.0
        y[0] = 1.0
        return knp.sum(y)

    with pytest.raises(TypeError, match=r"\.at\["):
        kenaz.grad(tracked_assignment)(knp.ones(3))
