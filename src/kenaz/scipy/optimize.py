"""``kenaz.scipy.optimize``: SciPy's optimizers, with derivatives from kenaz.

``minimize(fun, x0, method=...)`` runs :func:`scipy.optimize.minimize` on a
function written with ``kenaz.numpy``. kenaz supplies the exact gradient
(one reverse pass per evaluation, in place of SciPy's finite differences);
for the methods that take second derivatives, Hessian-vector products by
forward-over-reverse (``Newton-CG``, ``trust-ncg``, ``trust-krylov``,
``trust-constr``) or the full Hessian (``dogleg``, ``trust-exact``). The
parameters may be any pytree of arrays (a dict of weights, a tuple): SciPy
sees them as one flat float64 vector, and the result's ``x`` and ``jac`` come
back in the shape of ``x0``, as ``jax.scipy.optimize.minimize`` does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import scipy.optimize as _scipy_optimize
from scipy.optimize import OptimizeResult

from .. import tree
from ..jacobians import hessian as _hessian
from ..jacobians import hvp as _hvp
from ..reverse import value_and_grad
from ..tensor import Tensor

__all__ = ["minimize", "OptimizeResult"]

# How each of SciPy's methods takes derivatives (lower-case names, as SciPy compares them).
_GRADIENT_FREE = frozenset({"nelder-mead", "powell", "cobyla", "cobyqa"})
_TAKES_HESSP = frozenset({"newton-cg", "trust-ncg", "trust-krylov", "trust-constr"})
_NEEDS_FULL_HESSIAN = frozenset({"dogleg", "trust-exact"})
_HESSIAN_CHOICES = ("auto", "hvp", "full", None)


class _Flattening:
    """The map between a pytree of parameters and SciPy's flat float64 vector."""

    def __init__(self, x0: Any) -> None:
        leaves, self.treedef = tree.flatten(x0)
        if not leaves:
            raise ValueError("kenaz.scipy.optimize.minimize: x0 has no arrays to optimize")
        arrays = [np.asarray(leaf) for leaf in leaves]
        for position, array in enumerate(arrays):
            if array.dtype.kind == "c":
                raise TypeError(
                    f"kenaz.scipy.optimize.minimize: leaf {position} of x0 is complex "
                    f"({array.dtype}); SciPy minimizes over real vectors: optimize the real "
                    "and imaginary parts as separate real leaves"
                )
            if array.dtype.kind not in "biuf":
                raise TypeError(
                    f"kenaz.scipy.optimize.minimize: leaf {position} of x0 has dtype "
                    f"{array.dtype}; only real numbers can be optimized"
                )
        self.shapes = [a.shape for a in arrays]
        # Float leaves keep their dtype inside `fun` (a float32 model stays float32);
        # integer and bool leaves become float64, as scipy.optimize.minimize does.
        self.dtypes = [a.dtype if a.dtype.kind == "f" else np.dtype(np.float64) for a in arrays]
        self.sizes = [a.size for a in arrays]
        self.offsets = np.cumsum([0, *self.sizes])
        self.x0 = self.ravel(arrays)

    def ravel(self, leaves: Sequence[Any]) -> np.ndarray:
        """One float64 vector from leaves shaped like x0's."""
        return np.concatenate([np.asarray(leaf, dtype=np.float64).ravel() for leaf in leaves])

    def ravel_tree(self, pytree: Any) -> np.ndarray:
        return self.ravel(tree.leaves(pytree))

    def unravel(self, vector: np.ndarray) -> Any:
        """The pytree of tensors (x0's shapes and float dtypes) of a flat vector."""
        leaves = [
            Tensor(vector[start:stop].reshape(shape).astype(dtype, copy=True))
            for start, stop, shape, dtype in zip(
                self.offsets[:-1], self.offsets[1:], self.shapes, self.dtypes
            )
        ]
        return tree.unflatten(self.treedef, leaves)


def _scalar_value(value: Any) -> float:
    if not isinstance(value, Tensor | np.ndarray | float | int | np.floating) or np.ndim(value):
        shape = getattr(value, "shape", None)
        raise TypeError(
            "kenaz.scipy.optimize.minimize: fun must return a real scalar, got "
            f"{type(value).__name__}{'' if shape is None else f' of shape {shape}'}; "
            "reduce it (e.g. knp.sum) or return (loss, aux) pieces another way"
        )
    return float(value)


