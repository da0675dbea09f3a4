"""The solve op: ``solve(y0, t, *params, system=...)`` is ``y`` at the times ``t``, shape
``(len(t), n)``, for ``dy/dt = system.fn(y, t, *params)`` and ``y(t[0]) = y0`` (flat).

Its rules never differentiate the solver's steps; each is another solve, so
that every rule is itself differentiable, batchable and compiled:

- reverse (``grad``, ``vjp``) of a small system (:func:`_by_sensitivities`):
  one solve of ``y`` with its sensitivities ``S = dy/d(y0, params)``, whose
  pullback contracts the cotangent with ``S``: no backward solve, and its
  derivatives (second order) are those of that solve, stable for stiff
  systems too;
- reverse of a larger system: the *adjoint* ``a' = -a J_y``, ``a_params' =
  -a J_params``, integrated backwards with ``a`` jumping by the cotangent at
  each output time. First order is the ``ode_adjoint`` op: one solve for all
  output times, ``y`` from a dense forward solve (stable for stiff systems).
  Its derivatives (second order) are those of the same quantities computed
  from the sensitivities' forward solve (no ``y`` integrated backwards, which
  a stiff system makes diverge). Memory is that of the right-hand side's vjp, whatever the
  number of steps; the times' cotangents need no solve;
- forward (``jvp``): the *sensitivity* system ``s' = J_y s + J_params
  params_dot`` integrated with ``y``, as this same op;
- batching (``vmap``): the examples side by side as one system (its
  right-hand side ``vmap`` ped), one solve for the whole batch. Only a batch
  of time grids takes one solve per example.

``params`` are all the tensors the right-hand side reads: the leaves of
``args`` and the tensors it closes over, treated alike.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ... import numpy as _knp
from ...effects import Op
from ...forward import jvp
from ...ops import batching as _batching
from ...reverse import vjp
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


# Reverse mode solves either the sensitivities ``[y, dy/d(y0, params)]`` forward (one
# solve; the pullback contracts them) or the adjoint backward (a dense forward solve, then
# one solve of every output interval's adjoint side by side). The sensitivities are taken
# while their state has at most this many entries, or fewer than the adjoint's: one solve,
# no interpolation, cheap steps (the states are small, run as float code).
SENSITIVITY_LIMIT = 128
REVERSE: str | None = None  # "adjoint" or "sensitivities": force one (tests, comparisons)


def _by_sensitivities(n: int, m: int, count: int) -> bool:
    if REVERSE is not None:
        return REVERSE == "sensitivities"
    size = n * (1 + m)
    return size <= SENSITIVITY_LIMIT or size <= max(count - 1, 1) * m


def _reverse(args: tuple, *, system: System) -> tuple:
    y0, t, *params = args
    n = system.size
    m = n + sum(int(np.prod(np.shape(p))) for p in params)
    if _by_sensitivities(n, m, int(np.shape(t)[0])):
        return _reverse_by_sensitivities(system, y0, t, params, m)
    ys = solve(y0, t, *params, system=system)

    def pullback(g: Tensor) -> tuple:
        return _adjoint(system, ys, g, y0, t, params)

    return ys, pullback


def _sensitivities(system: System, y0: Any, t: Any, params: Sequence[Any], m: int) -> tuple:
    """``ys`` and ``S = dy/d(y0, params)`` of shape ``(len(t), n, m)``, from one solve."""
    n = system.size
    shapes = tuple(tuple(int(d) for d in np.shape(p)) for p in params)
    start = np.zeros((n, m))
    start[:, :n] = np.eye(n)
    state = _knp.concatenate([_knp.asarray(y0).astype(np.float64), _knp.asarray(start.reshape(-1))])
    out = solve(state, t, *params, system=system.sensitivities(shapes))
    return out[:, :n], _knp.reshape(out[:, n:], (int(np.shape(t)[0]), n, m))


def _reverse_by_sensitivities(system: System, y0: Any, t: Any, params: list, m: int) -> tuple:
    """``ys`` with ``S = dy/d(y0, params)`` at each time, from one solve; the pullback is
    ``g`` contracted with ``S`` (differentiable: the solve is this op again)."""
    n = system.size
    ys, S = _sensitivities(system, y0, t, params, m)

    def pullback(g: Tensor) -> tuple:
        bar = _knp.einsum("ti,tij->j", _knp.asarray(g), S)
        return (
            _as_dtype(bar[:n], y0),
            _times_cotangent(system, ys, g, y0, t, params, bar[:n]),
            *_split(bar[n:], params),
        )

    return ys, pullback


def _adjoint(system: System, ys: Tensor, g: Tensor, y0: Any, t: Any, params: list[Any]) -> tuple:
    """Cotangents of ``(y0, t, *params)`` from ``g`` (the cotangent of ``ys``).

    The adjoint ``a`` at ``t[0]`` and the parameters' cotangents come from the
    adjoint op; the times' cotangents need no solve: ``y(t_i)`` moves with
    ``t_i`` at its slope, and with ``t[0]`` as ``-Phi(t_i, t_0) f(y0, t0)``.
    """
    a0, a_params = adjoint(ys, g, t, *params, system=system)
    t_bar = _times_cotangent(system, ys, g, y0, t, params, a0)
    return (_as_dtype(a0, y0), t_bar, *_split(a_params, params))


def _times_cotangent(
    system: System, ys: Tensor, g: Any, y0: Any, t: Any, params: list[Any], a0: Tensor
) -> Tensor:
    """The cotangent of ``t``: ``y(t_i)`` moves with ``t_i`` at its slope, and with
    ``t[0]`` as ``-Phi(t_i, t_0) f(y0, t0)`` (``a0`` is ``y0``'s cotangent). Zeros, with no
    slope evaluated, if no transformation tracks ``t``."""
    if not getattr(t, "_trace", None):
        return _knp.zeros_like(_knp.asarray(t))
    count = int(np.shape(t)[0])
    slopes = [system.evaluate(ys[i], t[i], params) for i in range(1, count)]
    later = [_knp.sum(slope * g[i + 1]) for i, slope in enumerate(slopes)]
    first = -_knp.sum((a0 - g[0]) * system.evaluate(y0, t[0], params))
    return _as_dtype(_knp.reshape(_knp.stack([first, *later]), np.shape(t)), t)


def _split(flat: Tensor, params: Sequence[Any]) -> list[Tensor]:
    """``flat`` cut into pieces of the shapes of ``params`` (and their dtypes)."""
    pieces, start = [], 0
    for p in params:
        size = int(np.prod(np.shape(p)))
        piece = _knp.reshape(flat[start : start + size], np.shape(p))
        pieces.append(_as_dtype(piece, p))
        start += size
    return pieces


def _adjoint_impl(ys: Any, g: Any, t: Any, *params: Any, system: System) -> tuple:
    """``a(t[0])`` and the parameters' cotangents on NumPy values (first order).

    ``a`` jumps by ``g[i]`` at each output time ``t[i]``; as the adjoint is
    linear, ``a(t[0])`` is the sum over ``i`` of ``g[i]`` carried back from
    ``t[i]`` to ``t[0]``. Those carries are one solve: copy ``i`` runs in its
    own time ``t[i] + sigma (t[0] - t[i])``, all copies over ``sigma`` from 0
    to 1, so no solve restarts at each output time. ``y`` comes from a dense
    forward solve, not from integrating it backwards (which diverges for a
    stiff system).
    """
    n = system.size
    g = np.asarray(g, dtype=np.float64).reshape(-1, n)
    t = np.asarray(t, dtype=np.float64)
    count = t.shape[0]
    total = sum(int(np.size(p)) for p in params)
    if count == 1:
        return g[0].copy(), np.zeros(total)
    ys = np.asarray(ys, dtype=np.float64).reshape(-1, n)
    trajectory = system.integrator.dense(system.rhs(params), ys[0], t)
    copies = count - 1
    rhs = system.adjoint_numpy(params, copies)
    origins, spans = t[1:], (t[0] - t[1:])[:, None]
    width = n + total

    def carried(state: np.ndarray, sigma: float) -> np.ndarray:
        times = origins + sigma * spans[:, 0]
        a = state.reshape(copies, width)[:, :n]
        return (rhs(a, times, trajectory(times)) * spans).reshape(-1)

    def carried_jacobian(state: np.ndarray, sigma: float) -> np.ndarray:
        """Block diagonal (the copies are independent); each block's columns for
        ``a_params`` are zero (nothing depends on them)."""
        times = origins + sigma * spans[:, 0]
        a = state.reshape(copies, width)[:, :n]
        if not jacobian:  # traced and compiled at the solver's first request only
            jacobian.append(system.adjoint_numpy(params, copies, jacobian=True))
        blocks = jacobian[0](a, times, trajectory(times)) * spans[:, :, None]
        full = np.zeros((copies, width, copies, width))
        index = np.arange(copies)
        full[index, :, index, :n] = blocks
        return full.reshape(copies * width, copies * width)

    jacobian: list[Callable] = []
    start = np.concatenate([g[1:], np.zeros((copies, total))], axis=1).reshape(-1)
    backwards = system.integrator.derivative().spanning(copies, float(np.max(np.abs(spans))))
    end = backwards.integrate(carried, start, np.array([0.0, 1.0]), carried_jacobian)[1]
    end = end.reshape(copies, width)
    return g[0] + end[:, :n].sum(axis=0), end[:, n:].sum(axis=0)


def _adjoint_differentiable(ys: Any, g: Any, t: Any, *params: Any, system: System) -> tuple:
    """What :func:`_adjoint_impl` computes, differentiably: ``g`` contracted with the
    sensitivities ``S(t_i) = dy(t_i)/d(y(t0), params)``, from one forward solve (stable for
    stiff systems, unlike integrating ``y`` backwards with the adjoint). For derivatives of
    second order: ``a(t0) = sum_i S_i[:, :n]^T g_i``, ``a_params = sum_i S_i[:, n:]^T g_i``.
    ``ys`` enters through ``ys[0]`` only (the others are its solution)."""
    n = system.size
    m = n + sum(int(np.prod(np.shape(p))) for p in params)
    S = _sensitivities(system, ys[0], t, params, m)[1]
    bar = _knp.einsum("ti,tij->j", _knp.reshape(_knp.asarray(g), (-1, n)), S)
    return bar[:n], bar[n:]


def _adjoint_forward(primals: tuple, tangents: tuple, *, system: System) -> tuple:
    zeros = [_knp.zeros_like(p) if d is None else d for p, d in zip(primals, tangents, strict=True)]
    return jvp(lambda *a: _adjoint_differentiable(*a, system=system), tuple(primals), tuple(zeros))


def _adjoint_reverse(args: tuple, *, system: System) -> tuple:
    out, pullback = vjp(lambda *a: _adjoint_differentiable(*a, system=system), *args)

    def filled(cotangents: tuple) -> tuple:
        return pullback(
            tuple(
                _knp.zeros_like(o) if c is None else c for o, c in zip(out, cotangents, strict=True)
            )
        )

    return out, filled


def _adjoint_batch(op: Op, args: list, axes: list, *, system: System) -> tuple:
    """The batch as one system: every argument given the batch axis (an unbatched parameter
    too, as each example's cotangent of it differs)."""
    size = _batching.batch_size(args, axes)
    ys, g, t, *params = args
    ys_axis, g_axis, t_axis, *param_axes = axes
    if t_axis is not None:
        rows = [
            adjoint(
                *[
                    a if b is None else _knp.take(a, i, axis=b)
                    for a, b in zip(args, axes, strict=True)
                ],
                system=system,
            )
            for i in range(size)
        ]
        return (_knp.stack([r[0] for r in rows]), _knp.stack([r[1] for r in rows])), (0, 0)
    count, n = int(np.shape(t)[0]), system.size
    ys = _knp.moveaxis(_batching.with_batch_in_front(ys, ys_axis, size), 0, 1)
    g = _knp.moveaxis(_batching.with_batch_in_front(g, g_axis, size), 0, 1)
    fronted = [
        _batching.with_batch_in_front(p, b, size) for p, b in zip(params, param_axes, strict=True)
    ]
    batched = system.batched(size, (True,) * len(params))
    a0, a_params = adjoint(
        _knp.reshape(ys, (count, size * n)),
        _knp.reshape(g, (count, size * n)),
        t,
        *fronted,
        system=batched,
    )
    # a_params holds each parameter's (size, *shape) block in turn: per example, side by side.
    blocks, start = [], 0
    for p in fronted:
        per_example = int(np.prod(np.shape(p)[1:]))
        blocks.append(
            _knp.reshape(a_params[start : start + size * per_example], (size, per_example))
        )
        start += size * per_example
    flat = _knp.concatenate(blocks, axis=1) if blocks else _knp.zeros((size, 0))
    return (_knp.reshape(a0, (size, n)), flat), (0, 0)


adjoint = Op(
    "ode_adjoint",
    _adjoint_impl,
    forward=_adjoint_forward,
    reverse=_adjoint_reverse,
    batch=_adjoint_batch,
    multiple_results=True,
)


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
