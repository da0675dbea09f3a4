"""kenaz.scipy.linalg against SciPy: values with SciPy's signatures and meaning, and
derivatives against finite differences (check_grads, forward and reverse, to order 2)."""

import numpy as np
import pytest
import scipy.linalg
from _check import check, check_vmap

import kenaz
import kenaz.numpy as knp
import kenaz.scipy.linalg as ksl

rng = np.random.default_rng(24)
a = rng.standard_normal((3, 3))
a_shift = a + 3 * np.eye(3)
spd = a @ a.T + 3 * np.eye(3)
spd2 = (m := rng.standard_normal((3, 3))) @ m.T + np.eye(3)
b = rng.standard_normal((3, 2))
v = rng.standard_normal(3)
tall = rng.standard_normal((4, 3))


def close(ours, expected, rtol=1e-10, atol=1e-12):
    np.testing.assert_allclose(np.asarray(ours), expected, rtol=rtol, atol=atol)


def _spd(x):
    """A positive definite matrix from any square ``x`` (a differentiable map)."""
    return x @ x.T + 3 * np.eye(x.shape[-1])


# -- solve ----------
ASSUME_A = [None, "gen", "sym", "her", "pos", "diagonal", "tridiagonal", "banded",
            "upper triangular", "lower triangular"]  # fmt: skip


@pytest.mark.parametrize("assume_a", ASSUME_A)
def test_solve_assume_a(assume_a):
    matrix = spd if assume_a == "pos" else spd + 0.3 * np.triu(a, 1)  # not symmetric
    for lower in (False, True):
        expected = scipy.linalg.solve(matrix, b, lower=lower, assume_a=assume_a)
        close(ksl.solve(matrix, b, lower=lower, assume_a=assume_a), expected)
    check(f"scipy.linalg.solve[{assume_a}]",
          lambda m, r: ksl.solve(m, r, assume_a=assume_a, lower=True), matrix, b[:, 0])  # fmt: skip


def test_solve_transposed_complex_and_errors():
    close(ksl.solve(a, v, transposed=True), scipy.linalg.solve(a, v, transposed=True))
    hermitian = spd + 1j * (a - a.T)
    close(ksl.solve(hermitian, v, assume_a="her"), scipy.linalg.solve(hermitian, v, assume_a="her"))
    symmetric = spd + 1j * (a + a.T)
    close(ksl.solve(symmetric, v, assume_a="sym"), scipy.linalg.solve(symmetric, v, assume_a="sym"))
    with pytest.raises(ValueError, match="assume_a='nope'"):
        ksl.solve(a, v, assume_a="nope")
    with pytest.raises(ValueError, match="infs or NaNs"):
        ksl.solve(np.full((2, 2), np.nan), np.ones(2))
    close(ksl.inv(spd, assume_a="pos"), scipy.linalg.inv(spd, assume_a="pos"))


# -- eigh: the generalized problem, subsets ----------
@pytest.mark.parametrize("kind", [1, 2, 3])
def test_eigh_generalized(kind):
    w, x = ksl.eigh(spd, spd2, type=kind)
    expected_w, expected_x = scipy.linalg.eigh(spd, spd2, type=kind)
    close(w, expected_w)
    close(np.abs(x), np.abs(expected_x), rtol=1e-8)  # eigenvectors up to sign
    close(ksl.eigh(spd, spd2, type=kind, eigvals_only=True), expected_w)

    def invariant(p, q):  # eigenvalues and sign-invariant functions of the eigenvectors
        w, x = ksl.eigh(_spd(p), _spd(q), type=kind)
        return w, x * x

    check("scipy.linalg.eigh[generalized]", invariant, a, m)


def test_eigh_subsets_and_lower():
    for subset in ({"subset_by_index": [1, 2]}, {"subset_by_value": [3.5, 100.0]}):
        w, x = ksl.eigh(spd, **subset)
        expected_w, expected_x = scipy.linalg.eigh(spd, **subset)
        close(w, expected_w)
        close(np.abs(x), np.abs(expected_x), rtol=1e-8)
    unsymmetric = spd + np.triu(a, 1)
    for lower in (True, False):
        close(ksl.eigh(unsymmetric, lower=lower, eigvals_only=True),
              scipy.linalg.eigh(unsymmetric, lower=lower, eigvals_only=True))  # fmt: skip
    close(ksl.eigvalsh(spd, spd2), scipy.linalg.eigvalsh(spd, spd2))
    check("scipy.linalg.eigh[subset]",
          lambda p: ksl.eigh(_spd(p), subset_by_index=(1, 2), eigvals_only=True), a)  # fmt: skip
    d, e = rng.standard_normal(4), rng.standard_normal(3)
    close(ksl.eigh_tridiagonal(d, e, eigvals_only=True),
          scipy.linalg.eigh_tridiagonal(d, e, eigvals_only=True))  # fmt: skip
    w, x = ksl.eigh_tridiagonal(d, e, select="i", select_range=(1, 2))
    expected_w, expected_x = scipy.linalg.eigh_tridiagonal(d, e, select="i", select_range=(1, 2))
    close(w, expected_w)
    close(np.abs(x), np.abs(expected_x), rtol=1e-8)
    check("scipy.linalg.eigh_tridiagonal",
          lambda p, q: ksl.eigh_tridiagonal(p, q, eigvals_only=True), d, e)  # fmt: skip


