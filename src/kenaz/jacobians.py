"""Jacobians and Hessians: ``jacfwd``, ``jacrev``, ``hessian``, ``hvp``.

``jacrev`` pulls back every basis vector of the output space, ``jacfwd``
pushes forward every basis vector of the input space; both do it with one
``vmap`` over the basis, so each op runs once over all basis vectors rather
than once per vector. As in JAX, the Jacobian of an output of shape ``S_out``
with respect to an input of shape ``S_in`` has shape ``S_out + S_in``; for
pytrees it is a pytree of outputs whose leaves are pytrees of the inputs.

Integer and boolean inputs are refused unless ``allow_int``; a block of the
Jacobian that involves an integer input or output (which have no derivative)
is a ``kenaz.float0`` array of the block's shape, and only the float leaves
are pushed forward or pulled back.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ParamSpec

import numpy as np

from . import tree
from .checks import check_inputs, float0_zeros, input_tensors, normalize_argnums, select
from .forward import jvp, push_forward
from .ops import shape as shape_ops
from .ops.indexing import getitem
from .reverse import pull_back, record, value_and_grad_of
from .tensor import Tensor, _make
from .transform import gc_pause, wraps
from .vectorize import vmap_call

__all__ = ["jacfwd", "jacrev", "hessian", "hvp"]


# The bases made so far, by the leaves' shapes and dtypes: each call takes a copy (the
# Jacobian may be a view of its basis, and tensors are mutable), one NumPy call instead of
# building an identity (`numpy.eye`'s Python, reshapes, `Tensor`'s checks). Small bases only.
_bases: dict[tuple, list[np.ndarray]] = {}


def _basis(leaves: Sequence[Tensor]) -> list[Tensor]:
    """The standard basis of the space of ``leaves``: for each leaf, its block of the rows
    of an identity matrix, shaped ``(total_size,) + leaf.shape``."""
    key = tuple([(leaf.shape, leaf.dtype) for leaf in leaves])
    blocks = _bases.get(key)
    if blocks is None:
        total = sum(leaf.size for leaf in leaves)
        blocks, start = [], 0
        for leaf in leaves:
            block = np.zeros((total, leaf.size), dtype=leaf.dtype)
            block[np.arange(start, start + leaf.size), np.arange(leaf.size)] = 1
            blocks.append(block.reshape((total,) + leaf.shape))
            start += leaf.size
        if total > 256 or len(_bases) >= 256:  # kept: at most 256 bases of 512 kB (float64)
            return [_make(block) for block in blocks]
        _bases[key] = blocks
    return [_make(block.copy()) for block in blocks]


def _split_axis(x: Tensor, axis: int, sizes: Sequence[int]) -> list[Tensor]:
    """Split ``x`` along ``axis`` into consecutive pieces of the given lengths."""
    if len(sizes) == 1:
        return [x]
    pieces, start = [], 0
    for n in sizes:
        pieces.append(getitem(x, (slice(None),) * axis + (slice(start, start + n),)))
        start += n
    return pieces


def _reshaped(x: Tensor, shape: tuple[int, ...]) -> Tensor:
    """``x`` reshaped to ``shape`` (``x`` itself when it has that shape: no op)."""
    return x if x.shape == shape else shape_ops.reshape(x, shape)


def _is_float(x: Any) -> bool:
    """Whether the leaf ``x`` (a Tensor or a float0 array) has derivatives."""
    return isinstance(x, Tensor) and x.dtype.kind in "fc"


def _fill(values: Sequence[Any], leaves: Sequence[Any], filler: Any) -> list[Any]:
    """One entry per leaf: ``values`` in order for the float leaves, ``filler(leaf)`` else."""
    found = iter(values)
    return [next(found) if _is_float(leaf) else filler(leaf) for leaf in leaves]


def _nest(outer_tree: Any, inner_tree: Any, blocks: list[list[Tensor]], single_input: bool) -> Any:
    """Build the Jacobian pytree: ``outer_tree`` (outputs) of ``inner_tree`` (inputs)."""
    inner = [tree.unflatten(inner_tree, row) for row in blocks]
    if single_input:
        inner = [row[0] for row in inner]
    return tree.unflatten(outer_tree, inner)


def _check_complex(leaves: Sequence[Any], holomorphic: bool, where: str, what: str) -> None:
    """JAX's dtype rules: with ``holomorphic`` complex leaves, otherwise real ones."""
    for leaf in leaves:
        kind = (leaf if isinstance(leaf, Tensor) else np.asarray(leaf)).dtype.kind
        if holomorphic and kind != "c":
            raise TypeError(
                f"kenaz.{where}: with holomorphic=True the {what} must be complex, got "
                f"dtype {leaf.dtype}"
            )
        if not holomorphic and kind == "c":
            raise TypeError(
                f"kenaz.{where}: the {what} are complex ({leaf.dtype}); pass holomorphic=True "
                "for a holomorphic function, or use vjp/jvp directly for a non-holomorphic one"
            )


