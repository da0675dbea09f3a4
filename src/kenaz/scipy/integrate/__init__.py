"""``kenaz.scipy.integrate``: SciPy's ODE solvers and quadratures, differentiable.

- :func:`odeint` and :func:`solve_ivp`: SciPy's solvers (LSODA; RK45, RK23,
  DOP853, Radau, BDF, LSODA) with the right-hand side traced and compiled
  once per solve (kept between solves that read the same state) and run as
  straight-line float code when small, differentiated by the adjoint method
  (reverse mode; one forward-sensitivity solve for a small system) and by
  forward sensitivities (forward mode), to any order, and batched under
  ``vmap`` as one solve;
- :func:`quad`: SciPy's adaptive quadrature, differentiable in its limits and
  in the integrand's parameters;
- :func:`trapezoid`, :func:`simpson`, :func:`cumulative_trapezoid`: the
  sampled rules, composed of differentiable ops.
"""

from __future__ import annotations

from .ivp import DenseSolution, OdeResult, solve_ivp
from .odepack import odeint
from .quadrature import cumulative_trapezoid, quad, simpson, trapezoid

__all__ = [
    "odeint",
    "solve_ivp",
    "OdeResult",
    "DenseSolution",
    "quad",
    "trapezoid",
    "simpson",
    "cumulative_trapezoid",
]
