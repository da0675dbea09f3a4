"""Products with a diagonal matrix, rewritten as scalings: ``diag(s) @ B`` as ``s[:, None] * B``.

``jacrev`` pulls back the rows of an identity matrix at once, so its programs
multiply a *diagonal* matrix ``E = op(I, r)`` (the identity, scaled by an
elementwise op linear in it: ``mul``, or a slope op ``g * f'(r)``) by a weight
matrix: W7's ``dtanh(I, t) @ W`` is a 100x100 matrix product, 150 of its
440 µs. Since ``E[i, j] = δ_ij s_j``, ``E @ B`` is row ``i`` of ``B`` times
``s_i`` and ``B @ E`` is column ``j`` of ``B`` times ``s_j``: the same op
applied to ``B`` and ``r``, broadcast along the other axis, which fusion then
compiles into one loop.

Each entry ``s_i * B[i, k]`` is the product the matrix product computes,
rounded once, and the other terms it adds are zeros: the results are equal for
finite values. They differ where a value is infinite or NaN (the matrix product
spreads ``0 * inf = nan`` over a whole column, the scaling keeps it in its row)
and in the sign of a zero.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..effects import Op
from .codegen import ufunc_of
from .program import Const, Equation, Program, Var
from .slope_formulas import slope_formula

__all__ = ["scale_instead_of_diagonal_products"]


def scale_instead_of_diagonal_products(program: Program) -> tuple[Program, int]:
    """``program`` with its products by a diagonal ``op(I, r)`` rewritten as scalings; and
    how many it rewrote. ``program`` must be flat (optimized)."""
    equations = program.equations
    readers: dict[int, int] = {}
    for eq in equations:
        for a in eq.inputs:
            if type(a) is Var:
                readers[a.id] = readers.get(a.id, 0) + 1
    for o in program.outputs:
        if type(o) is Var:
            readers[o.id] = readers.get(o.id, 0) + 1
    maker = {o.id: eq for eq in equations for o in eq.outputs}
    next_id = 1 + max(
        [v.id for v in program.inputs]
        + [v.id for v, _ in program.captured]
        + [o.id for eq in equations for o in eq.outputs]
    )
    dropped: set[int] = set()  # id() of the equations making a diagonal no longer read
    replaced: dict[int, list[Equation]] = {}  # id() of a product -> its replacement
    for eq in equations:
        if eq.op.numpy_impl is not np.matmul or eq.params or len(eq.inputs) != 2:
            continue
        for left in (True, False):
            diagonal, other = eq.inputs if left else eq.inputs[::-1]
            if type(diagonal) is not Var or readers.get(diagonal.id) != 1:
                continue
            made_by = maker.get(diagonal.id)
            found = _diagonal(made_by, diagonal) if made_by is not None else None
            if found is None or not _fits(other, diagonal, eq.outputs[0], left):
                continue
            scale = found
            n = diagonal.shape[0]
            steps: list[Equation] = []
            shape = (n, 1) if left else (n,)
            if _shape(scale) != shape:  # a column (scales rows) or a row (scales columns)
                if type(scale) is Const:
                    scale = Const(np.reshape(scale.value, shape))
                else:
                    reshaped = Var(next_id, shape, scale.dtype)
                    next_id += 1
                    steps.append(Equation(_reshape_op(shape), [scale], {}, [reshaped], False))
                    scale = reshaped
            steps.append(Equation(made_by.op, [other, scale], {}, eq.outputs, False))  # type: ignore[union-attr]
            replaced[id(eq)] = steps
            dropped.add(id(made_by))
            break
    if not replaced:
        return program, 0
    result: list[Equation] = []
    for eq in equations:
        if id(eq) not in dropped:
            result.extend(replaced.get(id(eq), [eq]))
    rewritten = program.with_equations(result)
    return rewritten, len(replaced)


def _diagonal(eq: Equation, out: Var) -> Var | Const | None:
    """The operand ``r`` when ``eq`` makes ``out = op(I, r)``, a diagonal matrix (``mul`` or a
    slope op ``g * f'(r)`` of the identity ``I`` and a vector ``r``); else ``None``."""
    if eq.multiple or eq.params or len(eq.inputs) != 2 or len(out.shape) != 2:
        return None
    n = out.shape[0]
    if out.shape != (n, n) or out.dtype not in (np.float64, np.float32):
        return None
    impl = eq.op.numpy_impl or eq.op.impl
    formula = slope_formula(impl)
    if formula is not None:  # g * f'(r): linear in g (read once), so zero off the diagonal
        linear = formula.count("{0}") == 1
        candidates = [(eq.inputs[0], eq.inputs[1])] if linear else []
    elif ufunc_of(impl) is np.multiply:
        candidates = [(eq.inputs[0], eq.inputs[1]), (eq.inputs[1], eq.inputs[0])]
    else:
        return None
    for identity, scale in candidates:
        if _is_identity(identity, n, out.dtype) and _is_vector(scale, n, out.dtype):
            return scale
    return None


def _is_identity(atom: Var | Const, n: int, dtype: np.dtype) -> bool:
    value = atom.value if type(atom) is Const else None
    return (
        type(value) is np.ndarray
        and value.shape == (n, n)
        and value.dtype == dtype
        and bool(np.array_equal(value, np.eye(n, dtype=dtype)))
    )


def _is_vector(atom: Var | Const, n: int, dtype: np.dtype) -> bool:
    shapes = ((n,), (1, n), (n, 1))
    if type(atom) is Var:
        return atom.weak is None and atom.dtype == dtype and atom.shape in shapes
    value = atom.value
    return type(value) is np.ndarray and value.dtype == dtype and value.shape in shapes


def _fits(other: Var | Const, diagonal: Var, out: Var, left: bool) -> bool:
    """``other`` is a matrix of the dtype whose product with ``diagonal`` is ``out``."""
    shape = _shape(other)
    dtype = other.dtype if type(other) is Var else getattr(other.value, "dtype", None)
    if len(shape) != 2 or dtype != diagonal.dtype or out.dtype != diagonal.dtype:
        return False
    if type(other) is Var and other.weak is not None:
        return False
    n = diagonal.shape[0]
    return shape[0] == n and out.shape == shape if left else shape[1] == n and out.shape == shape


def _shape(atom: Var | Const) -> tuple[int, ...]:
    return atom.shape if type(atom) is Var else np.shape(atom.value)


def _reshape_op(shape: tuple[int, ...]) -> Op:
    reshape: Callable = lambda v: v.reshape(shape)  # noqa: E731
    return Op("reshape", reshape, differentiable=False)
