"""Products: ``matmul`` and ``einsum`` primitives; ``dot``, ``tensordot``, ``inner``,
``outer``, ``vdot`` composed from them."""

from __future__ import annotations

import string
from typing import Any

import numpy as np

from ..backend import NUMPY_TYPES, backend_dtype, common, namespace, value_of
from ..backend import einsum as backend_einsum
from ..convert import array_argument
from ..effects import Op, each_argument
from ..errors import ShapeError
from ..tensor import Tensor
from . import batching, reduction, shape
from . import elementwise as ew
from .linearity import linear, linear_in_each


def _shape(x: Any) -> tuple[int, ...]:
    return x.shape if isinstance(x, Tensor) else np.shape(x)


# -- matmul ------------------------------------------------------------------------------
def _matmul_vjp_x(ans, x, y):
    x_shape, x_dtype, x_vector = x.shape, x.dtype, x.ndim == 1

    def pullback(g):
        # A vector operand and no stack axes: one or two ops, instead of promoting
        # the vectors to matrices and back.
        if y.ndim == 1 and x.ndim <= 2:  # g[i] pairs with y: an outer product (n,) x (k,)
            gx = g * y if x_vector else shape._expand_dims(g, axis=(1,)) * y
            return reduction.sum_to(gx, x_shape, x_dtype)
        if x_vector and y.ndim == 2:  # (k, m) @ (m,)
            return reduction.sum_to(_matmul(y, g), x_shape, x_dtype)
        y_matrix = y if y.ndim > 1 else shape.expand_dims(y, 1)  # (m,) -> (m, 1)
        g = _as_matrix_cotangent(g, x_vector, y.ndim == 1)
        gx = matmul(g, shape.swapaxes(y_matrix, -1, -2))
        if x_vector:
            gx = shape.squeeze(gx, -2)
        return reduction.sum_to(gx, x_shape, x_dtype)

    return pullback


def _matmul_vjp_y(ans, x, y):
    y_shape, y_dtype, y_vector = y.shape, y.dtype, y.ndim == 1

    def pullback(g):
        if x.ndim == 1 and y.ndim <= 2:  # x pairs with g: an outer product (k,) x (m,)
            gy = g * x if y_vector else shape._expand_dims(x, axis=(1,)) * g
            return reduction.sum_to(gy, y_shape, y_dtype)
        if y_vector and x.ndim == 2:  # (n,) @ (n, k)
            return reduction.sum_to(_matmul(g, x), y_shape, y_dtype)
        x_matrix = x if x.ndim > 1 else shape.expand_dims(x, 0)  # (n,) -> (1, n)
        g = _as_matrix_cotangent(g, x.ndim == 1, y_vector)
        gy = matmul(shape.swapaxes(x_matrix, -1, -2), g)
        if y_vector:
            gy = shape.squeeze(gy, -1)
        return reduction.sum_to(gy, y_shape, y_dtype)

    return pullback


def _as_matrix_cotangent(g, x_vector: bool, y_vector: bool):
    """Give the cotangent of a matmul with vector operands its matrix axes back."""
    if x_vector:
        g = shape.expand_dims(g, g.ndim - (0 if y_vector else 1))
    if y_vector:
        g = shape.expand_dims(g, g.ndim)
    return g


def _matmul_impl(x, y):
    if type(x) is _ndarray is type(y) or (type(x) in NUMPY_TYPES and type(y) in NUMPY_TYPES):
        return _numpy_matmul(x, y)
    xp, (x, y) = common((x, y))
    return xp.matmul(x, y)


