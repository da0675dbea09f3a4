"""kenaz.numpy.linalg: values against NumPy, derivatives against finite differences."""

import numpy as np
import pytest
from _check import check

import kenaz
import kenaz.numpy as knp

la = knp.linalg
rng = np.random.default_rng(1)


def matrix(*shape, complex_=False):
    x = rng.standard_normal(shape)
    return x + 1j * rng.standard_normal(shape) if complex_ else x


def well_conditioned(n, batch=(), complex_=False):
    return matrix(*batch, n, n, complex_=complex_) + 3 * np.eye(n)


def spd(n, batch=(), complex_=False):
    a = matrix(*batch, n, n, complex_=complex_)
    return a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n)


# -- values match NumPy --------------------------------------------------------------------
@pytest.mark.parametrize(
    "name, args",
    [
        ("solve", (well_conditioned(3), matrix(3))),
        ("solve", (well_conditioned(3, (2,)), matrix(2, 3, 2))),
        ("inv", (well_conditioned(3, (2,)),)),
        ("det", (well_conditioned(3, (2,)),)),
        ("det", (well_conditioned(3, complex_=True),)),
        ("cholesky", (spd(3, (2,)),)),
        ("eigvalsh", (spd(3),)),
        ("pinv", (matrix(4, 3),)),
        ("matrix_power", (well_conditioned(3), 3)),
        ("matrix_power", (well_conditioned(3), -2)),
        ("matrix_power", (well_conditioned(3), 0)),
        ("cond", (well_conditioned(3),)),
        ("tensorinv", (well_conditioned(6).reshape(2, 3, 6), 2)),
        ("matrix_rank", (matrix(4, 3),)),
        ("multi_dot", ([matrix(2, 3), matrix(3, 4), matrix(4)],)),
    ],
)
def test_values(name, args):
    expected = getattr(np.linalg, name)(*args)
    np.testing.assert_allclose(np.asarray(getattr(la, name)(*args)), expected, rtol=1e-10)


def test_decompositions_reconstruct():
    a = matrix(2, 4, 3)
    u, s, vh = la.svd(a, full_matrices=False)
    np.testing.assert_allclose((u.numpy() * s.numpy()[..., None, :]) @ vh.numpy(), a)
    np.testing.assert_allclose(la.svd(a, compute_uv=False).numpy(), np.linalg.svd(a)[1])
    for shape in [(4, 3), (3, 5), (3, 3)]:
        b = matrix(*shape)
        q, r = la.qr(b)
        np.testing.assert_allclose(q.numpy() @ r.numpy(), b, atol=1e-12)
        np.testing.assert_allclose(np.abs(r.numpy()), np.abs(np.linalg.qr(b)[1]), atol=1e-12)
    h = spd(3, complex_=True)
    w, v = la.eigh(h)
    np.testing.assert_allclose((v.numpy() * w.numpy()) @ v.numpy().conj().T, h, atol=1e-12)
    sign, logdet = la.slogdet(well_conditioned(3, complex_=True))
    expected = np.linalg.slogdet(well_conditioned(3, complex_=True))
    assert sign.dtype == np.complex128 and logdet.dtype == np.float64
    b = matrix(5, 2)
    x, residuals, rank, sv = la.lstsq(matrix(5, 3), b)
    assert rank == 3 and residuals.shape == (2,) and sv.shape == (3,)
    del expected


def test_lstsq_matches_numpy():
    a, b = matrix(5, 3), matrix(5)
    x, residuals, rank, sv = la.lstsq(a, b)
    ex, eres, erank, esv = np.linalg.lstsq(a, b)
    np.testing.assert_allclose(x.numpy(), ex)
    np.testing.assert_allclose(residuals.numpy(), eres)
    np.testing.assert_allclose(sv.numpy(), esv)
    assert rank == erank