# -- Cholesky and LU ----------
def test_lu_family():
    for shape in [(3, 3), (4, 3), (3, 4)]:
        x = rng.standard_normal(shape)
        for ours, theirs in zip(ksl.lu(x), scipy.linalg.lu(x), strict=True):
            close(ours, theirs)
        for ours, theirs in zip(ksl.lu(x, permute_l=True), scipy.linalg.lu(x, permute_l=True),
                                strict=True):  # fmt: skip
            close(ours, theirs)
        packed, pivots = ksl.lu_factor(x)
        expected_packed, expected_pivots = scipy.linalg.lu_factor(x)
        close(packed, expected_packed)
        np.testing.assert_array_equal(pivots, expected_pivots)
    factors = ksl.lu_factor(a)
    for trans in (0, 1, 2):
        close(ksl.lu_solve(factors, b, trans=trans),
              scipy.linalg.lu_solve(scipy.linalg.lu_factor(a), b, trans=trans))  # fmt: skip
    check("scipy.linalg.lu", lambda x: ksl.lu(x)[1:], tall)
    check("scipy.linalg.lu_factor", lambda x: ksl.lu_factor(x)[0], a_shift)
    check("scipy.linalg.lu_solve",
          lambda x, r: ksl.lu_solve(ksl.lu_factor(x), r, trans=1), a_shift, v)  # fmt: skip


def test_cholesky_keywords():
    close(ksl.cholesky(spd, lower=True), scipy.linalg.cholesky(spd, lower=True))
    c, lower = ksl.cho_factor(spd, lower=True, check_finite=False)
    close(ksl.cho_solve((c, lower), b, check_finite=False), scipy.linalg.solve(spd, b))


# -- banded solves ----------
def test_banded_solves():
    ab = rng.standard_normal((4, 5)) + np.array([[0], [0], [4], [0]])  # l = 1, u = 2
    rhs = rng.standard_normal(5)
    close(ksl.solve_banded((1, 2), ab, rhs), scipy.linalg.solve_banded((1, 2), ab, rhs))
    check("scipy.linalg.solve_banded", lambda p, q: ksl.solve_banded((1, 2), p, q), ab, rhs)
    upper = np.array([[0.0, 1.0, 0.5, 1.0], [4.0, 5.0, 4.0, 6.0]])
    lower = np.array([[4.0, 5.0, 4.0, 6.0], [1.0, 0.5, 1.0, 0.0]])
    close(ksl.solveh_banded(upper, rhs[:4]), scipy.linalg.solveh_banded(upper, rhs[:4]))
    close(ksl.solveh_banded(lower, rhs[:4], lower=True),
          scipy.linalg.solveh_banded(lower, rhs[:4], lower=True))  # fmt: skip
    check("scipy.linalg.solveh_banded", lambda p, q: ksl.solveh_banded(p, q), upper, rhs[:4])


# -- matrix equations ----------
def test_sylvester_and_lyapunov():
    small = rng.standard_normal((2, 2)) + 2 * np.eye(2)
    q = rng.standard_normal((3, 2))
    close(ksl.solve_sylvester(a_shift, small, q), scipy.linalg.solve_sylvester(a_shift, small, q))
    check("scipy.linalg.solve_sylvester", ksl.solve_sylvester, a_shift, small, q)
    close(ksl.solve_continuous_lyapunov(a_shift, spd),
          scipy.linalg.solve_continuous_lyapunov(a_shift, spd))  # fmt: skip
    check("scipy.linalg.solve_continuous_lyapunov", ksl.solve_continuous_lyapunov, a_shift, spd)
    stable = a / 4
    for method in ("direct", "bilinear"):
        close(ksl.solve_discrete_lyapunov(stable, spd, method=method),
              scipy.linalg.solve_discrete_lyapunov(stable, spd, method=method))  # fmt: skip
        check(f"scipy.linalg.solve_discrete_lyapunov[{method}]",
              lambda p, r, method=method: ksl.solve_discrete_lyapunov(p, r, method=method),
              stable, spd)  # fmt: skip
    check_vmap("scipy.linalg.solve_sylvester", ksl.solve_sylvester,
               np.stack([a_shift, a_shift.T]), small, q, in_axes=(0, None, None))  # fmt: skip


