"""check_op for matmul and einsum, and the products composed from them."""

from __future__ import annotations

import numpy as np
import pytest

import kenaz.numpy as knp

from .cases import OpCase, make_check_op_test, uniform


def _case(name, function, *shapes) -> OpCase:
    args = tuple(uniform(shape, -1, 1, seed) for seed, shape in enumerate(shapes))
    return OpCase(name, function, args)


def _einsum(spec, *shapes) -> OpCase:
    return _case(f"einsum-{spec}", lambda *xs: knp.einsum(spec, *xs), *shapes)


MATMUL_CASES = [
    _case("matmul-matrix-matrix", knp.matmul, (2, 3), (3, 4)),
    _case("matmul-vector-matrix", knp.matmul, (3,), (3, 4)),
    _case("matmul-matrix-vector", knp.matmul, (2, 3), (3,)),
    _case("matmul-vector-vector", knp.matmul, (3,), (3,)),
    _case("matmul-batched", knp.matmul, (2, 2, 3), (2, 3, 4)),
    _case("matmul-broadcast-stack", knp.matmul, (2, 1, 2, 3), (3, 3, 2)),
    _case("matmul-vector-stack", knp.matmul, (3,), (2, 3, 2)),
    _case("matmul-stack-vector", knp.matmul, (2, 2, 3), (3,)),
    _case("matmul-operator", lambda x, y: x @ y, (2, 3), (3, 2)),
    _case("matmul-same-operand", lambda x: x @ x, (3, 3)),
]

EINSUM_CASES = [
    _einsum("ij,jk->ik", (2, 3), (3, 4)),
    _einsum("ij,jk", (2, 3), (3, 4)),
    _einsum("i,i->", (4,), (4,)),
    _einsum("i,j->ij", (2,), (3,)),
    _einsum("ii->i", (3, 3)),
    _einsum("ii->", (3, 3)),
    _einsum("ij->", (2, 3)),
    _einsum("ij->ji", (2, 3)),
    _einsum("ij,ij->ij", (2, 3), (2, 3)),
    _einsum("bij,bjk->bik", (2, 2, 3), (2, 3, 2)),
    _einsum("...ij,jk->...ik", (2, 2, 3), (3, 2)),
    _einsum("ij,jk,kl->il", (2, 3), (3, 2), (2, 2)),
    _einsum("ijk->kj", (2, 3, 2)),
    _einsum("iij->ij", (2, 2, 3)),
]

COMPOSITE_CASES = [
    _case("dot-vectors", knp.dot, (3,), (3,)),
    _case("dot-matrices", knp.dot, (2, 3), (3, 2)),
    _case("dot-scalar", knp.dot, (), (3,)),
    _case("dot-stacks", knp.dot, (2, 2, 3), (2, 3, 2)),
    _case("tensordot-2", knp.tensordot, (2, 3, 4), (3, 4, 2)),
    _case("tensordot-axes", lambda x, y: knp.tensordot(x, y, axes=([0], [1])), (3, 2), (2, 3)),
    _case("inner", knp.inner, (2, 3), (4, 3)),
    _case("outer", knp.outer, (3,), (2, 2)),
    _case("vdot", knp.vdot, (2, 3), (2, 3)),
    _case("method-dot", lambda x, y: x.dot(y), (2, 3), (3,)),
]

CASES = MATMUL_CASES + EINSUM_CASES + COMPOSITE_CASES

test_check_op = make_check_op_test(CASES)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: knp.matmul(np.ones((2, 3)), np.ones((4, 5))),
            r"kenaz\.matmul.*\(2, 3\).*\(4, 5\)",
        ),
        (lambda: knp.array(np.ones((2, 3))) @ np.ones(2), r"kenaz\.matmul.*\(2, 3\).*\(2,\)"),
        (lambda: knp.matmul(np.ones(3), 2.0), r"kenaz\.matmul.*at least 1-d"),
        (
            lambda: knp.matmul(np.ones((2, 2, 3)), np.ones((3, 3, 2))),
            r"kenaz\.matmul.*\(2, 2, 3\).*\(3, 3, 2\)",
        ),
        (lambda: knp.einsum("ij,jk", np.ones((2, 3))), r"kenaz\.einsum"),
        (lambda: knp.einsum("ijk", np.ones((2, 3))), r"kenaz\.einsum.*\(2, 3\)"),
    ],
    ids=[
        "matmul",
        "matmul-operator",
        "matmul-scalar",
        "matmul-stacks",
        "einsum-count",
        "einsum-rank",
    ],
)
def test_product_errors_name_the_op_and_shapes(call, message):
    with pytest.raises(ValueError, match=message):
        call()


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_einsum_diagonal_pullback_under_vmap_and_jit(dtype):
    """The pullback of a repeated letter builds an identity matrix on the backend of the
    cotangent; under vmap (jacrev) and jit that cotangent has no value of its own to read
    (it raised a ConcretizationError; found by scripts/compare_with_jax.py)."""
    import kenaz

    x = uniform((2, 3, 3), -1, 1, 0).astype(dtype)
    trace = kenaz.jacrev(lambda a: knp.einsum("...ii->...", a))(x)
    expected = np.einsum("ab,ij->abij", np.eye(2), np.eye(3))
    np.testing.assert_array_equal(trace, expected)
    assert trace.dtype == dtype
    diagonal = kenaz.grad(kenaz.jit(lambda a: knp.sum(knp.einsum("bii->bi", a) ** 2)))(x)
    np.testing.assert_allclose(diagonal, 2 * x * np.eye(3), rtol=1e-6)
    # The SVD's rules take diagonals the same way.
    m = uniform((2, 3), -1, 1, 1).astype(dtype)

    def rebuilt(a):
        u, s, vh = knp.linalg.svd(a, full_matrices=False)
        return knp.matmul(u * s[..., None, :], vh)

    tol = 1e-3 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(kenaz.jacrev(rebuilt)(m), kenaz.jacfwd(rebuilt)(m), atol=tol)
    identity = np.einsum("ik,jl->ijkl", np.eye(2), np.eye(3))
    np.testing.assert_allclose(kenaz.jacrev(rebuilt)(m), identity, atol=tol)
