"""A user-written handler: run a function in float32, whatever the dtype of its inputs.

    >>> import kenaz, kenaz.numpy as knp
    >>> with kenaz.handler(Float32Policy()):
    ...     y = knp.ones(3) * 2.0            # float64 input
    >>> y.dtype
    dtype('float32')

Run: ``.venv/bin/python examples/float32_policy.py``
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

import kenaz

_NARROWER = {
    np.dtype(np.float64): np.dtype(np.float32),
    np.dtype(np.complex128): np.dtype(np.complex64),
}


class Float32Policy(kenaz.Handler):
    """Casts double-precision arguments to single precision before each op.

    The casts are ops performed one level out, so a ``grad`` outside the
    policy differentiates through them (the gradient comes back in the
    input's dtype), and a ``vmap`` outside batches them. A ``dtype=float64``
    parameter (``x.astype(float)``) is narrowed too. Python floats need no
    cast: NumPy's promotion keeps ``float32 * 2.0`` in float32.
    """

    def handle(self, op: kenaz.Op, args: tuple, params: dict) -> Any:
        args = tuple(_narrow(a) for a in args)
        if "dtype" in params and params["dtype"] is not None:
            dtype = np.dtype(params["dtype"])
            params = {**params, "dtype": _NARROWER.get(dtype, dtype)}
        return kenaz.perform(op, *args, **params)


def _narrow(x: Any) -> Any:
    if isinstance(x, kenaz.Tensor) and x.dtype in _NARROWER:
        return x.astype(_NARROWER[x.dtype])  # a cast op, performed one level out
    if isinstance(x, np.ndarray) and x.dtype in _NARROWER:
        return x.astype(_NARROWER[x.dtype])
    return x


def in_float32(f: Callable) -> Callable:
    """``f`` run under :class:`Float32Policy`."""

    @functools.wraps(f)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        with kenaz.handler(Float32Policy()):
            return f(*args, **kwargs)

    return wrapped


def main() -> None:
    import kenaz.numpy as knp

    def loss(w, x):
        return knp.mean(knp.tanh(x @ w) ** 2)

    w, x = knp.ones((3, 2)) * 0.5, knp.ones((4, 3))
    print("loss in float32:      ", repr(in_float32(loss)(w, x)))
    print("gradient of it (f64): ", kenaz.grad(in_float32(loss))(w, x).dtype)
    print("gradient in float32:  ", in_float32(kenaz.grad(loss))(w, x).dtype)


if __name__ == "__main__":
    main()