class _Argnums:
    """``argnums`` normalized for a call with ``n`` positional arguments: ``self(n)``,
    checked once per ``n`` (:func:`kenaz.checks.normalize_argnums`)."""

    __slots__ = ("argnums", "where", "known")

    def __init__(self, argnums: int | Sequence[int], where: str) -> None:
        self.argnums, self.where = argnums, where
        self.known: dict[int, tuple[int, ...]] = {}

    def __call__(self, n: int) -> tuple[int, ...]:
        nums = self.known.get(n)
        if nums is None:
            nums = self.known[n] = normalize_argnums(self.argnums, n, self.where)
        return nums


P = ParamSpec("P")  # the user function's parameters, kept by the Jacobian functions


def jacrev(
    f: Callable[P, Any],
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
    allow_int: bool = False,
) -> Callable[P, Any]:
    """Jacobian of ``f`` by reverse mode: one vectorized pullback of every output basis vector.

    Parameters
    ----------
    f : callable
        Function of pytrees of tensors returning a pytree of tensors (and an
        auxiliary value, with ``has_aux``).
    argnums : int or tuple of ints, optional
        Which positional arguments to differentiate with respect to.
    has_aux : bool, optional
        ``f`` returns ``(output, aux)``; the Jacobian function then returns
        ``(jacobian, aux)``.
    holomorphic : bool, optional
        ``f`` is holomorphic, with complex inputs and outputs: the Jacobian
        holds complex derivatives. Without it, outputs (``jacrev``) and
        inputs (``jacfwd``) must be real, as in JAX.
    allow_int : bool, optional
        Accept integer and boolean inputs, held constant, as ``grad`` does:
        their blocks are ``kenaz.float0`` arrays. (An integer output's blocks
        are float0 arrays too, with or without it.)

    Returns
    -------
    callable
        ``jac(*args, **kwargs)``: for an output of shape ``S_out`` and an
        input of shape ``S_in``, an array of shape ``S_out + S_in``. With a
        tuple ``argnums``, a tuple (one entry per argument); with pytree
        outputs, a pytree of them.

    Examples
    --------
    >>> import kenaz.numpy as knp
    >>> from kenaz import jacrev
    >>> jacrev(lambda x: x**2)(knp.array([1.0, 2.0]))
    Tensor([[2., 0.],
            [0., 4.]])
    """

    normalized = _Argnums(argnums, "jacrev")

    def jacobian(*args: Any, **kwargs: Any) -> Any:
        nums = normalized(len(args))
        function, selected = select(f, args, kwargs, nums)
        if holomorphic:  # the integer inputs' error first, as for any other input
            check_inputs([(n, args[n]) for n in nums], allow_int, "jacrev")
            _check_complex(tree.leaves(selected), True, "jacrev", "inputs")
        single_input = isinstance(argnums, (int, np.integer))
        with gc_pause:  # one pause for the forward pass and the (consuming) backward one
            rev = record(function, selected, has_aux, allow_int, "jacrev", nums, pause_gc=False)
            out_flat, in_flat = rev.outputs, rev.inputs
            if (
                len(out_flat) == 1
                and len(in_flat) == 1
                and _is_float(out_flat[0])
                and _is_float(in_flat[0])
            ):  # one array of one array, the common case
                jac = _one_block(rev, holomorphic, single_input)
            else:
                jac = _blocks(rev, holomorphic, single_input)
        return (jac, rev.aux) if has_aux else jac

    return wraps(f, jacobian)