@pytest.mark.parametrize(
    "ord, axis, shape",
    [
        (None, None, (3, 4)),
        (None, None, (2, 3, 4)),
        (2, None, (5,)),
        (1, None, (5,)),
        (3, None, (5,)),
        (0.5, None, (5,)),
        (np.inf, None, (5,)),
        (-np.inf, None, (5,)),
        (0, None, (5,)),
        ("fro", None, (3, 4)),
        ("nuc", None, (3, 4)),
        (2, None, (3, 4)),
        (-2, None, (3, 4)),
        (1, None, (3, 4)),
        (-1, None, (3, 4)),
        (np.inf, None, (3, 4)),
        (-np.inf, None, (3, 4)),
        (None, 1, (3, 4)),
        (2, (0, 2), (3, 2, 4)),
        (1, (2, 0), (3, 2, 4)),
        ("fro", (-1, -2), (3, 2, 4)),
    ],
)
def test_norm(ord, axis, shape):
    x = matrix(*shape)
    expected = np.linalg.norm(x, ord=ord, axis=axis)
    np.testing.assert_allclose(la.norm(x, ord=ord, axis=axis).numpy(), expected, rtol=1e-12)
    kept = np.linalg.norm(x, ord=ord, axis=axis, keepdims=True)
    np.testing.assert_allclose(la.norm(x, ord, axis, keepdims=True).numpy(), kept, rtol=1e-12)
    if ord != 0:
        check("linalg.norm", lambda v: la.norm(v, ord=ord, axis=axis), x)


def test_norm_complex_and_array_api():
    z = matrix(3, 4, complex_=True)
    check("linalg.norm", lambda v: la.norm(v), z)
    check("linalg.norm", lambda v: la.norm(v, "nuc"), z)
    np.testing.assert_allclose(la.vector_norm(z, axis=1).numpy(), np.linalg.vector_norm(z, axis=1))
    np.testing.assert_allclose(la.matrix_norm(z, ord=1).numpy(), np.linalg.matrix_norm(z, ord=1))
    check("linalg.vector_norm", lambda v: la.vector_norm(v, ord=3), matrix(4))
    check("linalg.matrix_norm", lambda v: la.matrix_norm(v, ord=2), matrix(2, 3, 3))


def test_norm_at_zero_follows_jax():
    with np.errstate(divide="ignore", invalid="ignore"):
        g = kenaz.grad(la.norm)(np.zeros(3))
    assert np.isnan(g.numpy()).all()


# -- derivatives -------------------------------------------------------------------------------
def test_solve_inv_det_derivatives():
    a, b = well_conditioned(3), matrix(3)
    check("linalg.solve", la.solve, a, b)
    check("linalg.solve", la.solve, well_conditioned(3, (2,)), matrix(3, 2))
    check("linalg.solve", la.solve, well_conditioned(3, (2,)), matrix(2, 3, 2))
    check("linalg.inv", la.inv, well_conditioned(3, (2,)))
    check("linalg.det", la.det, well_conditioned(3, (2,)))
    check("linalg.slogdet", lambda x: la.slogdet(x)[1], well_conditioned(3))
    check("linalg.tensorsolve", la.tensorsolve, well_conditioned(6).reshape(2, 3, 6), matrix(2, 3))
    tensor = well_conditioned(6).reshape(6, 2, 3)
    check("linalg.tensorinv", lambda x: la.tensorinv(x, ind=1), tensor)
    check("linalg.matrix_power", lambda x: la.matrix_power(x, 3), well_conditioned(3))
    check("linalg.matrix_power", lambda x: la.matrix_power(x, -2), well_conditioned(3), order=1)
    check("linalg.multi_dot", lambda x, y: la.multi_dot([x, y, x]), matrix(3, 3), matrix(3, 3))
    check("linalg.cond", la.cond, well_conditioned(3), order=1)


def test_complex_solve_det():
    a, b = well_conditioned(3, complex_=True), matrix(3, complex_=True)
    check("linalg.solve", la.solve, a, b)
    check("linalg.inv", la.inv, a)
    check("linalg.det", la.det, a)
    check("linalg.slogdet", lambda x: la.slogdet(x)[1], a)
    check("linalg.slogdet", lambda x: la.slogdet(x)[0], a, order=1)


