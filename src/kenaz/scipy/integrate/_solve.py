"""The solve op: ``solve(y0, t, *params, system=...)`` is ``y`` at the times ``t``, shape
``(len(t), n)``, for ``dy/dt = system.fn(y, t, *params)`` and ``y(t[0]) = y0`` (flat).

Its rules never differentiate the solver's steps; each is another solve,
performed as this same op, so that every rule is itself differentiable,
batchable and compiled:

- reverse (``grad``, ``vjp``): the *adjoint* system ``[y, a, a_t, a_params]``
  integrated backwards from each output time to the previous one (HIPS
  autograd's and ``jax.experimental.ode``'s method). Its memory is one
  evaluation of the right-hand side's vjp, whatever the number of steps;
- forward (``jvp``): the *sensitivity* system ``s' = J_y s + J_params
  params_dot`` integrated with ``y``;
- batching (``vmap``): the examples side by side as one system (its
  right-hand side ``vmap`` ped), one solve for the whole batch. Only a batch
  of time grids takes one solve per example.

``params`` are all the tensors the right-hand side reads: the leaves of
``args`` and the tensors it closes over, treated alike.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ... import numpy as _knp
from ...effects import Op
from ...ops import batching as _batching
from ...tensor import Tensor
from ._system import System, values_of


def _solve_impl(y0: Any, t: Any, *params: Any, system: System) -> np.ndarray:
    rhs = system.rhs(params)
    integrator = system.integrator
    jac = system.jacobian(params) if getattr(integrator, "derived", False) else None
    out = integrator.integrate(rhs, np.asarray(y0, dtype=np.float64), np.asarray(t), jac)
    return np.asarray(out, dtype=np.float64).reshape(np.shape(t)[0], system.size)


def _as_dtype(x: Tensor, like: Any) -> Tensor:
    dtype = like.dtype
    return x if x.dtype == dtype or dtype.kind not in "fc" else x.astype(dtype)


def _reverse(args: tuple, *, system: System) -> tuple:
    y0, t, *params = args
    ys = solve(y0, t, *params, system=system)

    def pullback(g: Tensor) -> tuple:
        return _adjoint(system, ys, g, y0, t, params)

    return ys, pullback


def _adjoint(system: System, ys: Tensor, g: Tensor, y0: Any, t: Any, params: list[Any]) -> tuple:
    """Cotangents of ``(y0, t, *params)`` from ``g`` (the cotangent of ``ys``)."""
    n = system.size
    sizes = tuple(int(np.prod(np.shape(p))) for p in params)
    adjoint = system.adjoint(sizes)
    count = int(np.shape(t)[0])
    a = g[count - 1]
    a_t = _knp.zeros((1,))
    a_params = _knp.zeros((sum(sizes),))
    time_cotangents = []
    for i in range(count - 1, 0, -1):
        slope = system.evaluate(ys[i], t[i], params)
        this_time = _knp.reshape(_knp.sum(slope * g[i]), (1,))
        time_cotangents.append(this_time)
        a_t = a_t - this_time
        state = _knp.concatenate([ys[i], a, a_t, a_params])
        interval = _knp.stack([t[i], t[i - 1]])
        end = solve(state, interval, *params, system=adjoint)[1]
        a = end[n : 2 * n] + g[i - 1]
        a_t = end[2 * n : 2 * n + 1]
        a_params = end[2 * n + 1 :]
    time_cotangents.append(a_t)
    t_bar = _knp.reshape(_knp.concatenate(time_cotangents[::-1]), np.shape(t))
    params_bar = []
    start = 0
    for p, size in zip(params, sizes, strict=True):
        piece = _knp.reshape(a_params[start : start + size], np.shape(p))
        params_bar.append(_as_dtype(piece, p))
        start += size
    return (_as_dtype(a, y0), _as_dtype(t_bar, t), *params_bar)


def _forward(primals: tuple, tangents: tuple, *, system: System) -> tuple:
    y0, t, *params = primals
    dy0, dt, *dparams = tangents
    ys = solve(y0, t, *params, system=system)
    active = tuple(k for k, d in enumerate(dparams) if d is not None)
    start = None if dy0 is None else _knp.asarray(dy0).astype(np.float64)
    if dt is not None:  # y0 is given at t[0]: moving t[0] moves the whole solution
        from_t0 = -system.evaluate(y0, t[0], params) * dt[0]
        start = from_t0 if start is None else start + from_t0
    tangent = None
    if start is not None or active:
        if start is None:
            start = _knp.zeros((system.size,))
        state = _knp.concatenate([_knp.asarray(y0).astype(np.float64), start])
        moving = [dparams[k] for k in active]
        out = solve(state, t, *params, *moving, system=system.sensitivity(active))
        tangent = out[:, system.size :]
    if dt is not None:  # y(t_i) moves with t_i at its slope
        count = int(np.shape(t)[0])
        slopes = _knp.stack([system.evaluate(ys[i], t[i], params) for i in range(count)])
        by_time = slopes * _knp.reshape(dt, (-1, 1))
        tangent = by_time if tangent is None else tangent + by_time
    return ys, tangent


def _batch(op: Op, args: list, axes: list, *, system: System) -> tuple:
    """One solve of the whole batch: the examples' states side by side, ``fn`` vmapped.

    The adaptive solver steps the batch together (its error norm covers every
    example). Examples with time grids of their own take one solve each.
    """
    size = _batching.batch_size(args, axes)
    y0, t, *params = args
    y0_axis, t_axis, *param_axes = axes
    if t_axis is not None:
        columns = []
        for i in range(size):
            sliced = [
                a if b is None else _knp.take(a, i, axis=b) for a, b in zip(args, axes, strict=True)
            ]
            columns.append(solve(*sliced, system=system))
        return _knp.stack(columns), 0
    n = system.size
    y0 = _batching.with_batch_in_front(y0, y0_axis, size)
    fronted = [_batching.move_batch_to_front(p, b) for p, b in zip(params, param_axes, strict=True)]
    batched = system.batched(size, tuple(b is not None for b in param_axes))
    out = solve(_knp.reshape(y0, (size * n,)), t, *fronted, system=batched)
    return _knp.reshape(out, (int(np.shape(t)[0]), size, n)), 1


solve = Op("ode_solve", _solve_impl, forward=_forward, reverse=_reverse, batch=_batch)

__all__ = ["solve", "values_of"]