def _one_block(rev: Any, holomorphic: bool, single_input: bool) -> Any:
    """``jacrev``'s Jacobian of the one float output leaf of the level ``rev`` recorded
    with respect to its one float input leaf: :func:`_blocks` without its bookkeeping."""
    out, x = rev.outputs[0], rev.inputs[0]
    _check_complex([out], holomorphic, "jacrev", "outputs")

    def pull_back_row(cotangent: Tensor) -> Tensor:
        return pull_back(rev, [cotangent], reusable=False)[0]

    # Row i of the Jacobian is the pullback of basis vector i: all rows at once.
    rows = vmap_call(pull_back_row, (_basis([out])[0],), {})
    return _nest(rev.out_tree, rev.in_tree, [[_reshaped(rows, out.shape + x.shape)]], single_input)


def _blocks(rev: Any, holomorphic: bool, single_input: bool) -> Any:
    """``jacrev``'s Jacobian from the level ``rev`` recorded: a block per (output leaf,
    input leaf), a float0 one where either is an integer."""
    out_flat, out_tree = rev.outputs, rev.out_tree
    in_flat, in_tree = rev.inputs, rev.in_tree
    out_floats = [_is_float(o) for o in out_flat]
    in_floats = [_is_float(x) for x in in_flat]
    float_outs = [o for o, is_float in zip(out_flat, out_floats) if is_float]
    _check_complex(float_outs, holomorphic, "jacrev", "outputs")

    def pull_back_rows(*cotangents: Tensor) -> tuple[Tensor, ...]:
        """The float inputs' cotangents for the float outputs' ``cotangents`` (once)."""
        given = iter(cotangents)
        seeds = [next(given) if is_float else None for is_float in out_floats]
        grads = pull_back(rev, seeds, reusable=False)
        return tuple([g for g, is_float in zip(grads, in_floats) if is_float])

    # Row i of the Jacobian is the pullback of basis vector i: all rows at once.
    rows: Any = []
    if float_outs and any(in_floats):
        rows = vmap_call(pull_back_rows, tuple(_basis(float_outs)), {})
    sizes = [o.size for o in float_outs]
    per_input = [_split_axis(g, 0, sizes) for g in rows]  # [float input][float output]
    blocks, i = [], 0
    for o, out_is_float in zip(out_flat, out_floats):
        pieces = iter([p[i] for p in per_input] if out_is_float else ())
        i += out_is_float
        blocks.append(
            [
                _reshaped(next(pieces), o.shape + x.shape)
                if out_is_float and in_is_float
                else float0_zeros(o.shape + x.shape)
                for x, in_is_float in zip(in_flat, in_floats)
            ]
        )
    return _nest(out_tree, in_tree, blocks, single_input)


def jacfwd(
    f: Callable[P, Any],
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
    allow_int: bool = False,
) -> Callable[P, Any]:
    """Jacobian of ``f`` by forward mode: one vectorized push-forward of every input basis vector.

    Same parameters and result layout as :func:`jacrev`; better when the
    inputs are smaller than the outputs.

    Examples
    --------
    >>> import kenaz.numpy as knp
    >>> from kenaz import jacfwd
    >>> jacfwd(lambda x: knp.sin(x) * x[0])(knp.array([0.0, 1.0]))
    Tensor([[0.        , 0.        ],
            [0.84147098, 0.        ]])
    """

    normalized = _Argnums(argnums, "jacfwd")

    def jacobian(*args: Any, **kwargs: Any) -> Any:
        nums = normalized(len(args))
        f_of_selected, selected = select(f, args, kwargs, nums)
        in_flat, in_tree = input_tensors(selected, allow_int, "jacfwd", nums)
        float_ins = [x for x in in_flat if _is_float(x)]
        _check_complex(float_ins, holomorphic, "jacfwd", "inputs")
        outputs: dict[str, Any] = {}  # what the outputs are, noted while tracing

        def columns_of(*tangents: Tensor) -> Any:
            """The float outputs' tangents for the float inputs' ``tangents`` (and the
            outputs that are Tensors, which vmap returns unbatched)."""
            filled = _fill(tangents, in_flat, lambda x: float0_zeros(x.shape))
            out_leaves, outputs["tree"], out_tangents, aux = push_forward(
                f_of_selected, in_flat, in_tree, filled, has_aux
            )
            outputs["leaves"] = out_leaves  # float0 leaves, from an inner jacobian, stay out
            tensors = [o for o in out_leaves if isinstance(o, Tensor)]
            columns = [t for t, o in zip(out_tangents, out_leaves) if _is_float(o)]
            return tensors, columns, aux

        # Column j of the Jacobian is the push-forward of basis vector j: all columns at once.
        if float_ins:
            batch = tuple(_basis(float_ins))
            tensors, columns, aux = vmap_call(columns_of, batch, {}, 0, (None, -1, None))
        else:  # nothing to push forward: the function once, for its outputs
            tensors, columns, aux = columns_of()
        found = iter(tensors)
        out_flat = [next(found) if isinstance(o, Tensor) else o for o in outputs["leaves"]]
        out_tree = outputs["tree"]
        if holomorphic:
            _check_complex([o for o in out_flat if _is_float(o)], True, "jacfwd", "outputs")
        sizes = [x.size for x in float_ins]
        float_columns = iter(columns)
        blocks = []
        for o in out_flat:
            if _is_float(o) and float_ins:
                column = next(float_columns)
                pieces = _split_axis(column, column.ndim - 1, sizes)
                reshaped = [
                    shape_ops.reshape(p, o.shape + x.shape) for p, x in zip(pieces, float_ins)
                ]
                blocks.append(
                    _fill(reshaped, in_flat, lambda x, o=o: float0_zeros(o.shape + x.shape))
                )
            else:
                blocks.append([float0_zeros(o.shape + x.shape) for x in in_flat])
        jac = _nest(out_tree, in_tree, blocks, isinstance(argnums, (int, np.integer)))
        return (jac, aux) if has_aux else jac

    return wraps(f, jacobian)