def test_cholesky():
    check("linalg.cholesky", la.cholesky, spd(3))
    check("linalg.cholesky", la.cholesky, spd(3, (2,)), order=1)
    check("linalg.cholesky", lambda x: la.cholesky(x, upper=True), spd(3), order=1)
    check("linalg.cholesky", la.cholesky, spd(3, complex_=True), order=1)


def test_eigh_and_eigvalsh():
    # Eigenvectors are defined up to sign (phase): check functions invariant to it.
    def invariant(x):
        w, v = la.eigh(x)
        return (v * knp.conj(v)).real * w[..., None, :], w

    check("linalg.eigh", invariant, spd(3))
    check("linalg.eigh", invariant, spd(3, (2,)), order=1)
    check("linalg.eigh", lambda x: la.eigh(x, UPLO="U")[0], spd(3), order=1)
    check("linalg.eigh", invariant, spd(3, complex_=True), order=1)
    check("linalg.eigvalsh", la.eigvalsh, spd(3))
    check("linalg.eigvalsh", la.eigvalsh, spd(3, complex_=True), order=1)


def test_eigvalsh_repeated_eigenvalues_stay_finite():
    g = kenaz.grad(lambda x: la.eigvalsh(x)[-1])(np.eye(3))
    assert np.isfinite(g.numpy()).all()


@pytest.mark.parametrize("shape", [(3, 3), (4, 3), (3, 4), (2, 4, 3)])
def test_svd(shape):
    def invariant(x):
        u, s, vh = la.svd(x, full_matrices=False)
        return u * u * s[..., None, :], vh * vh, s

    check("linalg.svd", invariant, matrix(*shape), order=2 if shape == (4, 3) else 1)
    check("linalg.svdvals", la.svdvals, matrix(*shape), order=1)


def test_svd_complex_and_full_matrices():
    def invariant(x):
        u, s, vh = la.svd(x, full_matrices=False)
        return (u * knp.conj(u)).real, s

    check("linalg.svd", invariant, matrix(4, 3, complex_=True), order=1)
    check("linalg.svd", lambda x: la.svd(x)[1], matrix(3, 3), order=1)
    with pytest.raises(ValueError, match="full_matrices"):
        kenaz.grad(lambda x: la.svd(x)[0].sum())(matrix(4, 3))


@pytest.mark.parametrize("shape", [(4, 3), (3, 3), (3, 5)])
def test_qr(shape):
    check("linalg.qr", lambda x: tuple(la.qr(x)), matrix(*shape), order=2 if shape == (4, 3) else 1)
    check("linalg.qr", lambda x: la.qr(x, mode="r"), matrix(*shape), order=1)


def test_qr_complex_and_complete():
    check("linalg.qr", lambda x: tuple(la.qr(x)), matrix(4, 3, complex_=True), order=1)
    q, r = la.qr(matrix(4, 3), mode="complete")
    assert q.shape == (4, 4)
    with pytest.raises(ValueError, match="complete"):
        kenaz.grad(lambda x: la.qr(x, mode="complete")[0].sum())(matrix(4, 3))


def test_pinv_lstsq():
    check("linalg.pinv", la.pinv, matrix(4, 3))
    check("linalg.pinv", la.pinv, matrix(3, 4), order=1)
    check("linalg.pinv", la.pinv, matrix(3, 4, complex_=True), order=1)
    check("linalg.lstsq", lambda a, b: la.lstsq(a, b)[0], matrix(5, 3), matrix(5, 2), order=1)


def test_array_api_helpers():
    x = matrix(2, 3, 3)
    np.testing.assert_allclose(la.trace(x).numpy(), np.linalg.trace(x))
    np.testing.assert_allclose(la.diagonal(x, offset=1).numpy(), np.linalg.diagonal(x, offset=1))
    np.testing.assert_allclose(la.matrix_transpose(x).numpy(), np.linalg.matrix_transpose(x))
    np.testing.assert_allclose(la.vecdot(x, x).numpy(), np.linalg.vecdot(x, x))
    check("linalg.trace", la.trace, x)
    check("linalg.diagonal", la.diagonal, x, order=1)


