"""Jacobians and Hessians: ``jacfwd``, ``jacrev``, ``hessian``, ``hvp``.

``jacrev`` pulls back every basis vector of the output space, ``jacfwd``
pushes forward every basis vector of the input space; both do it with one
``vmap`` over the basis, so each op runs once over all basis vectors rather
than once per vector. As in JAX, the Jacobian of an output of shape ``S_out``
with respect to an input of shape ``S_in`` has shape ``S_out + S_in``; for
pytrees it is a pytree of outputs whose leaves are pytrees of the inputs.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, ParamSpec

import numpy as np

from . import tree
from .checks import normalize_argnums
from .convert import leaf_tensor
from .forward import jvp
from .ops import shape as shape_ops
from .ops.indexing import getitem
from .reverse import grad, vjp
from .tensor import Tensor
from .transform import with_selected
from .vectorize import vmap

__all__ = ["jacfwd", "jacrev", "hessian", "hvp"]


def _basis(leaves: Sequence[Tensor]) -> list[Tensor]:
    """The standard basis of the space of ``leaves``: for each leaf, its block of the rows
    of an identity matrix, shaped ``(total_size,) + leaf.shape``."""
    total = sum(leaf.size for leaf in leaves)
    blocks, start = [], 0
    for leaf in leaves:
        block = np.zeros((total, leaf.size), dtype=leaf.dtype)
        block[np.arange(start, start + leaf.size), np.arange(leaf.size)] = 1
        blocks.append(Tensor(block.reshape((total,) + leaf.shape)))
        start += leaf.size
    return blocks


def _split_axis(x: Tensor, axis: int, sizes: Sequence[int]) -> list[Tensor]:
    """Split ``x`` along ``axis`` into consecutive pieces of the given lengths."""
    if len(sizes) == 1:
        return [x]
    pieces, start = [], 0
    for n in sizes:
        pieces.append(getitem(x, (slice(None),) * axis + (slice(start, start + n),)))
        start += n
    return pieces


def _nest(outer_tree: Any, inner_tree: Any, blocks: list[list[Tensor]], single_input: bool) -> Any:
    """Build the Jacobian pytree: ``outer_tree`` (outputs) of ``inner_tree`` (inputs)."""
    inner = [tree.unflatten(inner_tree, row) for row in blocks]
    if single_input:
        inner = [row[0] for row in inner]
    return tree.unflatten(outer_tree, inner)


def _check_complex(leaves: Sequence[Any], holomorphic: bool, where: str, what: str) -> None:
    """JAX's dtype rules: with ``holomorphic`` complex leaves, otherwise real ones."""
    for leaf in leaves:
        kind = np.dtype(leaf.dtype if isinstance(leaf, Tensor) else np.asarray(leaf).dtype).kind
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


P = ParamSpec("P")  # the user function's parameters, kept by the Jacobian functions


def jacrev(
    f: Callable[P, Any],
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
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

    @functools.wraps(f)
    def jacobian(*args: Any, **kwargs: Any) -> Any:
        nums = normalize_argnums(argnums, len(args), "jacrev")
        selected = tuple(args[n] for n in nums)
        if holomorphic:
            _check_complex(tree.leaves(selected), True, "jacrev", "inputs")
        result = vjp(with_selected(f, args, kwargs, nums), *selected, has_aux=has_aux)
        out, pullback = result[0], result[1]
        out_flat, out_tree = tree.flatten(out)
        out_flat = [leaf_tensor(o, "jacrev") for o in out_flat]
        _check_complex(out_flat, holomorphic, "jacrev", "outputs")
        cotangents = tree.unflatten(out_tree, _basis(out_flat))
        # Row i of the Jacobian is the pullback of basis vector i: all rows at once.
        rows = vmap(pullback)(cotangents)
        in_flat, in_tree = tree.flatten(rows)
        sizes = [o.size for o in out_flat]
        per_input = [_split_axis(g, 0, sizes) for g in in_flat]
        blocks = [
            [shape_ops.reshape(pieces[i], o.shape + pieces[i].shape[1:]) for pieces in per_input]
            for i, o in enumerate(out_flat)
        ]
        jac = _nest(out_tree, in_tree, blocks, isinstance(argnums, (int, np.integer)))
        return (jac, result[2]) if has_aux else jac

    return jacobian


def jacfwd(
    f: Callable[P, Any],
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
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

    @functools.wraps(f)
    def jacobian(*args: Any, **kwargs: Any) -> Any:
        nums = normalize_argnums(argnums, len(args), "jacfwd")
        in_flat, in_tree = tree.flatten(tuple(args[n] for n in nums))
        in_flat = [leaf_tensor(x, "jacfwd") for x in in_flat]
        _check_complex(in_flat, holomorphic, "jacfwd", "inputs")
        primals = tree.unflatten(in_tree, in_flat)
        f_of_selected = with_selected(f, args, kwargs, nums)

        def push_forward(tangents: Any) -> Any:
            result = jvp(f_of_selected, primals, tangents, has_aux=has_aux)
            return result if has_aux else (*result, None)

        # Column j of the Jacobian is the push-forward of basis vector j: all columns at once.
        tangents = tree.unflatten(in_tree, _basis(in_flat))
        out, columns, aux = vmap(push_forward, out_axes=(None, -1, None))(tangents)
        out_flat, out_tree = tree.flatten(out)
        if holomorphic:
            _check_complex(out_flat, True, "jacfwd", "outputs")
        sizes = [x.size for x in in_flat]
        blocks = []
        for o, column in zip(out_flat, tree.leaves(columns), strict=True):
            pieces = _split_axis(column, column.ndim - 1, sizes)
            blocks.append(
                [
                    shape_ops.reshape(p, o.shape + x.shape)
                    for p, x in zip(pieces, in_flat, strict=True)
                ]
            )
        jac = _nest(out_tree, in_tree, blocks, isinstance(argnums, (int, np.integer)))
        return (jac, aux) if has_aux else jac

    return jacobian


def hessian(
    f: Callable[P, Any],
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
) -> Callable[P, Any]:
    """Hessian of the scalar function ``f``: ``jacfwd(jacrev(f))``.

    For an input of shape ``S`` the Hessian has shape ``S + S``.

    Examples
    --------
    >>> import kenaz.numpy as knp
    >>> from kenaz import hessian
    >>> hessian(lambda x: x[0] ** 2 * x[1])(knp.array([1.0, 2.0]))
    Tensor([[4., 2.],
            [2., 0.]])
    """
    return jacfwd(jacrev(f, argnums, has_aux, holomorphic), argnums, has_aux, holomorphic)


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
    gradient = grad(f, argnums=tuple(range(len(primals))))
    _, product = jvp(gradient, tuple(primals), tuple(tangents))
    return product[0] if len(primals) == 1 else product