def _matmul_batch(op, args, batch_axes):
    (x, y), (bx, by) = args, batch_axes
    # Per-example ranks (`batching.ndim_of`, inlined: this rule runs for every product)
    x_ndim = (x.ndim if isinstance(x, Tensor) else np.ndim(x)) - (bx is not None)
    y_ndim = (y.ndim if isinstance(y, Tensor) else np.ndim(y)) - (by is not None)
    # A batch of vectors times a shared matrix is one matrix product (one BLAS call).
    if by is None and x_ndim == 1 and y_ndim == 2:
        return _product_of_two_matrices(op, batching.move_batch_to_front(x, bx), y), 0
    if bx is None and x_ndim == 2 and y_ndim == 1:  # x @ y_i for all i: Y @ x.T
        y_rows = batching.move_batch_to_front(y, by)
        return _product_of_two_matrices(op, y_rows, shape._transpose(x, axes=(1, 0))), 0
    # Otherwise: batched vectors become matrices, stacks get equal ranks, batch axis first.
    rank = max(x_ndim, y_ndim, 2)
    x_vector, y_vector = bx is not None and x_ndim == 1, by is not None and y_ndim == 1
    if bx is not None:
        x = batching.move_batch_to_front(x, bx)
        x = shape._expand_dims(x, axis=(1,)) if x_vector else x  # a row: (B, 1, k)
        x = batching.move_batch_to_front(x, 0, rank)
    if by is not None:
        y = batching.move_batch_to_front(y, by)
        y = shape._expand_dims(y, axis=(2,)) if y_vector else y  # a column: (B, k, 1)
        y = batching.move_batch_to_front(y, 0, rank)
    out = _product_of_matrices(op, x, y)
    promoted = []
    if y_vector:
        promoted.append(out.ndim - 1)
    if x_vector:
        y_dropped = by is None and y_ndim == 1  # NumPy removed y's vector axis itself
        promoted.append(out.ndim - 1 if y_dropped else out.ndim - 2)
    return (shape._squeeze(out, axis=tuple(sorted(promoted))) if promoted else out), 0


def _product_of_matrices(op, x, y):
    """``x @ y``; an outer product (contraction of length 1) as a broadcast multiply,
    which NumPy runs several times faster than a stack of rank-1 matrix products."""
    if batching.ndim_of(x) >= 2 and batching.ndim_of(y) >= 2 and batching.shape_of(x)[-1] == 1:
        return x * y
    return op(x, y)


def _product_of_two_matrices(op, x, y):
    """:func:`_product_of_matrices` of two operands known to be matrices."""
    return x * y if x.shape[-1] == 1 else op(x, y)


# Globals: NumPy's module attributes are slow reads (`kenaz.ops.elementwise._ndarray`).
_ndarray, _numpy_matmul = np.ndarray, np.matmul
_matmul = Op(
    "matmul",
    _matmul_impl,
    numpy_impl=np.matmul,  # for jit's compiled code
    vjp=[_matmul_vjp_x, _matmul_vjp_y],
    batch=_matmul_batch,
    saves=[(1,), (0,)],
)
linear(_matmul, (0, 1))


def matmul(x, y) -> Tensor:
    """Matrix product with NumPy's ``@`` semantics (stacks broadcast, vectors promoted)."""
    if isinstance(x, Tensor) and isinstance(y, Tensor):
        xs, ys = x.shape, y.shape
    else:  # lists of tensors: stacked before their shapes are read
        x, y = array_argument(x), array_argument(y)
        xs, ys = _shape(x), _shape(y)
    if not xs or not ys:
        raise ValueError(
            f"kenaz.matmul: operands must be at least 1-d, got shapes {xs} and {ys}; "
            "use `*` to multiply by a scalar"
        )
    inner_x = xs[-1]
    inner_y = ys[-2] if len(ys) > 1 else ys[0]
    if inner_x != inner_y:
        raise ValueError(
            f"kenaz.matmul: shapes {xs} and {ys} are not aligned: "
            f"{inner_x} (last axis of the first) != {inner_y} "
            f"({'second-to-last' if len(ys) > 1 else 'only'} axis of the second)"
        )
    if len(xs) > 2 and len(ys) > 2:  # only stacks of matrices can fail to broadcast
        try:
            np.broadcast_shapes(xs[:-2], ys[:-2])
        except ValueError:
            raise ValueError(
                f"kenaz.matmul: the stack dimensions of shapes {xs} and {ys} do not broadcast"
            ) from None
    return _matmul(x, y)


# -- einsum ------------------------------------------------------------------------------
def _einsum_impl(*operands, spec):
    if not NUMPY_TYPES.issuperset(map(type, operands)):
        xp, operands = common(operands)
        return backend_einsum(xp, spec, *operands)
    try:
        return np.einsum(spec, *operands, optimize=len(operands) > 2)
    except ValueError as error:  # sizes of a letter that differ between operands
        shapes = " and ".join(str(np.shape(operand)) for operand in operands)
        raise ShapeError(
            f"kenaz.einsum: {spec!r} does not fit operands of shapes {shapes}: {error}"
        ) from None