def test_numpy_linalg_dispatches():
    # Symmetric, so NumPy's eigvals are real whatever the order tests drew from `rng` in
    a = np.random.default_rng(243).standard_normal((3, 3))
    a = a + a.T + 6 * np.eye(3)
    g = kenaz.grad(lambda x: np.linalg.det(x) + np.linalg.norm(x))(a)
    expected = np.linalg.det(a) * np.linalg.inv(a).T + a / np.linalg.norm(a)
    np.testing.assert_allclose(g.numpy(), expected)
    w = kenaz.vjp(np.linalg.eigvals, a)[0]  # a tracked argument: kenaz's, always complex
    assert isinstance(w, kenaz.Tensor) and w.dtype == np.complex128
    assert np.linalg.eigvals(knp.asarray(a)).dtype == np.float64  # untracked: NumPy's own


# -- vmap against a loop --------------------------------------------------------------------------
def _eigh_invariant(x):
    w, v = la.eigh(x)
    return (v * v) * w[..., None, :]


def _svd_invariant(x):
    u, s, vh = la.svd(x, full_matrices=False)
    return u * u * s, vh * vh


VMAP_CASES = [
    ("linalg.solve", la.solve, (well_conditioned(3, (4,)), matrix(4, 3)), 0),
    ("linalg.solve", la.solve, (well_conditioned(3), matrix(4, 3)), (None, 0)),
    ("linalg.inv", la.inv, (well_conditioned(3, (4,)),), 0),
    ("linalg.det", la.det, (well_conditioned(3, (4,)),), 0),
    ("linalg.slogdet", lambda x: tuple(la.slogdet(x)), (well_conditioned(3, (4,)),), 0),
    ("linalg.cholesky", la.cholesky, (spd(3, (4,)),), 0),
    ("linalg.eigh", _eigh_invariant, (spd(3, (4,)),), 0),
    ("linalg.eigvalsh", la.eigvalsh, (spd(3, (4,)),), 0),
    ("linalg.svd", _svd_invariant, (matrix(4, 4, 3),), 0),
    ("linalg.svdvals", la.svdvals, (matrix(3, 4, 5),), 1),
    ("linalg.qr", lambda x: tuple(la.qr(x)), (matrix(4, 4, 3),), 0),
    ("linalg.pinv", la.pinv, (matrix(4, 4, 3),), 0),
    ("linalg.norm", la.norm, (matrix(4, 3),), 0),
    ("linalg.norm", lambda x: la.norm(x, "nuc"), (matrix(4, 3, 3),), 0),
    ("linalg.norm", lambda x: la.norm(x, np.inf), (matrix(4, 3, 3),), 2),
    ("linalg.matrix_power", lambda x: la.matrix_power(x, 3), (matrix(4, 3, 3),), 0),
    ("linalg.trace", la.trace, (matrix(4, 3, 3),), 0),
    ("linalg.diagonal", la.diagonal, (matrix(4, 3, 3),), 0),
    (
        "linalg.tensorsolve",
        la.tensorsolve,
        (well_conditioned(6, (2,)).reshape(2, 2, 3, 6), matrix(2, 2, 3)),
        0,
    ),
    ("linalg.lstsq", lambda a, b: la.lstsq(a, b)[0], (matrix(3, 5, 3), matrix(3, 5)), 0),
]


@pytest.mark.parametrize("name, f, args, in_axes", VMAP_CASES, ids=[c[0] for c in VMAP_CASES])
def test_vmap_matches_loop(name, f, args, in_axes):
    from _check import check_vmap

    check_vmap(name, f, *args, in_axes=in_axes)


def test_vmap_of_grad():
    from _check import check_vmap

    check_vmap("linalg.det", kenaz.grad(la.det), well_conditioned(3, (4,)))
    check_vmap("linalg.eigvalsh", kenaz.grad(lambda x: la.eigvalsh(x)[-1]), spd(3, (4,)))
    check_vmap("linalg.cholesky", kenaz.grad(lambda x: la.cholesky(x).sum()), spd(3, (4,)))