def hessian(
    f: Callable[P, Any],
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
    allow_int: bool = False,
) -> Callable[P, Any]:
    """Hessian of the scalar function ``f``: ``jacfwd(jacrev(f))``.

    For an input of shape ``S`` the Hessian has shape ``S + S``. Same
    parameters as :func:`jacrev` (with ``allow_int``, the blocks of integer
    inputs are ``kenaz.float0`` arrays). An op with only a vjp rule works
    here too: its jvp is the transpose of its pullback.

    Examples
    --------
    >>> import kenaz.numpy as knp
    >>> from kenaz import hessian
    >>> hessian(lambda x: x[0] ** 2 * x[1])(knp.array([1.0, 2.0]))
    Tensor([[4., 2.],
            [2., 0.]])
    """
    inner = jacrev(f, argnums, has_aux, holomorphic, allow_int)
    outer = jacfwd(inner, argnums, has_aux, holomorphic, allow_int)

    normalized = _Argnums(argnums, "hessian")

    def hessian_f(*args: Any, **kwargs: Any) -> Any:
        nums = normalized(len(args))
        check_inputs([(n, args[n]) for n in nums], allow_int, "hessian")  # named as hessian
        return outer(*args, **kwargs)

    return wraps(f, hessian_f)


def hvp(f: Callable, primals: Sequence[Any], tangents: Sequence[Any]) -> Any:
    """Hessian-vector product of the scalar function ``f``, by forward-over-reverse.

    Computes ``H v`` without forming ``H``: the ``jvp`` of ``grad(f)`` at
    ``primals`` along ``tangents``, at the cost of a few gradient evaluations.

    Parameters
    ----------
    f : callable
        Scalar function of ``len(primals)`` arguments.
    primals, tangents : tuple or list
        The point, and the vector (same structure and shapes).

    Returns
    -------
    Tensor or tuple
        ``H v`` shaped like the primal for a single argument; for several
        arguments, a tuple with one entry per argument (the rows of the full
        Hessian over all arguments, times the concatenated tangents).

    Examples
    --------
    >>> import kenaz.numpy as knp
    >>> from kenaz import hvp
    >>> hvp(lambda x: knp.sum(x**3), (knp.array([1.0, 2.0]),), (knp.array([1.0, 0.0]),))
    Tensor([6., 0.])
    """
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError(
            "kenaz.hvp: primals and tangents must be tuples (one entry per argument); "
            "write hvp(f, (x,), (v,))"
        )
    gradient = value_and_grad_of(f, tuple(range(len(primals))), False, False, False, "grad", False)
    _, product = jvp(gradient, tuple(primals), tuple(tangents))
    return product[0] if len(primals) == 1 else product