def _parse(spec: str) -> tuple[list[str], str]:
    inputs, output = spec.split("->")
    return inputs.split(","), output


def _einsum_vjp(index, ans, *operands, spec):
    inputs, output = _parse(spec)
    target = inputs[index]
    target_shape, target_dtype = operands[index].shape, operands[index].dtype
    others = [op for i, op in enumerate(operands) if i != index]
    other_subs = [sub for i, sub in enumerate(inputs) if i != index]
    sizes = dict(zip(target, target_shape))

    def pullback(g):
        available = set(output).union(*other_subs)
        unique = "".join(dict.fromkeys(target))
        kept = "".join(c for c in unique if c in available)
        reduced = _einsum(g, *others, spec=",".join([output, *other_subs]) + "->" + kept)
        # Letters that only the target had were summed out: broadcast over them.
        if kept != unique:
            missing = [i for i, c in enumerate(unique) if c not in available]
            reduced = shape.expand_dims(reduced, missing)
            reduced = shape.broadcast_to(reduced, tuple(sizes[c] for c in unique))
        # Repeated letters (a diagonal such as "ii"): put the result on the diagonal.
        if unique != target:
            reduced = _onto_diagonal(reduced, unique, target, sizes)
        return reduction.sum_to(reduced, target_shape, target_dtype)

    return pullback


def _eye_like(values: Tensor, n: int) -> Any:
    """The identity matrix of size ``n`` on the backend of ``values`` (also a vmap view or
    a jit-traced tensor, which have no value of their own to read: ``value_of``)."""
    value = value_of(values)
    if value is None or type(value) in NUMPY_TYPES:
        return np.eye(n, dtype=values.dtype)
    xp = namespace(value)
    return xp.eye(n, dtype=backend_dtype(xp, values.dtype))


def _onto_diagonal(values, unique: str, target: str, sizes: dict[str, int]):
    free = iter(c for c in string.ascii_letters if c not in target)
    renamed, eyes, eye_subs, seen = [], [], [], set()
    for c in target:
        if c in seen:
            new = next(free)
            eyes.append(Tensor(_eye_like(values, sizes[c])))
            eye_subs.append(c + new)
            renamed.append(new)
        else:
            seen.add(c)
            renamed.append(c)
    return _einsum(values, *eyes, spec=",".join([unique, *eye_subs]) + "->" + "".join(renamed))


def _einsum_batch(op, args, batch_axes, *, spec):
    # The batch axis gets a letter of its own, in place, and leads the output.
    letter = next(c for c in string.ascii_letters if c not in spec)
    inputs, output = _parse(spec)
    inputs = [
        sub if b is None else sub[:b] + letter + sub[b:]
        for sub, b in zip(inputs, batch_axes, strict=True)
    ]
    return op(*args, spec=",".join(inputs) + "->" + letter + output), 0


_einsum = Op(
    "einsum",
    _einsum_impl,
    vjp=each_argument(_einsum_vjp),
    batch=_einsum_batch,
    # Each operand's rule reads the other operands (multilinear), and of its own only the
    # shape and dtype, which no in-place change alters.
    saves=each_argument(lambda index: (slice(0, index), slice(index + 1, None))),
)
linear_in_each(_einsum)  # multilinear: an operand's jvp is einsum with the tangent there


def einsum(subscripts: str, *operands) -> Tensor:
    """Einstein summation (``numpy.einsum``), with ``...`` and implicit output supported."""
    operands = tuple(op if isinstance(op, Tensor) else array_argument(op) for op in operands)
    spec = _explicit_spec(subscripts, [_shape(op) for op in operands])
    return _einsum(*operands, spec=spec)


