"""``custom_root`` and ``fixed_point``: solutions of equations, differentiated implicitly.

A root ``x*`` of ``f(x) = 0`` is found by the user's ``solve``, which runs on
plain values (no transformation sees its iterations, so none differentiates
them). Its derivative comes from the implicit function theorem instead: the
parameters of ``f`` are the tensors it closes over, lifted into inputs of the
call (:func:`kenaz.call.find_closed_over`), and with ``r(x, theta) = f(x)``

    dx* = -(dr/dx)^-1 (dr/dtheta) dtheta,        theta_bar = (dr/dtheta)^T w,
                                                   (dr/dx)^T w = -x_bar,

each linear system solved by the user's ``tangent_solve``. The rules perform
their ops outward, so outer transformations differentiate them again (any
order: the solution inside is the same call again) or batch them (``vmap``:
one root problem over the whole batch).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from . import tree
from .call import Call, CallFunction, CallInfo
from .convert import leaf_tensor
from .effects import no_handlers, perform_args
from .forward import jvp
from .ops.axes import batch_size
from .ops.elementwise import alias
from .reverse import vjp
from .tensor import Tensor
from .transform import zeros_like
from .vectorize import batch_first, vmap_flat

__all__ = ["custom_root", "fixed_point"]


class _Root(CallFunction):
    """One root problem as a call: its function is ``solve(f, initial_guess)``."""

    kind = "custom_root"

    def __init__(self, f: Callable, solve: Callable, tangent_solve: Callable) -> None:
        self.f, self.solve, self.tangent_solve = f, solve, tangent_solve
        super().__init__(lambda guess: solve(f, guess))
        self.__name__ = getattr(f, "__name__", type(f).__name__)
        self.op.name = f"{self.kind}[{self.__name__}]"

    def make_op(self, name: str) -> Call:
        return Call(
            name,
            _run_solve,
            forward=self._forward,
            reverse=self._reverse,
            batch=self._batch,
            impl=self._solve_eagerly,  # jit records the solve as one op, never its iterations
        )

    def _solve_eagerly(self, *values: Any, call: CallInfo) -> tuple:
        with no_handlers():
            outs = call.run_primal([Tensor(v) for v in values])
        return tuple(o._value for o in outs)

    # -- r(x, theta) = f(x), theta the lifted leaves ------------------------------------
    def residual(self, call: CallInfo, x: list, lifted: list) -> list[Tensor]:
        """``f`` at the solution leaves ``x`` with the lifted leaves ``lifted`` as parameters."""
        with call.substituting([*x, *lifted]) as substitute:
            out = self.f(call.diff_args(x)[0])
        leaves = [leaf_tensor(leaf, self.kind) for leaf in tree.leaves(out)]
        return leaves if substitute is None else [substitute.replace(o) for o in leaves]

    def _solution(self, args: tuple, call: CallInfo) -> list[Tensor]:
        return list(perform_args(self.op, args, {"call": call}))  # outer handlers see the call

    def _tangent_solve(self, call: CallInfo, linear: Callable, y: list) -> list[Tensor]:
        """``tangent_solve`` on leaves: ``u`` with ``linear(u) = y``."""

        def on_tree(u: Any) -> Any:
            return call.diff_args(linear(tree.leaves(u)))[0]

        u = self.tangent_solve(on_tree, call.diff_args(y)[0])
        return [leaf_tensor(leaf, self.kind) for leaf in tree.leaves(u)]

    def _forward(self, args: tuple, tangents: tuple, *, call: CallInfo) -> tuple:
        x = self._solution(args, call)
        n = call.n_declared
        lifted = list(args[n:])
        moving = [(i - n, t) for i, t in enumerate(tangents) if i >= n and t is not None]
        if not moving:
            return tuple(x), tuple(zeros_like(leaf) for leaf in x)
        positions = [i for i, _ in moving]

        def of_parameters(*chosen: Any) -> list[Tensor]:
            parameters = list(lifted)
            for i, value in zip(positions, chosen):
                parameters[i] = value
            return self.residual(call, x, parameters)

        _, b = jvp(of_parameters, [lifted[i] for i in positions], [t for _, t in moving])

        def linear(u: list) -> list:  # u -> (dr/dx) u at the solution
            return jvp(lambda *xs: self.residual(call, list(xs), lifted), x, u)[1]

        u = self._tangent_solve(call, linear, [-t for t in b])
        return tuple(x), tuple(u)

    def _reverse(self, args: tuple, *, call: CallInfo) -> tuple:
        outs = self._solution(args, call)
        # The pullback's own copy of the solution: the outputs get this level's records
        # once the rule returns, and the pullback must read the solution without them.
        x = [alias(leaf) for leaf in outs]
        n = call.n_declared
        lifted = list(args[n:])

        def pullback(g: tuple) -> list:
            x_bar = [zeros_like(leaf) if c is None else c for leaf, c in zip(x, g)]
            _, transposed = vjp(lambda *xs: self.residual(call, list(xs), lifted), *x)

            def linear(w: list) -> list:  # w -> (dr/dx)^T w at the solution
                return list(transposed(list(w)))

            w = self._tangent_solve(call, linear, [-c for c in x_bar])
            if not lifted:
                return [None] * n
            _, of_parameters = vjp(lambda *ps: self.residual(call, x, list(ps)), *lifted)
            return [None] * n + list(of_parameters(w))

        return tuple(outs), pullback

    def _batch(self, op: Call, values: list, axes: list, *, call: CallInfo) -> tuple:
        """The root problem of the whole batch: one solve, one residual over all examples."""
        size = batch_size(values, axes)
        n = call.n_declared
        guess = [batch_first(v, a, size) for v, a in zip(values[:n], axes[:n])]
        call.out_tree = tree.structure(call.diff_args(guess)[0])  # this call never runs
        lifted, lifted_axes = list(values[n:]), list(axes[n:])

        def batched_residual(x: Any) -> Any:
            leaves = tree.leaves(x)
            outs = vmap_flat(
                lambda *ls: self.residual(call, list(ls[:n]), list(ls[n:])),
                [*leaves, *lifted],
                [0] * n + lifted_axes,
                size,
            )
            return call.diff_args([batch_first(o, a, size) for o, a in outs])[0]

        root = custom_root(
            batched_residual, call.diff_args(guess)[0], self.solve, self.tangent_solve
        )
        return tuple(tree.leaves(root)), (0,) * n


def _run_solve(args: tuple, params: dict) -> tuple[Tensor, ...]:
    """``Call.run``: the solve on the current handler stack (jit's trace records it as one op)."""
    return tuple(params["call"].run_primal(args))


def custom_root(
    f: Callable[[Any], Any],
    initial_guess: Any,
    solve: Callable[[Callable, Any], Any],
    tangent_solve: Callable[[Callable, Any], Any],
) -> Any:
    """A root of ``f`` found by ``solve``, differentiated implicitly (JAX's ``lax.custom_root``).

    Parameters
    ----------
    f : callable
        ``f(x) -> residual`` shaped like ``x``. Its parameters are whatever
        tensors it reads (closures, attributes, globals): they are found by
        running it and differentiated.
    initial_guess : pytree of tensors
        Where ``solve`` starts (its derivative is zero).
    solve : callable
        ``solve(f, initial_guess) -> x`` with ``f(x) = 0``. It runs on plain
        values, so it may use Python control flow on them; under ``vmap`` it
        receives the problem of the whole batch (arrays with the batch axis
        first), so it must treat the arrays elementwise or as a whole.
    tangent_solve : callable
        ``tangent_solve(g, y) -> u`` with ``g(u) = y`` for a linear ``g`` (``f``
        linearized at the root, or its transpose). ``lambda g, y: y / g(1.0)``
        for a scalar problem.

    Returns
    -------
    pytree of tensors
        The root, with derivatives with respect to ``f``'s parameters to any order.

    Examples
    --------
    >>> import kenaz
    >>> import kenaz.numpy as knp
    >>> def sqrt(a):
    ...     def newton(f, x):
    ...         for _ in range(30):
    ...             x = x - f(x) / (2 * x)
    ...         return x
    ...     return kenaz.custom_root(lambda x: x * x - a, a, newton, lambda g, y: y / g(1.0))
    >>> round(float(kenaz.grad(sqrt)(4.0)), 6)
    0.25
    """
    guess = tree.map(lambda leaf: leaf_tensor(leaf, "custom_root"), initial_guess)
    return _Root(f, solve, tangent_solve)(guess)


def fixed_point(
    f: Callable[[Any, Any], Any], a: Any, x0: Any, *, tol: float = 1e-12, max_iter: int = 10_000
) -> Any:
    """``x*`` with ``x* = f(a, x*)``, by iteration from ``x0``, differentiated implicitly.

    The iterations run on plain values and are never differentiated; the
    derivative with respect to ``a`` (and to every tensor ``f`` reads) solves
    the linearized fixed point instead, to any order and under ``vmap``
    (cf. HIPS autograd's ``misc.fixed_points``). ``f`` must be a contraction
    in ``x`` near ``x*`` for the iterations (and their linearizations) to converge.

    Parameters
    ----------
    f : callable
        ``f(a, x) -> x``, ``x`` a tensor or a pytree of them.
    a : pytree of tensors
        The parameters.
    x0 : pytree of tensors
        The first iterate.
    tol : float, optional
        Stop when no entry of an iterate moves by more than ``tol``.
    max_iter : int, optional
        Stop after this many iterations, converged or not.

    Returns
    -------
    pytree of tensors
        The fixed point, shaped like ``x0``.

    Examples
    --------
    >>> import kenaz
    >>> import kenaz.numpy as knp
    >>> sqrt = lambda a: kenaz.fixed_point(lambda a, x: 0.5 * (x + a / x), a, a)
    >>> round(float(kenaz.grad(sqrt)(2.0)), 6), round(float(kenaz.grad(kenaz.grad(sqrt))(2.0)), 6)
    (0.353553, -0.088388)
    """

    def iterate(residual: Callable, x: Any) -> Any:  # runs on plain values only
        for _ in range(max_iter):  # x <- x + r(x) = f(a, x), with r(x) = f(a, x) - x
            step = residual(x)
            x = tree.map(lambda leaf, s: leaf + s, x, step)
            if all(_largest(s) <= tol for s in tree.leaves(step)):
                break
        return x

    def linear_iterate(linear: Callable, y: Any) -> Any:
        # linear(u) = y for linear = J - I (or its transpose) is the fixed point
        # u = J u - y = linear(u) + u - y: a fixed point again, so its derivatives (the
        # next order's) are implicit too, and under vmap it iterates over the whole batch.
        def step(y: Any, u: Any) -> Any:
            return tree.map(lambda lu, uu, yy: lu + uu - yy, linear(u), u, y)

        return fixed_point(step, y, tree.map(lambda leaf: -leaf, y), tol=tol, max_iter=max_iter)

    def residual(x: Any) -> Any:
        return tree.map(lambda fx, leaf: fx - leaf, f(a, x), x)

    residual.__name__ = getattr(f, "__name__", "fixed_point")
    return custom_root(residual, x0, iterate, linear_iterate)


def _largest(x: Any) -> float:
    """The largest magnitude in ``x`` (a plain tensor: solves run on plain values)."""
    return float(np.max(np.abs(np.asarray(x)))) if np.size(np.asarray(x)) else 0.0