def test_general_eigendecomposition():
    a = matrix(3, 3)
    w, v = la.eig(a)
    np.testing.assert_allclose(a @ v.numpy(), v.numpy() * w.numpy(), atol=1e-12)
    np.testing.assert_allclose(np.sort_complex(la.eigvals(a).numpy()),
                               np.sort_complex(np.linalg.eigvals(a)))  # fmt: skip
    check("linalg.eigvals", la.eigvals, a)
    check("linalg.eigvals", la.eigvals, matrix(3, 3, complex_=True), order=1)
    check("linalg.eig", lambda x: (la.eig(x)[0], knp.abs(la.eig(x)[1]) ** 2), a)
    check("linalg.eig", lambda x: knp.abs(la.eig(x)[1]) ** 2, matrix(3, 3, complex_=True),
          order=1)  # fmt: skip
    from _check import check_vmap

    check_vmap("linalg.eigvals", la.eigvals, matrix(4, 3, 3))
    check_vmap("linalg.eig", lambda x: knp.abs(la.eig(x)[1]) ** 2, matrix(4, 3, 3))


def test_eigenvalues_through_eigh_at_repeated_eigenvalues():
    g = kenaz.grad(lambda x: la.eigh(x)[0].sum())(np.eye(3))
    np.testing.assert_allclose(g.numpy(), np.eye(3))


def test_singular_values_through_svd_at_repeated_values():
    g = kenaz.grad(lambda x: la.svd(x)[1].sum())(np.eye(3))
    np.testing.assert_allclose(g.numpy(), np.eye(3))


def test_float32_is_preserved():
    a = well_conditioned(3).astype(np.float32)
    functions = [
        lambda x: la.inv(x), la.det, lambda x: la.slogdet(x)[1],
        lambda x: la.cholesky(x @ x.T), lambda x: la.eigh(x @ x.T)[0],
        lambda x: la.eigvalsh(x @ x.T), lambda x: la.svd(x)[1], lambda x: la.qr(x)[1],
        la.pinv, la.norm, lambda x: la.norm(x, "nuc"), lambda x: knp.abs(la.eigvals(x)),
        lambda x: knp.abs(knp.fft.fft(x)), lambda x: knp.fft.irfft(x), lambda x: la.lstsq(x, x)[0],
    ]  # fmt: skip
    for f in functions:
        assert f(a).dtype == np.float32
        assert kenaz.grad(lambda x, f=f: f(x).sum())(a).dtype == np.float32


def test_hessians_and_jacobians_through_linalg_and_fft():
    a = spd(3)
    h = kenaz.hessian(lambda x: la.slogdet(x)[1])(a).numpy()
    inverse = np.linalg.inv(a)
    np.testing.assert_allclose(h, -np.einsum("li,jk->ijkl", inverse, inverse), atol=1e-12)
    h = kenaz.hessian(lambda x: la.eigvalsh(x)[-1])(a).numpy()
    assert h.shape == (3, 3, 3, 3) and np.isfinite(h).all()
    point = matrix(3, 4)
    forward = kenaz.jacfwd(lambda x: la.norm(x, "nuc"))(point).numpy()
    reverse = kenaz.jacrev(lambda x: la.norm(x, "nuc"))(point).numpy()
    np.testing.assert_allclose(forward, reverse, atol=1e-12)
    jacobian = kenaz.jacrev(lambda x: knp.fft.rfft(x).real)(np.arange(4.0))
    np.testing.assert_allclose(jacobian.numpy(), np.fft.rfft(np.eye(4)).real.T, atol=1e-12)
    jacobian = kenaz.jacfwd(lambda x: knp.fft.rfft(x).imag)(np.arange(4.0))
    np.testing.assert_allclose(jacobian.numpy(), np.fft.rfft(np.eye(4)).imag.T, atol=1e-12)