def _explicit_spec(subscripts: str, shapes: list[tuple[int, ...]]) -> str:
    """Rewrite an einsum spec without spaces, ellipses or an implicit output."""
    subscripts = subscripts.replace(" ", "")
    if "->" in subscripts:
        inputs_part, output = subscripts.split("->")
    else:
        inputs_part, output = subscripts, None
    inputs = inputs_part.split(",")
    if len(inputs) != len(shapes):
        raise ValueError(
            f"kenaz.einsum: {subscripts!r} names {len(inputs)} operands "
            f"but {len(shapes)} were given"
        )
    used = set(subscripts)
    free = [c for c in string.ascii_letters if c not in used]
    ellipsis_rank = max(
        (len(s) - len(sub.replace("...", "")) for sub, s in zip(inputs, shapes) if "..." in sub),
        default=0,
    )
    batch_letters = "".join(free[:ellipsis_rank])
    expanded = []
    for sub, s in zip(inputs, shapes):
        if "..." in sub:
            rank = len(s) - len(sub.replace("...", ""))
            sub = sub.replace("...", batch_letters[ellipsis_rank - rank :])
        if len(sub) != len(s):
            raise ValueError(
                f"kenaz.einsum: subscripts {sub!r} do not match an operand of shape {s}"
            )
        expanded.append(sub)
    sizes: dict[str, int] = {}
    for sub, s in zip(expanded, shapes):
        for letter, n in zip(sub, s):
            if sizes.setdefault(letter, n) != n and 1 not in (n, sizes[letter]):
                raise ShapeError(
                    f"kenaz.einsum: index {letter!r} of {subscripts!r} has size {sizes[letter]} "
                    f"in one operand and {n} in another (operand shapes {shapes})"
                )
    if output is None:
        counts: dict[str, int] = {}
        for c in "".join(expanded):
            counts[c] = counts.get(c, 0) + 1
        output = batch_letters + "".join(
            sorted(c for c, k in counts.items() if k == 1 and c not in batch_letters)
        )
    else:
        output = output.replace("...", batch_letters)
    return ",".join(expanded) + "->" + output


# -- composites ---------------------------------------------------------------------------
def dot(x, y) -> Tensor:
    """NumPy's ``dot``: products of scalars, vectors, matrices and stacks."""
    if isinstance(x, Tensor) and isinstance(y, Tensor):
        xs, ys = x.shape, y.shape
    else:  # lists of tensors: stacked before their shapes are read
        x, y = array_argument(x), array_argument(y)
        xs, ys = _shape(x), _shape(y)
    if not xs or not ys:
        return x * y
    if len(xs) <= 2 and len(ys) <= 2:
        return matmul(x, y)
    if len(ys) == 1:
        return matmul(x, y)
    # dot(a, b)[i, j, k, m] = sum(a[i, j, :] * b[k, :, m])
    return tensordot(x, y, axes=([-1], [-2]))


def tensordot(a, b, axes=2) -> Tensor:
    """Sum products over the given axes of ``a`` and ``b`` (``numpy.tensordot``)."""
    x, y = a, b  # NumPy's names for the arguments
    if not isinstance(x, Tensor):
        x = array_argument(x)
    if not isinstance(y, Tensor):
        y = array_argument(y)
    xs, ys = _shape(x), _shape(y)
    if isinstance(axes, (int, np.integer)):
        x_axes = list(range(len(xs) - int(axes), len(xs)))
        y_axes = list(range(int(axes)))
    else:
        x_axes, y_axes = ([a] if np.ndim(a) == 0 else list(a) for a in axes)
    x_axes = [a % len(xs) for a in x_axes]
    y_axes = [a % len(ys) for a in y_axes]
    letters = iter(string.ascii_letters)
    x_sub = [next(letters) for _ in xs]
    y_sub = [next(letters) for _ in ys]
    for a, b in zip(x_axes, y_axes):
        y_sub[b] = x_sub[a]
    out = [c for i, c in enumerate(x_sub) if i not in x_axes]
    out += [c for i, c in enumerate(y_sub) if i not in y_axes]
    return einsum("".join(x_sub) + "," + "".join(y_sub) + "->" + "".join(out), x, y)


def inner(x, y) -> Tensor:
    """Inner product over the last axes."""
    if not isinstance(x, Tensor):
        x = array_argument(x)
    if not isinstance(y, Tensor):
        y = array_argument(y)
    if not _shape(x) or not _shape(y):
        return x * y
    return tensordot(x, y, axes=([-1], [-1]))


def outer(a, b) -> Tensor:
    """Outer product of the flattened inputs."""
    return shape.expand_dims(shape.ravel(a), 1) * shape.expand_dims(shape.ravel(b), 0)


def vdot(x, y) -> Tensor:
    """Dot product of the flattened inputs, conjugating the first."""
    return reduction.sum(ew.conjugate(shape.ravel(x)) * shape.ravel(y))
