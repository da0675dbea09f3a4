"""``solve_ivp(events=...)``: SciPy's event location, with differentiable event times.

SciPy finds each event's times on plain values (``terminal``, ``direction``
and its root finding, unchanged). An event time ``tau`` is a root of
``g(t, y(t))``, so it moves with the parameters as the implicit function
theorem says: ``dtau = -dg / g'``, where ``dg`` is the change of
``g(tau, y(tau))`` at fixed ``tau`` and ``g' = dg/dt + dg/dy . f`` the rate
at which ``g`` crosses zero there. The event time is returned as

    ``tau - g(tau, y(tau)) / g'``

with ``tau`` and ``g'`` constants: its value is ``tau`` (``g`` is zero there,
to the root finder's accuracy) and its first derivative is the theorem's, in
``y0``, ``t_span``, ``args`` and the tensors ``g`` and ``fun`` read (``y(tau)``
is a solve, differentiable in all of them). ``y`` at an event is the solve to
that differentiable time, which adds ``f`` times its change. Derivatives of
second order and above treat ``g'`` as a constant (not exact).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ... import numpy as _knp
from ...compiler import program as program_module
from ...effects import no_handlers
from ...reverse import grad
from ...tensor import Tensor
from ._solve import solve

__all__ = ["Events"]


def _plain(x: Any) -> Any:
    return program_module.example_value(x) if isinstance(x, Tensor) else x


class Events:
    """The user's event functions ``g(t, y, *args)``, located and made differentiable."""

    def __init__(self, events: Any, args: tuple) -> None:
        self.functions = list(events) if isinstance(events, (list, tuple)) else [events]
        self.args = args
        plain_args = [_plain(a) for a in args]
        self.plain = [self._on_values(g, plain_args) for g in self.functions]

    @staticmethod
    def _on_values(g: Callable, plain_args: list) -> Callable:
        def on_values(s: float, y: np.ndarray) -> float:
            with no_handlers():
                out = g(Tensor(np.float64(s)), Tensor(np.asarray(y)), *plain_args)
            return float(np.asarray(out._value if isinstance(out, Tensor) else out))

        # SciPy reads these attributes from the functions it is given.
        on_values.terminal = getattr(g, "terminal", False)  # type: ignore[attr-defined]
        on_values.direction = getattr(g, "direction", 0)  # type: ignore[attr-defined]
        return on_values

    def locate(
        self, rhs: Callable, y0: np.ndarray, t0: float, tf: float, solver: dict[str, Any]
    ) -> tuple[list[np.ndarray], float | None]:
        """Each event's times (SciPy's), and the time a terminal event stopped at (or None)."""
        from scipy.integrate import solve_ivp

        result = solve_ivp(lambda s, y: rhs(y, s), (t0, tf), y0, events=self.plain, **solver)
        if result.status < 0:
            raise RuntimeError(
                f"kenaz.scipy.integrate.solve_ivp: the solver failed: {result.message}"
            )
        stop = float(result.t[-1]) if result.status == 1 else None
        return [np.asarray(t, dtype=np.float64) for t in result.t_events], stop

    def differentiable(
        self,
        times: list[np.ndarray],
        system: Any,
        y0: Tensor,
        t0: Tensor,
        params: list,
    ) -> tuple[list[Tensor], list[Tensor]]:
        """``t_events`` and ``y_events``: the event times as functions of the inputs (see the
        module doc), and the solution at them."""
        n = system.size
        found = [(i, float(tau)) for i, ts in enumerate(times) for tau in ts]
        t_events = [_knp.zeros((0,)) for _ in times]
        y_events = [_knp.zeros((0, n)) for _ in times]
        if not found:
            return t_events, y_events
        order = sorted(range(len(found)), key=lambda k: found[k][1])
        taus = np.array([found[k][1] for k in order])
        plain_params = [_plain(p) for p in params]
        rhs = system.rhs(plain_params)
        at_taus = self._solve_to(system, y0, t0, taus, params)  # (k, n), differentiable
        moved = []
        for row, k in enumerate(order):
            i, tau = found[k]
            y_tau = at_taus[row]
            rate = self._crossing_rate(i, tau, _plain(y_tau), rhs)
            g = self.functions[i](Tensor(np.float64(tau)), y_tau, *self.args)
            moved.append(tau - _knp.asarray(g) / rate)
        stacked = _knp.stack(moved)
        at_events = self._solve_to(system, y0, t0, stacked, params)
        per_event: list[list[int]] = [[] for _ in times]
        for row, k in enumerate(order):
            per_event[found[k][0]].append(row)
        for i, rows in enumerate(per_event):
            if rows:
                t_events[i] = stacked[np.array(rows)]
                y_events[i] = at_events[np.array(rows)]
        return t_events, y_events

    def _crossing_rate(self, i: int, tau: float, y: np.ndarray, rhs: Callable) -> float:
        """``g' = dg/dt + dg/dy . f`` at the event, on values."""
        g = self.functions[i]
        plain_args = [_plain(a) for a in self.args]
        with no_handlers():
            by_t, by_y = grad(lambda s, yy: _knp.asarray(g(s, yy, *plain_args)), argnums=(0, 1))(
                np.float64(tau), np.asarray(y, dtype=np.float64)
            )
        rate = float(by_t._value) + float(np.dot(by_y._value, rhs(np.asarray(y), tau)))
        if rate == 0.0:
            raise ValueError(
                "kenaz.scipy.integrate.solve_ivp: an event function touches zero without "
                f"crossing it at t={tau}: its time has no derivative"
            )
        return rate

    @staticmethod
    def _solve_to(system: Any, y0: Tensor, t0: Tensor, times: Any, params: list) -> Tensor:
        grid = _knp.concatenate([_knp.reshape(t0, (1,)), _knp.asarray(times)])
        return solve(y0, grid, *params, system=system)[1:]