# -- matrix functions ----------
def test_expm_frechet_logm_funm():
    e = rng.standard_normal((3, 3))
    for ours, theirs in zip(ksl.expm_frechet(a, e), scipy.linalg.expm_frechet(a, e), strict=True):
        close(ours, theirs, rtol=1e-9)
    close(ksl.expm_frechet(a, e, compute_expm=False),
          scipy.linalg.expm_frechet(a, e, compute_expm=False), rtol=1e-9)  # fmt: skip
    check("scipy.linalg.expm_frechet", lambda p, q: ksl.expm_frechet(p, q)[1], a / 2, e)
    close(ksl.logm(spd), scipy.linalg.logm(spd), rtol=1e-9)
    close(ksl.logm(a), scipy.linalg.logm(a), rtol=1e-9)  # complex
    check("scipy.linalg.logm", ksl.logm, spd[:2, :2], order=1)
    close(ksl.funm(spd, np.exp), scipy.linalg.funm(spd, np.exp), rtol=1e-9)
    close(ksl.funm(a, lambda w: w * w), a @ a, rtol=1e-9)
    assert ksl.funm(spd, knp.exp).dtype == np.float64  # real, as SciPy's
    check("scipy.linalg.funm", lambda x, s: ksl.funm(x, lambda w: knp.exp(s * w)), spd, 0.5)
    for name in ("cosm", "sinm", "tanm", "coshm", "sinhm", "tanhm"):
        close(getattr(ksl, name)(a / 3), getattr(scipy.linalg, name)(a / 3), rtol=1e-9)
    check("scipy.linalg.cosm", ksl.cosm, a / 3, order=1)
    root, error = ksl.sqrtm(spd, disp=False)
    assert error < 1e-12


# -- decompositions ----------
@pytest.mark.parametrize("mode", ["full", "economic", "r"])
@pytest.mark.parametrize("pivoting", [False, True])
def test_qr_modes(mode, pivoting):
    x = tall if mode != "full" else a
    ours = ksl.qr(x, mode=mode, pivoting=pivoting)
    theirs = scipy.linalg.qr(x, mode=mode, pivoting=pivoting)
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs, strict=True):
        close(np.abs(np.asarray(o)), np.abs(t))  # Q and R up to the signs of their columns
    check(
        f"scipy.linalg.qr[{mode}]",
        lambda y: ksl.qr(y, mode=mode, pivoting=pivoting)[-1 - pivoting],
        x,
    )  # noqa: E501


def test_polar_and_svd():
    for side, x in (("right", tall), ("left", a)):
        u, p = ksl.polar(x, side=side)
        expected_u, expected_p = scipy.linalg.polar(x, side=side)
        close(u, expected_u)
        close(p, expected_p)
        check(f"scipy.linalg.polar[{side}]", lambda y, side=side: ksl.polar(y, side=side), x)
    close(ksl.svdvals(tall), scipy.linalg.svdvals(tall))
    close(ksl.svd(tall, full_matrices=False)[1], scipy.linalg.svd(tall, full_matrices=False)[1])


def test_schur_hessenberg_values_and_refusal():
    for ours, theirs in zip(ksl.schur(a), scipy.linalg.schur(a), strict=True):
        close(ours, theirs)
    close(ksl.schur(a, output="complex")[0], scipy.linalg.schur(a, output="complex")[0])
    for ours, theirs in zip(ksl.rsf2csf(*scipy.linalg.schur(a)),
                            scipy.linalg.rsf2csf(*scipy.linalg.schur(a)), strict=True):  # fmt: skip
        close(ours, theirs)
    close(ksl.hessenberg(a), scipy.linalg.hessenberg(a))
    for ours, theirs in zip(ksl.hessenberg(a, calc_q=True),
                            scipy.linalg.hessenberg(a, calc_q=True), strict=True):  # fmt: skip
        close(ours, theirs)
    with pytest.raises(ValueError, match="schur: not differentiable"):
        kenaz.grad(lambda x: ksl.schur(x)[0].sum())(a)
    with pytest.raises(ValueError, match="hessenberg: not differentiable"):
        kenaz.grad(lambda x: ksl.hessenberg(x).sum())(a)


# -- special matrices ----------
def test_special_matrices():
    c, r = np.array([1.0, 2.0, 3.0]), np.array([9.0, 8.0, 7.0, 6.0])
    close(ksl.block_diag([[1.0, 2.0]], [[3.0]], 4.0), scipy.linalg.block_diag([[1, 2]], [[3]], 4))
    close(ksl.toeplitz(c), scipy.linalg.toeplitz(c))
    close(ksl.toeplitz(c, r), scipy.linalg.toeplitz(c, r))
    close(ksl.toeplitz(c + 1j), scipy.linalg.toeplitz(c + 1j))
    close(ksl.hankel(c, r), scipy.linalg.hankel(c, r))
    close(ksl.circulant(c), scipy.linalg.circulant(c))
    close(ksl.hilbert(4), scipy.linalg.hilbert(4))
    check("scipy.linalg.block_diag", lambda p, q: ksl.block_diag(p, q), a[:2], c)
    check("scipy.linalg.toeplitz", ksl.toeplitz, c, r)
    check("scipy.linalg.circulant", ksl.circulant, c)