def _method_name(method: Any, bounds: Any) -> str | None:
    if method is None:
        return "l-bfgs-b" if bounds is not None else "bfgs"
    return method.lower() if isinstance(method, str) else None  # None: a custom callable


def _flat_bounds(bounds: Any, flattening: _Flattening) -> Any:
    """SciPy's Bounds from ``(lower, upper)``, each a scalar, None, or a pytree like x0."""
    if bounds is None:
        return None
    if isinstance(bounds, _scipy_optimize.Bounds):
        return bounds
    if not isinstance(bounds, (tuple, list)) or len(bounds) != 2:
        raise TypeError(
            "kenaz.scipy.optimize.minimize: bounds must be a pair (lower, upper), each a "
            "number, None or a pytree shaped like x0 (or a scipy.optimize.Bounds)"
        )

    def side(limit: Any, default: float) -> np.ndarray:
        if limit is None:
            return np.full(flattening.x0.shape, default)
        if np.ndim(limit) == 0 and not isinstance(limit, (dict, list, tuple)):
            return np.full(flattening.x0.shape, float(limit))
        try:  # a None inside the pytree leaves that part unbounded
            leaves = flattening.treedef.flatten_up_to(limit)
            return flattening.ravel(
                [
                    np.full(shape, default)
                    if leaf is None
                    else np.broadcast_to(np.asarray(leaf, dtype=np.float64), shape)
                    for leaf, shape in zip(leaves, flattening.shapes)
                ]
            )
        except (ValueError, TypeError) as error:
            raise ValueError(
                f"kenaz.scipy.optimize.minimize: a bound is not shaped like x0 ({error}); "
                "give each side as a number, None, or a pytree like x0"
            ) from None

    lower, upper = bounds
    return _scipy_optimize.Bounds(side(lower, -np.inf), side(upper, np.inf))


