"""``kenaz.scipy.linalg``: SciPy's linear algebra with SciPy's signatures, differentiable.

It covers ``jax.scipy.linalg`` and more: solvers (``solve`` with ``assume_a``,
triangular, banded, Cholesky and LU solves), decompositions (``eigh`` with the
generalized problem, ``lu``, ``qr``, ``svd``, ``polar``, ``schur``,
``hessenberg``), matrix functions (``expm``, ``expm_frechet``, ``logm``,
``sqrtm``, ``funm``, ...), matrix equations (Sylvester, Lyapunov) and special
matrices. Each module's docstring says what is differentiable; arguments SciPy
uses only for memory (``overwrite_*``, ``lwork``) are accepted and ignored.
"""

from __future__ import annotations

from ._basic import (
    det,
    inv,
    lstsq,
    norm,
    pinv,
    solve,
    solve_banded,
    solve_triangular,
    solveh_banded,
)
from ._decomp import (
    cho_factor,
    cho_solve,
    cholesky,
    eigh,
    eigh_tridiagonal,
    eigvalsh,
    hessenberg,
    lu,
    lu_factor,
    lu_solve,
    polar,
    qr,
    rsf2csf,
    schur,
    svd,
    svdvals,
)
from ._matfuncs import (
    coshm,
    cosm,
    expm,
    expm_frechet,
    funm,
    logm,
    sinhm,
    sinm,
    solve_continuous_lyapunov,
    solve_discrete_lyapunov,
    solve_sylvester,
    sqrtm,
    tanhm,
    tanm,
)
from ._special_matrices import block_diag, circulant, hankel, hilbert, toeplitz

__all__ = [
    "block_diag", "cho_factor", "cho_solve", "cholesky", "circulant", "coshm", "cosm", "det",
    "eigh", "eigh_tridiagonal", "eigvalsh", "expm", "expm_frechet", "funm", "hankel",
    "hessenberg", "hilbert", "inv", "logm", "lstsq", "lu", "lu_factor", "lu_solve", "norm",
    "pinv", "polar", "qr", "rsf2csf", "schur", "sinhm", "sinm", "solve", "solve_banded",
    "solve_continuous_lyapunov", "solve_discrete_lyapunov", "solve_sylvester",
    "solve_triangular", "solveh_banded", "sqrtm", "svd", "svdvals", "tanhm", "tanm", "toeplitz",
]  # fmt: skip
