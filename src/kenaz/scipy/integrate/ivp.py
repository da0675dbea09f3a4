"""``solve_ivp``: SciPy's ``scipy.integrate.solve_ivp`` (RK45, RK23, DOP853, Radau, BDF,
LSODA), differentiable in ``y0``, ``t_span``, ``t_eval``, ``args`` and the tensors ``fun``
reads.

The solution at the output times is the solve op of :mod:`._solve` with a
``solve_ivp`` integrator, so its derivatives are those of ``odeint``: the
adjoint method in reverse mode and forward sensitivities in forward mode,
each solved with the same method and tolerances, to any order and batched
under ``vmap``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from scipy.integrate import OdeSolution
from scipy.optimize import OptimizeResult

from ... import numpy as _knp
from ...compiler import program as program_module
from ...effects import handlers_installed
from ...tensor import Tensor
from ._events import Events
from ._fingerprint import value_key
from ._function import Function
from ._integrators import Ivp
from ._solve import solve
from ._system import values_of
from ._traced import Unavailable, refuse, traced
from .odepack import as_float_tensor

__all__ = ["solve_ivp", "OdeResult", "DenseSolution"]

METHODS = ("RK45", "RK23", "DOP853", "Radau", "BDF", "LSODA")


class OdeResult(OptimizeResult):
    """SciPy's result of ``solve_ivp``: ``t``, ``y`` (tensors, ``y`` of shape ``(n, len(t))``),
    ``sol``, ``t_events``, ``y_events``, ``nfev``, ``njev``, ``nlu``, ``status``, ``message``,
    ``success``."""


def _untracked(x: Any) -> bool:
    return not isinstance(x, Tensor) or (type(x) is Tensor and not x._trace)


class DenseSolution:
    """``sol(t)``: the solution at any time of ``t_span``, shape ``(n,)`` or ``(n, len(t))``.

    With nothing under a transformation it is SciPy's interpolant; otherwise
    it solves again to the times asked (one solve op: differentiable).
    """

    def __init__(self, interpolant: OdeSolution | None, solve_to: Callable[[Any], Tensor]):
        self.interpolant = interpolant
        self.solve_to = solve_to

    def __call__(self, t: Any) -> Tensor:
        if self.interpolant is not None and not handlers_installed() and _untracked(t):
            return Tensor(np.asarray(self.interpolant(values_of([t])[0])))
        return self.solve_to(t)


def solve_ivp(
    fun: Callable,
    t_span: Any,
    y0: Any,
    method: str = "RK45",
    t_eval: Any = None,
    dense_output: bool = False,
    events: Any = None,
    vectorized: bool = False,
    args: tuple | None = None,
    **options: Any,
) -> OdeResult:
    """Solve ``dy/dt = fun(t, y, *args)`` from ``t_span[0]`` with SciPy's ``solve_ivp``.

    Parameters
    ----------
    fun : callable
        ``fun(t, y, *args)`` written with ``kenaz.numpy``, returning ``dy/dt``.
    t_span : pair of floats
        ``(t0, tf)``; both may be tensors under differentiation.
    y0 : array_like
        The initial state, shape ``(n,)`` (a scalar is one state).
    method : str, optional
        One of SciPy's: ``"RK45"`` (default), ``"RK23"``, ``"DOP853"``,
        ``"Radau"``, ``"BDF"``, ``"LSODA"``. The derivative solves use it too.
    t_eval : array_like, optional
        The output times, sorted, within ``t_span``. Without it the outputs
        are at the solver's own steps (not differentiable in their position,
        except the last, ``tf``).
    dense_output : bool, optional
        Also return ``sol``, a :class:`DenseSolution`.
    events : callable or list of callables, optional
        SciPy's ``g(t, y, *args)``, with its ``terminal`` and ``direction``
        attributes: ``t_events`` and ``y_events`` as SciPy's, and a terminal
        event ends the solve. Event times are differentiable (the implicit
        function theorem: see :mod:`._events`), to first order.
    vectorized : bool, optional
        Accepted and ignored: the compiled right-hand side is called per state.
    args : tuple, optional
        Extra arguments of ``fun``, any pytree, handed over unchanged; float
        leaves are differentiated.
    **options
        SciPy's ``rtol`` (default 1e-3), ``atol`` (1e-6), ``first_step``,
        ``max_step``, ``jac`` and the others of the method; the derivative
        solves use ``rtol``, ``atol`` and ``max_step``.

    Returns
    -------
    OdeResult
        SciPy's fields; ``t`` and ``y`` are tensors (``y`` of shape ``(n, len(t))``).
        Under ``jit`` (a solve that depends on the jitted function's inputs), the
        counts ``nfev``, ``njev`` and ``nlu`` raise
        :class:`~kenaz.errors.ConcretizationError` when used (they depend on the
        values; the program would replay its trace's), and ``t_eval`` is
        required and ``events`` refused, for the same reason.

    Examples
    --------
    >>> import kenaz
    >>> from kenaz.scipy.integrate import solve_ivp
    >>> def final(k):
    ...     return solve_ivp(lambda t, y: -k * y, (0.0, 1.0), [1.0], t_eval=[1.0],
    ...                      rtol=1e-10, atol=1e-10).y[0, 0]
    >>> round(float(kenaz.grad(final)(0.5)), 6)  # d/dk exp(-k) = -exp(-k)
    -0.606531
    """
    if method not in METHODS and not isinstance(method, type):
        raise ValueError(f"kenaz.scipy.integrate.solve_ivp: method must be one of {METHODS}")
    del vectorized
    y0 = as_float_tensor(y0)
    if y0.ndim > 1:
        raise ValueError(f"kenaz.scipy.integrate.solve_ivp: y0 must be 1-d, got shape {y0.shape}")
    y0 = _knp.reshape(y0, (-1,))
    t0, tf = (as_float_tensor(x).astype(np.float64) for x in t_span)
    args = () if args is None else args if isinstance(args, tuple) else (args,)
    rtol, atol = options.pop("rtol", 1e-3), options.pop("atol", 1e-6)
    jac = options.pop("jac", None)
    if callable(jac):
        plain_args = [values_of([a])[0] if isinstance(a, Tensor) else a for a in args]
        user_jac = jac

        def jac(s: float, y: np.ndarray) -> np.ndarray:
            out = user_jac(s, y, *plain_args)
            return np.asarray(out._value if isinstance(out, Tensor) else out, dtype=np.float64)

    integrator = Ivp(
        method,
        rtol,
        atol,
        {**options, **({"jac": jac} if jac is not None else {})},
        dense_output,
    )
    # A solve like an earlier one reuses its system, and with it its integrator (whose
    # per-call state is per thread); a callable jac is bound to these args: no cache.
    solver_key = None
    if not callable(jac) and isinstance(method, str):
        solver_key = value_key(("solve_ivp", method, rtol, atol, options, jac, dense_output))
    function = Function(fun, y0.shape, args, True, integrator, y0, t0, "solve_ivp", solver_key)
    params, system = function.params, function.system
    integrator = system.integrator
    # Under jit, what the solver decides from the values (steps, events, counts) would be
    # the trace's, replayed for new inputs: refused, or unavailable (see ._traced).
    under_jit = traced([y0, t0, tf, *params, *([] if t_eval is None else [t_eval])])
    if under_jit and events is not None:
        raise refuse(
            "solve_ivp",
            "events=... (how many events occur, and when, is found from the values)",
            "Call solve_ivp with events outside jit.",
        )
    if under_jit and t_eval is None:
        raise refuse(
            "solve_ivp",
            "the output at the solver's own steps (without t_eval)",
            "Pass t_eval=... (the output times) to solve under jit.",
        )
    t_events = y_events = stop = None
    if events is not None:
        located = Events(events, args)
        plain = [program_module.example_value(x) for x in (y0, t0, tf, *params)]
        y0_value, t0_value, tf_value, *param_values = plain
        solver = {"method": method, "rtol": rtol, "atol": atol, **options}
        if jac is not None:
            solver["jac"] = jac
        times_found, stop = located.locate(
            system.rhs(param_values), y0_value, float(t0_value), float(tf_value), solver
        )
        t_events, y_events = located.differentiable(times_found, system, y0, t0, params)
        if stop is not None:  # a terminal event: the solve ends at its (differentiable) time
            tf = next(
                t[-1] for t, found in zip(t_events, times_found, strict=True)
                if found.size and float(found[-1]) == stop
            )  # fmt: skip
            if t_eval is not None:
                t_eval = as_float_tensor(t_eval).astype(np.float64)
                t_eval = t_eval[np.asarray(program_module.example_value(t_eval)) <= stop]

    if t_eval is None:
        times = _solver_steps(system, integrator, y0, t0, tf, params)
        outputs = slice(None)
    else:
        t_eval = as_float_tensor(t_eval).astype(np.float64)
        t_eval = _knp.reshape(t_eval, (-1,))
        times = _knp.concatenate([_knp.reshape(t0, (1,)), t_eval])
        outputs = slice(1, None)
    ys = solve(y0, times, *params, system=system)[outputs]
    result = integrator.info
    sol = None
    if dense_output:

        def solve_to(t: Any) -> Tensor:
            t = as_float_tensor(t).astype(np.float64)
            flat = _knp.reshape(t, (-1,))
            order = np.argsort(program_module.example_value(flat))  # the solve needs them sorted
            grid = _knp.concatenate([_knp.reshape(t0, (1,)), flat[order]])
            found = solve(y0, grid, *params, system=system)
            back = found[1:][np.argsort(order)]
            return _knp.transpose(back) if t.ndim else back[0]

        # (SciPy's interpolant is the trace's under jit: every time is solved for instead)
        sol = DenseSolution(None if under_jit else getattr(result, "sol", None), solve_to)
    counts = {key: getattr(result, key, 0) for key in ("nfev", "njev", "nlu")}
    if under_jit:
        counts = {
            key: Unavailable(
                "solve_ivp",
                f"result.{key}",
                "Call solve_ivp outside jit to read it, or use only result.t and result.y in "
                "the jitted function.",
            )
            for key in counts
        }
    return OdeResult(
        t=times[outputs],
        y=_knp.transpose(ys),
        sol=sol,
        t_events=t_events,
        y_events=y_events,
        **counts,
        status=1 if events is not None and stop is not None else getattr(result, "status", 0),
        message=(
            "A termination event occurred."
            if events is not None and stop is not None
            else getattr(result, "message", "The solver successfully reached the end.")
        ),
        success=getattr(result, "success", True),
    )


def _solver_steps(
    system: Any, integrator: Ivp, y0: Tensor, t0: Tensor, tf: Tensor, params: list
) -> Tensor:
    """The times SciPy's solver steps to (without ``t_eval``): ``t0``, its steps, ``tf``.

    The steps depend on the values, not differentiably: only the ends carry a
    derivative. Found by a plain solve, which the solve op then reuses.
    """
    plain = [program_module.example_value(x) for x in (y0, t0, tf, *params)]
    if any(type(x) is not Tensor for x in (y0, t0, tf, *params)):
        raise ValueError(
            "kenaz.scipy.integrate.solve_ivp: under vmap the output times must be the same for "
            "every example; pass t_eval"
        )
    y0_value, t0_value, tf_value, *param_values = plain
    steps = integrator.steps(system.rhs(param_values), y0_value, float(t0_value), float(tf_value))
    inner = Tensor(np.asarray(steps[1:-1], dtype=np.float64))
    return _knp.concatenate([_knp.reshape(t0, (1,)), inner, _knp.reshape(tf, (1,))])
