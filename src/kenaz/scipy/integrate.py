"""``kenaz.scipy.integrate``: ``odeint``, differentiable by the adjoint method.

The solution is SciPy's (LSODA). Its derivatives never differentiate the
solver's steps:

- reverse mode (``grad``, ``vjp``) integrates the *adjoint* system backwards
  in time, as HIPS autograd and ``jax.experimental.ode`` do: the state
  ``[y, a, a_t, a_args]`` with ``a' = -a J_y``, ``a_t' = -a J_t``,
  ``a_args' = -a J_args``, from each output time to the previous one. Its
  memory is that of one evaluation of ``func``'s vjp, whatever the number
  of solver steps;
- forward mode (``jvp``) integrates the *sensitivity* system
  ``s' = J_y s + J_args args_dot`` alongside ``y``.

Both evaluate ``func``'s vjp or jvp with kenaz at each step of SciPy's solver.
Under ``vmap`` the examples that share the time grid are solved as one system
(``func`` vmapped); the derivative solves run once per example.
Derivatives of second order are refused (the adjoint and sensitivity solves
are primitives without rules of their own), and so is a ``func`` that closes
over a tensor being differentiated: pass such tensors in ``args``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import numpy as _knp
from ..convert import TrackedConversionError, as_tensor
from ..effects import Op, each_argument
from ..forward import jvp as _jvp
from ..ops import batching as _batching
from ..ops import indexing as _index
from ..reverse import vjp as _vjp
from ..tensor import Tensor

__all__ = ["odeint"]


class _Problem:
    """What the primitives need besides their tensor arguments (a parameter of the ops)."""

    __slots__ = ("func", "shape", "rtol", "atol", "mxstep", "count")

    def __init__(self, func: Callable, shape: tuple, rtol: Any, atol: Any, mxstep: int, count: int):
        self.func, self.shape, self.count = func, shape, count
        self.rtol, self.atol, self.mxstep = rtol, atol, mxstep

    def solve(self, rhs: Callable, y0: np.ndarray, times: np.ndarray) -> np.ndarray:
        from scipy.integrate import odeint as scipy_odeint

        return scipy_odeint(
            rhs, y0, times, rtol=self.rtol, atol=self.atol, mxstep=self.mxstep, full_output=False
        )

    def f(self, y: np.ndarray, s: float, args: tuple) -> np.ndarray:
        """``func(y, s, *args)`` on plain values, as a flat float64 array."""
        out = self.func(Tensor(y.reshape(self.shape)), s, *[Tensor(a) for a in args])
        return np.asarray(as_tensor(out)._value, dtype=np.float64).reshape(-1)


def _no_handlers(fn: Callable) -> Callable:
    """Run ``fn`` with no handler installed (the rules' inner derivatives are eager)."""

    def run(*a: Any) -> Any:
        from ..effects import _handlers

        token = _handlers.set(())
        try:
            return fn(*a)
        finally:
            _handlers.reset(token)

    return run


def _solve_impl(y0, t, *args, problem):
    size = int(np.prod(problem.shape))

    def rhs(y, s):
        return problem.f(y, s, args)

    out = _no_handlers(problem.solve)(rhs, np.asarray(y0, dtype=np.float64).reshape(size), t)
    return out.reshape((len(t), *problem.shape))


def _adjoint_impl(ys, t, g, *args, problem):
    """HIPS autograd's ``grad_odeint``: cotangents of (y0, t, *args) from ``g`` (T, *shape)."""
    size = int(np.prod(problem.shape))
    ys = np.asarray(ys, dtype=np.float64).reshape(len(t), size)
    g = np.asarray(g, dtype=np.float64).reshape(len(t), size)
    arg_sizes = [np.size(a) for a in args]
    arg_count = sum(arg_sizes)

    def split_args(flat):
        pieces, start = [], 0
        for a, n in zip(args, arg_sizes, strict=True):
            pieces.append(flat[start : start + n].reshape(np.shape(a)))
            start += n
        return pieces

    def augmented(state, s):
        y, adjoint = state[:size], state[size : 2 * size]

        def f(y_, s_, *args_):
            return _knp.reshape(problem.func(_knp.reshape(y_, problem.shape), s_, *args_), (-1,))

        primals = (Tensor(y), Tensor(np.float64(s)), *[Tensor(np.asarray(a)) for a in args])
        out, pullback = _vjp(f, *primals)
        cotangents = pullback(Tensor(-adjoint))
        flat = [np.asarray(c._value, dtype=np.float64).reshape(-1) for c in cotangents]
        return np.concatenate([np.asarray(out._value, dtype=np.float64), *flat])

    adjoint_y = g[-1].copy()
    adjoint_t0 = 0.0
    adjoint_args = np.zeros(arg_count)
    time_cotangents = []
    for i in range(len(t) - 1, 0, -1):
        slope = problem.f(ys[i], t[i], args)
        this_time = float(slope @ g[i])
        time_cotangents.append(this_time)
        adjoint_t0 -= this_time
        state = np.concatenate([ys[i], adjoint_y, [adjoint_t0], adjoint_args])
        end = _no_handlers(problem.solve)(augmented, state, np.array([t[i], t[i - 1]]))[1]
        adjoint_y = end[size : 2 * size] + g[i - 1]
        adjoint_t0 = end[2 * size]
        adjoint_args = end[2 * size + 1 :]
    time_cotangents.append(adjoint_t0)
    y0_bar = adjoint_y.reshape(problem.shape)
    t_bar = np.array(time_cotangents[::-1], dtype=np.float64).reshape(np.shape(t))
    return (y0_bar, t_bar, *[np.asarray(p) for p in split_args(adjoint_args)])


def _sensitivity_impl(y0, t, s0, *args_and_tangents, problem):
    """The tangent trajectory: ``s' = J_y f s + J_args f args_dot``, ``s(t0) = s0``."""
    count = problem.count
    args, tangents = args_and_tangents[:count], args_and_tangents[count:]
    size = int(np.prod(problem.shape))

    def f(y_, s_, *args_):
        return _knp.reshape(problem.func(_knp.reshape(y_, problem.shape), s_, *args_), (-1,))

    def augmented(state, s):
        y, sensitivity = state[:size], state[size:]
        primals = (Tensor(y), Tensor(np.float64(s)), *[Tensor(np.asarray(a)) for a in args])
        tangent_in = (
            Tensor(sensitivity),
            Tensor(np.float64(0.0)),
            *[Tensor(np.asarray(d, dtype=np.float64)) for d in tangents],
        )
        out, tangent_out = _jvp(f, primals, tangent_in)
        return np.concatenate(
            [np.asarray(out._value, dtype=np.float64), np.asarray(tangent_out._value).reshape(-1)]
        )

    y0 = np.asarray(y0, dtype=np.float64)
    state = np.concatenate([y0.reshape(size), np.asarray(s0, dtype=np.float64).reshape(size)])
    out = _no_handlers(problem.solve)(augmented, state, t)
    return out[:, size:].reshape((len(t), *problem.shape))


_adjoint = Op("odeint_adjoint", _adjoint_impl, multiple_results=True)


def _sensitivity(t, s0, args, tangents, problem, y0):
    return _sensitivity_op(y0, t, s0, *args, *tangents, problem=problem)


_sensitivity_op = Op("odeint_sensitivity", _sensitivity_impl)


def _zeros(x: Any) -> Tensor:
    return _knp.zeros(np.shape(x) if not isinstance(x, Tensor) else x.shape)


def _vjp_maker(index: int, ans, y0, t, *args, problem):
    def pullback(g):
        return _adjoint(ans, t, g, *args, problem=problem)[index]

    return pullback


def _jvp_rule(index: int, tangent, ans, y0, t, *args, problem):
    zero_args = [_zeros(a) for a in args]
    if index == 0:  # y0
        return _sensitivity(t, tangent, args, zero_args, problem, y0)
    if index == 1:  # the output times: y(t_i) moves with t_i, and with t0 through y0
        slopes = _knp.stack(
            [_knp.asarray(problem.func(ans[i], t[i], *args)) for i in range(ans.shape[0])]
        )
        shape = (-1,) + (1,) * len(problem.shape)
        from_t0 = _sensitivity(t, -slopes[0] * tangent[0], args, zero_args, problem, y0)
        return slopes * _knp.reshape(tangent, shape) + from_t0
    k = index - 2
    tangents = [tangent if j == k else zero_args[j] for j in range(len(args))]
    return _sensitivity(t, _zeros(y0), args, tangents, problem, y0)


def _solve_batch(op, args, batch_axes, *, problem):
    """``vmap`` of odeint: one solve of the whole batch, with ``func`` vmapped over it.

    Examples sharing the time grid are one system of ``batch x state`` equations,
    which SciPy's adaptive solver steps together; batched times need one solve each.
    """
    from ..vectorize import vmap

    size = _batching.batch_size(args, batch_axes)
    y0, t, *arguments = args
    y0_axis, t_axis, *argument_axes = batch_axes
    if t_axis is not None:  # a time grid per example
        columns = []
        for i in range(size):
            sliced = [
                a if b is None else _index.getitem(a, (slice(None),) * b + (i,))
                for a, b in zip(args, batch_axes, strict=True)
            ]
            columns.append(op(*sliced, problem=problem))
        return _knp.stack(columns), 0
    in_axes = (0, None, *[None if b is None else 0 for b in argument_axes])
    batched = _Problem(
        vmap(problem.func, in_axes=in_axes),
        (size, *problem.shape),
        problem.rtol,
        problem.atol,
        problem.mxstep,
        problem.count,
    )
    fronted = [
        _batching.move_batch_to_front(a, b) for a, b in zip(arguments, argument_axes, strict=True)
    ]
    y0 = _batching.with_batch_in_front(y0, y0_axis, size)
    return op(y0, t, *fronted, problem=batched), 1


_solve = Op(
    "odeint",
    _solve_impl,
    jvp=each_argument(_jvp_rule),
    vjp=each_argument(_vjp_maker),
    batch=_solve_batch,
)


def _refuse_tracked_closures(func: Callable) -> None:
    """A ``func`` closing over a tensor under differentiation would lose its derivative."""
    from ..convert import check_convertible

    for cell in getattr(func, "__closure__", None) or ():
        try:
            contents = cell.cell_contents
        except ValueError:
            continue
        values = contents if isinstance(contents, (list, tuple)) else [contents]
        for value in values:
            if isinstance(value, Tensor):
                try:
                    check_convertible(value, "odeint's func closing over a tensor")
                except TrackedConversionError:
                    raise ValueError(
                        "kenaz.scipy.integrate.odeint: func closes over a tensor that is being "
                        "differentiated or batched; its derivative would be lost. Pass it in "
                        "args=(...) and take it as an extra argument of func."
                    ) from None


def _argument(a: Any) -> Tensor:
    """An entry of ``args`` as a tensor (integers as float64: they are parameters)."""
    a = as_tensor(a)
    return a.astype(np.float64) if a.dtype.kind in "biu" else a


def odeint(
    func: Callable,
    y0: Any,
    t: Any,
    args: tuple = (),
    rtol: float | None = None,
    atol: float | None = None,
    mxstep: int = 0,
    tfirst: bool = False,
) -> Tensor:
    """Integrate ``dy/dt = func(y, t, *args)`` (SciPy's ``odeint``), differentiably.

    Parameters
    ----------
    func : callable
        ``func(y, t, *args)`` written with ``kenaz.numpy``; ``y`` has the shape of ``y0``.
    y0 : array_like
        The initial state (any shape).
    t : array_like
        The output times, monotonic, starting at the time of ``y0``.
    args : tuple, optional
        Extra arguments of ``func``: tensors here are differentiated.
    rtol, atol, mxstep : optional
        SciPy's tolerances and step limit (also used by the derivative solves).
    tfirst : bool, optional
        ``func(t, y, *args)`` instead, as in SciPy.

    Returns
    -------
    Tensor
        ``y`` at each time of ``t``: shape ``(len(t), *y0.shape)``.

    Examples
    --------
    >>> import kenaz, kenaz.numpy as knp
    >>> from kenaz.scipy.integrate import odeint
    >>> decay = lambda k: odeint(lambda y, t, k: -k * y, 1.0, knp.array([0.0, 1.0]), (k,))[-1]
    >>> round(float(kenaz.grad(decay)(0.5)), 6)  # d/dk exp(-k) = -exp(-k)
    -0.606531
    """
    if tfirst:
        user = func

        def func(y, s, *a):  # noqa: F811 - SciPy's tfirst, as func(y, t)
            return user(s, y, *a)

    _refuse_tracked_closures(func)
    y0 = as_tensor(y0)
    y0 = y0 if y0.dtype.kind == "f" else y0.astype(np.float64)
    t = as_tensor(t).astype(np.float64) if as_tensor(t).dtype != np.float64 else as_tensor(t)
    if t.ndim != 1 or t.shape[0] < 1:
        raise ValueError(
            f"kenaz.scipy.integrate.odeint: t must be 1-d and non-empty, got {t.shape}"
        )
    tensors = tuple(_argument(a) for a in args)
    problem = _Problem(func, y0.shape, rtol, atol, mxstep, len(tensors))
    return _solve(y0, t, *tensors, problem=problem)
