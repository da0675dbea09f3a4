"""Batching rules of every primitive: ``vmap`` against a per-slice loop.

Each case runs through ``check_batching``, which puts the batch axis first,
in the middle and last, and batches each argument alone as well as all
together, at float64 and float32. ``check_op`` runs the same check on its own
cases; these add the layouts that are hard for batching rules (advanced
indices after a slice, batched index arrays, vectors in ``matmul``, ...).
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from typing import Any

import numpy as np
import pytest

import kenaz.numpy as knp
import kenaz.ops
from kenaz.effects import Op
from kenaz.ops import elementwise, linalg, reduction, shape
from kenaz.testing.batching import check_batching

from .cases import DTYPE_IDS, DTYPES, cast_args, uniform

A = uniform((3, 4), 0.1, 0.9)
B = uniform((4,), 0.1, 0.9, seed=1)
C = uniform((2, 3, 4), -1, 1, seed=2)
SQUARE = uniform((3, 3), -1, 1, seed=3)
INTS = np.array([[3, -2, 5, 7], [1, 4, -6, 2], [9, 8, -1, 3]])
BOOLS = np.array(
    [[True, False, True, False], [False, False, True, True], [True, True, False, True]]
)
ROWS = np.array([2, 0, 2])
COLUMNS = np.array([3, 1, 0])

UNARY = [
    "negative", "absolute", "exp", "expm1", "log", "log1p", "sqrt", "sin", "cos", "tan", "arcsin",
    "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh", "arctanh", "logistic", "erf", "sign",
    "floor", "ceil", "isnan", "isinf", "isfinite", "conjugate", "real", "imag", "alias",
    "stop_gradient",
]  # fmt: skip
BINARY = [
    "add", "subtract", "multiply", "divide", "power", "maximum", "minimum", "arctan2", "remainder",
    "floor_divide", "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
]  # fmt: skip

CASES: list[tuple[str, Any, tuple[Any, ...]]] = [
    *[(f"{name}", getattr(elementwise, name), (A,)) for name in UNARY],
    ("arccosh", elementwise.arccosh, (A + 1,)),
    ("round", elementwise.round_, (A * 10,)),
    ("logical_not", elementwise.logical_not, (BOOLS,)),
    ("invert", elementwise.invert, (INTS,)),
    ("cast", lambda x: elementwise.astype(x, np.float16), (A,)),
    *[(f"{name}-same-shape", getattr(elementwise, name), (A, A[::-1])) for name in BINARY],
    *[(f"{name}-broadcast", getattr(elementwise, name), (A, B)) for name in BINARY],
    ("mul-scalar", lambda x: x * 2.5, (A,)),
    ("mul-lower-rank-first", elementwise.multiply, (B, C)),
    ("logical_and", elementwise.logical_and, (BOOLS, BOOLS[::-1])),
    ("logical_or", elementwise.logical_or, (BOOLS, BOOLS[::-1])),
    ("logical_xor", elementwise.logical_xor, (BOOLS, BOOLS[::-1])),
    ("bitwise_and", elementwise.bitwise_and, (INTS, INTS[::-1])),
    ("bitwise_or", elementwise.bitwise_or, (INTS, INTS[::-1])),
    ("bitwise_xor", elementwise.bitwise_xor, (INTS, INTS[::-1])),
    ("where", elementwise.where, (BOOLS, A, B)),
    # reductions and scans
    ("sum-all", lambda x: reduction.sum(x), (C,)),
    ("sum-axis", lambda x: reduction.sum(x, axis=1), (C,)),
    ("sum-axes-keepdims", lambda x: reduction.sum(x, axis=(0, 2), keepdims=True), (C,)),
    ("max-axis", lambda x: reduction.amax(x, axis=-1), (C,)),
    ("min-axes", lambda x: reduction.amin(x, axis=(0, 1)), (C,)),
    ("prod-axis", lambda x: reduction.prod(x, axis=0, keepdims=True), (C,)),
    ("argmax-flat", lambda x: reduction.argmax(x), (C,)),
    ("argmax-flat-keepdims", lambda x: reduction.argmax(x, keepdims=True), (C,)),
    ("argmin-axis", lambda x: reduction.argmin(x, axis=1), (C,)),
    ("argmin-axis-keepdims", lambda x: reduction.argmin(x, axis=2, keepdims=True), (C,)),
    ("cumsum", lambda x: reduction.cumsum(x, axis=1), (C,)),
    ("cumsum-flat", lambda x: reduction.cumsum(x), (A,)),
    ("cumprod", lambda x: reduction.cumprod(x, axis=-1), (C,)),
    # shape
    ("reshape", lambda x: shape.reshape(x, (4, 6)), (C,)),
    ("reshape-F", lambda x: shape.reshape(x, (6, 4), order="F"), (C,)),
    ("ravel", shape.ravel, (C,)),
    ("broadcast_to", lambda x: shape.broadcast_to(x, (2, 3, 4)), (B,)),
    ("transpose", lambda x: shape.transpose(x, (2, 0, 1)), (C,)),
    ("moveaxis", lambda x: shape.moveaxis(x, 0, -1), (C,)),
    ("squeeze", lambda x: shape.squeeze(x, 1), (C[:, :1],)),
    ("expand_dims", lambda x: shape.expand_dims(x, (0, 3)), (A,)),
    ("concatenate", lambda x, y: shape.concatenate([x, y, x], axis=1), (A, A[:, :2])),
    ("stack", lambda x, y: shape.stack([x, y], axis=-1), (A, A[::-1])),
    ("flip", lambda x: shape.flip(x, (0, 2)), (C,)),
    ("pad", lambda x: shape.pad(x, ((1, 0), (0, 2)), constant_values=1.5), (A,)),
    ("repeat", lambda x: shape.repeat(x, 2, axis=1), (A,)),
    ("repeat-each", lambda x: shape.repeat(x, (1, 0, 2), axis=0), (A,)),
    ("tile", lambda x: shape.tile(x, (2, 1, 2)), (A,)),
    # gather: basic and advanced indices, shared and batched index arrays
    ("gather-int", lambda x: x[1], (C,)),
    ("gather-slices", lambda x: x[:, 1:3, ::2], (C,)),
    ("gather-newaxis-ellipsis", lambda x: x[None, ..., 2], (C,)),
    ("gather-array", lambda x: x[ROWS], (A,)),
    ("gather-array-after-slice", lambda x: x[:, COLUMNS], (A,)),
    ("gather-array-after-ellipsis", lambda x: x[..., COLUMNS], (C,)),
    ("gather-int-and-array", lambda x: x[:, 1, COLUMNS], (C,)),
    ("gather-split-arrays", lambda x: x[np.array([0, 1]), :, np.array([3, 2])], (C,)),
    ("gather-2d-array", lambda x: x[np.array([[0, 2], [1, 1]])], (A,)),
    ("gather-mask", lambda x: x[:, np.array([True, False, True, True])], (A,)),
    ("gather-batched-index", lambda x, i: x[i], (A, ROWS)),
    ("gather-batched-index-after-slice", lambda x, i: x[:, i], (A, COLUMNS)),
    ("gather-batched-split", lambda x, i, j: x[i, :, j], (C, np.array([0, 1]), np.array([3, 2]))),
    ("gather-batched-and-shared", lambda x, i: x[i, COLUMNS], (A, ROWS)),
    ("gather-label", lambda logp, label: logp[label], (B, np.array(2))),
    # scatter
    ("scatter-set-int", lambda x, v: x.at[1].set(v), (A, B)),
    ("scatter-add-slice", lambda x, v: x.at[:, 1:3].add(v), (A, A[:, :2])),
    ("scatter-set-scalar", lambda x: x.at[0, 2].set(7.0), (A,)),
    ("scatter-add-array", lambda x, v: x.at[ROWS].add(v), (A, A)),
    ("scatter-add-after-slice", lambda x, v: x.at[:, COLUMNS].add(v), (A, A[:, :3])),
    ("scatter-set-after-slice-broadcast", lambda x, v: x.at[:, COLUMNS].set(v), (A, B[:3])),
    (
        "scatter-multiply-split",
        lambda x, v: x.at[np.array([0, 1]), :, 3].multiply(v),
        (C, A[:2, :3]),
    ),
    ("scatter-min", lambda x, v: x.at[ROWS, COLUMNS].min(v), (A, B[:3])),
    ("scatter-max", lambda x, v: x.at[ROWS].max(v), (A, B)),
    ("scatter-batched-index", lambda x, i, v: x.at[i].add(v), (A, ROWS, A)),
    (
        "scatter-batched-index-after-slice",
        lambda x, i, v: x.at[:, i].set(v),
        (A, COLUMNS, A[:, :3]),
    ),
    # products
    ("matmul", linalg.matmul, (A, A.T)),
    ("matmul-vector-matrix", linalg.matmul, (B, A.T)),
    ("matmul-matrix-vector", linalg.matmul, (A, B)),
    ("matmul-vector-vector", linalg.matmul, (B, B[::-1])),
    ("matmul-stack-matrix", linalg.matmul, (C, A.T)),
    ("matmul-vector-stack", linalg.matmul, (B, C.transpose(0, 2, 1))),
    ("matmul-stack-vector", linalg.matmul, (C, B)),
    ("matmul-outer", linalg.matmul, (A[:, :1], A[:1])),
    ("einsum-matmul", lambda x, y: linalg.einsum("ij,jk->ik", x, y), (A, A.T)),
    ("einsum-diagonal", lambda x: linalg.einsum("ii->i", x), (SQUARE,)),
    ("einsum-dot", lambda x, y: linalg.einsum("i,i->", x, y), (B, B[::-1])),
    ("einsum-three", lambda x, y, z: linalg.einsum("ij,j,k->ik", x, y, z), (A, B, B)),
    ("tensordot", lambda x, y: linalg.tensordot(x, y, axes=([2], [1])), (C, A)),
]


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize(("fn", "args"), [pytest.param(f, a, id=i) for i, f, a in CASES])
def test_batching_rule(fn: Any, args: tuple[Any, ...], dtype: Any) -> None:
    args = cast_args(args, dtype)
    if dtype == np.float32:
        check_batching(fn, args, atol=1e-5, rtol=1e-5)
    else:
        check_batching(fn, args)


def test_complex_parts_batch() -> None:
    z = A + 1j * A[::-1]
    for fn in (elementwise.real, elementwise.imag, elementwise.conjugate, elementwise.absolute):
        check_batching(fn, (z,))


def _primitives() -> list[Op]:
    """Every ``Op`` defined in a module of ``kenaz.ops`` (including ops kept in dicts)."""
    ops = []
    for info in pkgutil.iter_modules(kenaz.ops.__path__):
        module = importlib.import_module(f"kenaz.ops.{info.name}")
        for _, value in inspect.getmembers(module):
            if isinstance(value, Op):
                ops.append(value)
            elif isinstance(value, dict):
                ops.extend(v for v in value.values() if isinstance(v, Op))
    return list({id(op): op for op in ops}.values())


def test_every_primitive_has_a_batching_rule() -> None:
    missing = sorted(op.name for op in _primitives() if op.batch is None)
    assert not missing, f"primitives without a batching rule: {missing}"


def test_composites_batch_without_fallback() -> None:
    x = uniform((3, 5), -1, 1, seed=4)
    for fn in (knp.logsumexp, knp.var, knp.std, knp.diff, knp.cumsum, lambda v: knp.roll(v, 2)):
        check_batching(fn, (x,))


def test_check_batching_catches_a_wrong_rule():
    def forgets_to_shift(op, args, batch_axes, *, axis, keepdims):
        return op(args[0], axis=axis, keepdims=keepdims), batch_axes[0]  # sums the batch axis

    wrong_sum = Op("test_wrong_sum", lambda x, axis, keepdims: x.sum(axis, keepdims=keepdims))
    wrong_sum.batch = forgets_to_shift
    with pytest.raises(AssertionError, match="vmap differs from the loop"):
        check_batching(lambda x: wrong_sum(x, axis=(0,), keepdims=False), (A,))


def test_check_batching_reports_a_missing_rule():
    no_rule = Op("test_op_without_rule", np.negative)
    with pytest.warns(UserWarning), pytest.raises(AssertionError, match="no batching rule"):
        check_batching(no_rule, (A,))
