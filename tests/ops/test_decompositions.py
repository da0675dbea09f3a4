"""check_op for the linear-algebra primitives of kenaz.ops.decompositions."""

from __future__ import annotations

import numpy as np

import kenaz.numpy as knp
from kenaz.ops import decompositions as dec

from .cases import OpCase, make_check_op_test

la = knp.linalg
_rng = np.random.default_rng(7)


def _matrix(*shape):
    return _rng.uniform(-1, 1, size=shape)


def _well_conditioned(n, *batch):
    return _matrix(*batch, n, n) + 3 * np.eye(n)


def _positive_definite(a):
    """A positive definite matrix made from any ``a`` (the batching check rolls elements)."""
    return a @ knp.swapaxes(a, -1, -2) + a.shape[-1] * np.eye(a.shape[-1])


def _eigh_invariant(x):
    w, v = la.eigh(_positive_definite(x))
    return v * v * w[..., None, :]


def _svd_invariant(x):
    u, s, vh = dec.svd_op(x)
    return u * u * s[..., None, :], vh * vh


CASES = [
    OpCase("solve", dec.solve, (_well_conditioned(3), _matrix(3, 2))),
    OpCase("solve-stack-broadcast", dec.solve, (_well_conditioned(3, 2), _matrix(3, 2))),
    OpCase("solve-lower", dec.solve, (_well_conditioned(3), _matrix(3, 2)), {"structure": "lower"}),
    OpCase("solve-upper", dec.solve, (_well_conditioned(3), _matrix(3, 2)), {"structure": "upper"}),
    # The primitives assume Hermitian input; the public functions build it from one triangle.
    OpCase("cholesky", lambda a: la.cholesky(_positive_definite(a)), (_matrix(3, 3),)),
    OpCase("cholesky-stack", lambda a: la.cholesky(_positive_definite(a)), (_matrix(2, 3, 3),)),
    OpCase("eigh", _eigh_invariant, (_matrix(3, 3),)),
    OpCase("eigvalsh", lambda a: la.eigvalsh(_positive_definite(a)), (_matrix(3, 3),)),
    OpCase("svd-tall", _svd_invariant, (_matrix(4, 3),)),
    OpCase("svd-wide", _svd_invariant, (_matrix(2, 3, 4),), order=1),
    OpCase("svdvals", dec.svdvals_op, (_matrix(4, 3),)),
    OpCase("qr", lambda x: tuple(dec.qr_op(x)), (_matrix(4, 3),)),
    OpCase("slogdet", lambda x: dec.slogdet_op(x)[1], (_well_conditioned(3),)),
    OpCase("pinv", dec.pinv_op, (_matrix(4, 3),), {"rcond": None}),
    OpCase("eigvals", dec.eigvals_op, (_well_conditioned(3),)),
    OpCase("eig", lambda a: dec.eig_op(a)[0] * 1, (_well_conditioned(3),), order=1),
    OpCase("sqrtm", lambda a: dec.sqrtm_op(_positive_definite(a)), (_matrix(3, 3),)),
]

test_check_op = make_check_op_test(CASES)
