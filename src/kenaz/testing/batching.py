"""Checking batching rules: ``vmap`` against a per-slice loop.

:func:`check_batching` runs a function (usually one primitive) under ``vmap``
on a batch of differing examples and compares the result with calling it on
each example separately and stacking. It moves the batch axis around (first,
in the middle, last), batches every argument alone (the others shared) and
all of them together, and fails if an op fell back to the slow per-example
loop because it has no batching rule. ``check_op`` runs it for every
primitive it checks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import tree, vectorize
from ..effects import Op
from ..errors import ConcretizationError
from ..tensor import Tensor

__all__ = ["check_batching", "batch_of_examples"]


def _numpy(x: Any) -> np.ndarray:
    return np.asarray(x.numpy() if isinstance(x, Tensor) else x)


def batch_of_examples(value: Any, batch_size: int) -> np.ndarray:
    """``batch_size`` different examples like ``value``, stacked on a new axis 0.

    Example ``k`` is ``value`` with its elements rolled by ``k`` positions, so
    every example holds the same set of values: they stay inside the op's
    domain, index arrays stay valid, and masks keep their number of True.
    """
    value = _numpy(value)
    flat = value.reshape(-1)
    return np.stack([np.roll(flat, k).reshape(value.shape) for k in range(batch_size)])


def _is_array(x: Any) -> bool:
    return isinstance(x, (Tensor, np.ndarray))


def _as_tensor(x: Any) -> Any:
    return Tensor(x) if isinstance(x, np.ndarray) else x


def _batches_a_mask(args: Sequence[Any], layout: tuple[int | None, ...]) -> bool:
    return any(
        axis is not None and _numpy(a).dtype == np.bool_
        for a, axis in zip(args, layout, strict=True)
    )


def _layouts(args: Sequence[Any]) -> list[tuple[int | None, ...]]:
    """Where each argument's batch axis goes in each run (None: shared by all examples).

    All arrays batched with the batch axis first, in the middle and last; then,
    with several arrays, each one batched alone while the others are shared.
    """
    ranks = [np.ndim(_numpy(a)) if _is_array(a) else None for a in args]
    layouts = [
        tuple(None if r is None else place(r) for r in ranks)
        for place in (lambda r: 0, lambda r: (r + 1) // 2, lambda r: r)
    ]
    batched = [i for i, r in enumerate(ranks) if r is not None]
    if len(batched) > 1:
        layouts += [tuple(0 if j == i else None for j in range(len(args))) for i in batched]
    return list(dict.fromkeys(layouts))


def check_batching(
    fn: Op | Callable[..., Any],
    args: Sequence[Any],
    params: dict[str, Any] | None = None,
    *,
    batch_size: int = 3,
    atol: float | None = None,
    rtol: float | None = None,
) -> None:
    """Check that ``vmap(fn)`` equals a loop of ``fn`` over examples.

    Parameters
    ----------
    fn : Op or callable
        The primitive, or a function performing one.
    args : sequence
        One example's positional arguments. Arrays are batched (see
        :func:`batch_of_examples`); Python scalars are shared.
    params : dict, optional
        Keyword parameters, shared by all examples.
    batch_size : int, optional
        Number of examples.
    atol, rtol : float, optional
        Tolerances (by default tight, from the output's precision).

    Raises
    ------
    AssertionError
        Naming the layout of batch axes that failed and the largest error,
        or saying that an op has no batching rule.

    Examples
    --------
    >>> import numpy as np
    >>> import kenaz.numpy as knp
    >>> from kenaz.testing.batching import check_batching
    >>> check_batching(lambda x, y: knp.sum(x * y, axis=0), (np.ones((2, 3)), np.ones(3)))
    """
    params = dict(params or {})
    args = tuple(args)
    name = fn.name if isinstance(fn, Op) else getattr(fn, "__name__", repr(fn))
    call = lambda *xs: fn(*xs, **params)
    batches = [batch_of_examples(a, batch_size) if _is_array(a) else None for a in args]
    if not any(b is not None for b in batches):
        return  # nothing to batch
    for layout in _layouts(args):
        where = f"check_batching({name}), in_axes={layout}"
        inputs = [
            _as_tensor(a) if axis is None else np.moveaxis(batch, 0, axis)
            for a, batch, axis in zip(args, batches, layout, strict=True)
        ]
        expected = _loop(call, args, batches, layout, batch_size)
        fallbacks = vectorize.fallback_count
        try:
            actual = vectorize.vmap(call, in_axes=layout)(*inputs)
        except ConcretizationError:
            if _batches_a_mask(args, layout):
                continue  # a batched boolean mask selects a different number of elements
            raise
        if vectorize.fallback_count != fallbacks:
            raise AssertionError(f"{where}: an op has no batching rule and ran once per example")
        _assert_close(actual, expected, atol, rtol, where)


def _loop(
    call: Callable[..., Any],
    args: tuple[Any, ...],
    batches: Sequence[np.ndarray | None],
    layout: tuple[int | None, ...],
    size: int,
) -> Any:
    """``call`` on each example, the outputs stacked on a new axis 0 (as NumPy arrays)."""
    outs = []
    for k in range(size):
        example = [
            _as_tensor(a) if axis is None else Tensor(batch[k])
            for a, batch, axis in zip(args, batches, layout, strict=True)
        ]
        outs.append(call(*example))
    return tree.map(lambda *leaves: np.stack([_numpy(leaf) for leaf in leaves]), *outs)


def _assert_close(
    actual: Any, expected: Any, atol: float | None, rtol: float | None, where: str
) -> None:
    actual_leaves, actual_tree = tree.flatten(actual)
    expected_leaves, expected_tree = tree.flatten(expected)
    if actual_tree != expected_tree:
        raise AssertionError(f"{where}: output structure {actual_tree} != {expected_tree}")
    for got, want in zip(actual_leaves, expected_leaves, strict=True):
        got, want = _numpy(got), _numpy(want)
        if got.shape != want.shape:
            raise AssertionError(f"{where}: shape {got.shape}, expected {want.shape}")
        if got.dtype != want.dtype:
            raise AssertionError(f"{where}: dtype {got.dtype}, expected {want.dtype}")
        default = float(np.finfo(want.dtype).eps) * 64 if want.dtype.kind in "fc" else 0.0
        tolerance = {
            "atol": default if atol is None else atol,
            "rtol": default if rtol is None else rtol,
        }
        if not np.allclose(got, want, equal_nan=True, **tolerance):
            error = np.max(np.abs(got.astype(complex) - want.astype(complex)), initial=0.0)
            raise AssertionError(f"{where}: vmap differs from the loop by up to {error:.3g}")
