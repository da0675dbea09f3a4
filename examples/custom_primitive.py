"""Define a new primitive from scratch: ``logsumexp`` over one axis.

A primitive is a :class:`kenaz.Op`: a NumPy implementation plus its rules.
Everything kenaz does with it follows from those four pieces:

- ``impl``: runs on NumPy arrays when no transformation is active;
- ``jvp``: one rule per argument, ``rule(tangent, ans, *args, **params)``;
- ``vjp``: one rule per argument, ``maker(ans, *args, **params)`` returning
  ``pullback(cotangent)``; what the closure references is what the tape keeps;
- ``batch``: ``rule(op, args, axes, **params) -> (out, out_axis)`` for ``vmap``.

Rules are written with kenaz operations, so they are differentiable
themselves: ``grad(grad(...))`` and ``hessian`` work with no extra code.

Run: ``.venv/bin/python examples/custom_primitive.py``
"""

from __future__ import annotations

import numpy as np

import kenaz
import kenaz.numpy as knp


def _logsumexp_impl(x: np.ndarray, axis: int) -> np.ndarray:
    """The backend implementation: NumPy arrays in, NumPy array out."""
    peak = np.max(x, axis=axis, keepdims=True)
    peak = np.where(np.isfinite(peak), peak, 0.0)
    return np.squeeze(peak, axis) + np.log(np.sum(np.exp(x - peak), axis=axis))


def _softmax(x, ans, axis):
    """The derivative of logsumexp, from the input and the output (no overflow)."""
    return knp.exp(x - knp.expand_dims(ans, axis))


def _logsumexp_jvp(tangent, ans, x, axis):
    return knp.sum(tangent * _softmax(x, ans, axis), axis=axis)


def _logsumexp_vjp(ans, x, axis):
    # Called in the forward pass; the pullback closes over x and ans: the residuals.
    return lambda cotangent: knp.expand_dims(cotangent, axis) * _softmax(x, ans, axis)


def _logsumexp_batch(op, args, axes, axis):
    # `args` are whole batches; put the batch axis first and reduce one axis further.
    (x,), (batch_axis,) = args, axes
    return op(knp.moveaxis(x, batch_axis, 0), axis=axis + 1), 0


logsumexp_op = kenaz.Op(
    "logsumexp",
    _logsumexp_impl,
    jvp=[_logsumexp_jvp],
    vjp=[_logsumexp_vjp],
    batch=_logsumexp_batch,
)


def logsumexp(x, axis: int = -1) -> kenaz.Tensor:
    """``log(sum(exp(x), axis))`` without overflow: the public function.

    It normalizes ``axis`` (so the rules only ever see a non-negative int)
    and performs the op.
    """
    x = knp.asarray(x)
    return logsumexp_op(x, axis=axis % x.ndim)


def main() -> None:
    from kenaz.testing import check_op

    x = knp.array([[1000.0, 1000.0, 999.0], [-1.0, 0.0, 2.0]])
    print("logsumexp:          ", logsumexp(x))
    print("gradient (softmax): ", kenaz.grad(lambda x: knp.sum(logsumexp(x)))(x))
    print("vmap over rows:     ", kenaz.vmap(lambda row: logsumexp(row, 0))(x))
    rng = np.random.default_rng(0)
    for dtype in (np.float64, np.float32):
        check_op(logsumexp_op, [rng.normal(size=(3, 4)).astype(dtype)], {"axis": 1}, order=2)
    print("check_op: jvp, vjp, batching and second derivatives agree")


if __name__ == "__main__":
    main()