def minimize(
    fun: Callable[..., Any],
    x0: Any,
    args: tuple[Any, ...] = (),
    *,
    method: str | Callable[..., Any] | None = None,
    hessian: str | None = "auto",
    bounds: Any = None,
    constraints: Any = (),
    tol: float | None = None,
    callback: Callable[[Any], Any] | None = None,
    options: dict[str, Any] | None = None,
) -> OptimizeResult:
    """Minimize a scalar function of a pytree of parameters with SciPy and kenaz derivatives.

    Parameters
    ----------
    fun : callable
        ``fun(params, *args)`` returns a real scalar; ``params`` has the
        structure of ``x0`` with tensors as leaves. Written with
        ``kenaz.numpy``, so that kenaz can differentiate it.
    x0 : pytree
        The starting point: an array, or nested tuples, lists and dicts of
        arrays. Float leaves keep their dtype inside ``fun``; SciPy works on
        all of them as one flat float64 vector.
    args : tuple, optional
        Extra arguments passed to ``fun`` (not differentiated).
    method : str or callable, optional
        Any method of :func:`scipy.optimize.minimize`; by default ``"BFGS"``,
        or ``"L-BFGS-B"`` with bounds.
    hessian : {"auto", "hvp", "full", None}, optional
        Second derivatives for the methods that take them. ``"auto"`` gives
        Hessian-vector products (forward-over-reverse, never forming the
        matrix) to the methods that accept ``hessp`` and the full Hessian to
        ``dogleg`` and ``trust-exact``; ``"full"`` gives the full Hessian to
        every method that takes one; ``None`` gives none (SciPy then uses
        its own approximation where it has one).
    bounds : (lower, upper) or scipy.optimize.Bounds, optional
        Each side a number, ``None`` (unbounded) or a pytree shaped like
        ``x0``.
    constraints : optional
        Passed to SciPy unchanged; they act on the flat vector.
    tol, options : optional
        As in :func:`scipy.optimize.minimize`.
    callback : callable, optional
        ``callback(params)`` after each iteration, with ``params`` shaped like
        ``x0``.

    Returns
    -------
    scipy.optimize.OptimizeResult
        SciPy's result, with ``x`` and ``jac`` shaped like ``x0`` (tensors),
        ``fun`` a float, and the counts ``nfev``, ``njev``, ``nhev``, ``nit``.

    Examples
    --------
    >>> import kenaz.numpy as knp
    >>> from kenaz.scipy.optimize import minimize
    >>> def rosenbrock(p):
    ...     x, y = p["x"], p["y"]
    ...     return (1 - x) ** 2 + 100 * (y - x**2) ** 2
    >>> result = minimize(rosenbrock, {"x": -1.0, "y": 2.0}, method="BFGS")
    >>> result.success, round(float(result.x["x"]), 4), round(float(result.x["y"]), 4)
    (True, 1.0, 1.0)
    """
    if hessian not in _HESSIAN_CHOICES:
        raise ValueError(
            f"kenaz.scipy.optimize.minimize: hessian must be one of {_HESSIAN_CHOICES}, "
            f"got {hessian!r}"
        )
    flattening = _Flattening(x0)
    name = _method_name(method, bounds)
    value_and_gradient = value_and_grad(fun)

    def flat_value(x: np.ndarray) -> float:
        return _scalar_value(fun(flattening.unravel(x), *args))

    def flat_value_and_gradient(x: np.ndarray) -> tuple[float, np.ndarray]:
        value, gradient = value_and_gradient(flattening.unravel(x), *args)
        return _scalar_value(value), flattening.ravel_tree(gradient)

    def flat_hvp(x: np.ndarray, v: np.ndarray) -> np.ndarray:
        product = _hvp(lambda params: fun(params, *args), (flattening.unravel(x),),
                       (flattening.unravel(v),))  # fmt: skip
        return flattening.ravel_tree(product)

    def flat_hessian(x: np.ndarray) -> np.ndarray:
        def of_vector(vector: Tensor) -> Tensor:
            leaves = [
                vector[start:stop].reshape(shape).astype(dtype)
                for start, stop, shape, dtype in zip(
                    flattening.offsets[:-1], flattening.offsets[1:],
                    flattening.shapes, flattening.dtypes,
                )
            ]  # fmt: skip
            return fun(tree.unflatten(flattening.treedef, leaves), *args)

        return np.asarray(_hessian(of_vector)(Tensor(x)), dtype=np.float64)

    derivatives: dict[str, Any] = {}
    if name in _GRADIENT_FREE:
        objective: Callable[[np.ndarray], Any] = flat_value
    else:
        objective = flat_value_and_gradient
        derivatives["jac"] = True
        if name in _NEEDS_FULL_HESSIAN or (name in _TAKES_HESSP and hessian == "full"):
            if hessian is not None:
                derivatives["hess"] = flat_hessian
        elif name in _TAKES_HESSP and hessian in ("auto", "hvp"):
            derivatives["hessp"] = flat_hvp

    result = _scipy_optimize.minimize(
        objective,
        flattening.x0,
        method=method,
        bounds=_flat_bounds(bounds, flattening),
        constraints=constraints,
        tol=tol,
        callback=_pytree_callback(callback, flattening, name),
        options=options,
        **derivatives,
    )
    return _pytree_result(result, flattening)


def _pytree_callback(
    callback: Callable[[Any], Any] | None, flattening: _Flattening, name: str | None
) -> Any:
    if callback is None:
        return None
    if name == "trust-constr":  # SciPy calls trust-constr's callback with (xk, state)

        def with_state(xk: np.ndarray, state: Any) -> Any:
            return callback(flattening.unravel(np.asarray(xk)))

        return with_state

    def with_point(xk: np.ndarray) -> Any:
        return callback(flattening.unravel(np.asarray(xk)))

    return with_point


def _pytree_result(result: OptimizeResult, flattening: _Flattening) -> OptimizeResult:
    result.x = flattening.unravel(np.asarray(result.x, dtype=np.float64))
    if "jac" in result and np.shape(result.jac) == flattening.x0.shape:
        result.jac = flattening.unravel(np.asarray(result.jac, dtype=np.float64))
    if "fun" in result:
        result.fun = float(result.fun)
    return result
