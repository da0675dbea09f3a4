"""SciPy's solvers behind one interface: integrate ``rhs`` from ``times[0]`` through ``times``.

The solve op is the same for ``odeint`` (LSODA, through ``scipy.integrate.odeint``)
and ``solve_ivp`` (its six methods): only the integrator differs. Each
integrator also says how its derived systems (the adjoint and sensitivity
solves of the derivatives, a batch of systems) are solved: same method and
tolerances, without the options that only fit the user's own system (a
Jacobian, per-component tolerances, a first step).
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

# odeint's options that still fit a derived system (a different state, same time axis).
_DERIVED_ODEINT = ("rtol", "atol", "mxstep", "hmax", "hmin", "mxordn", "mxords")


def same_settings(a: Any, b: Any) -> bool:
    """Whether two settings (options, tolerances, a method) are the same: arrays by value,
    containers item by item, a callable (a user's ``Dfun`` or ``jac``) only as itself."""
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, (np.ndarray, np.generic)):
        return a.shape == b.shape and a.dtype == b.dtype and bool(np.array_equal(a, b))
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(same_settings(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same_settings(a[k], b[k]) for k in a)
    if callable(a):
        return False
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 - no usable ==: only identity counts
        return False


def same_integrator(a: Any, b: Any) -> bool:
    """Whether two integrators solve alike (same kind, method, options and Jacobian): two
    solves whose systems are the same program and whose integrators are alike compute the
    same thing, so ``jit``'s purity check may take one for the other."""
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    return same_settings(a.settings(), b.settings())


def _scalar_tolerance(value: Any) -> Any:
    """Per-component tolerances fit the user's state only: the tightest for derived ones."""
    if value is None or np.ndim(value) == 0:
        return value
    return float(np.min(value))


class Odeint:
    """``scipy.integrate.odeint`` with the user's options (LSODA); ``info`` is its last
    ``infodict`` (for ``full_output``)."""

    def __init__(self, options: dict[str, Any], jacobian: Callable | None = None) -> None:
        self.options = options
        self.jacobian = jacobian  # Dfun(y, t) on NumPy values, for the user's system only
        self.derived = False
        self.info: dict[str, Any] | None = None

    def settings(self) -> tuple:
        """What decides how it solves (see :func:`same_integrator`)."""
        return (self.options, self.jacobian, self.derived)

    def integrate(
        self, rhs: Callable, y0: np.ndarray, times: np.ndarray, jac: Callable | None = None
    ) -> np.ndarray:
        """``rhs(y, t)`` from ``times[0]`` through ``times``; ``jac(y, t)`` its Jacobian in
        ``y`` (the user's ``Dfun`` first), which LSODA's stiff method uses."""
        from scipy.integrate import ODEintWarning, odeint

        y0 = np.asarray(y0, dtype=np.float64)
        if self.derived:  # a derivative's solve: a failure raises (below), not warns
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ODEintWarning)
                out, info = odeint(
                    rhs, y0, np.asarray(times), Dfun=jac, full_output=True, **self.options
                )
            if info["message"] != "Integration successful.":
                raise RuntimeError(
                    "kenaz.scipy.integrate.odeint: a derivative's solve failed "
                    f"({info['message']}); its result would be wrong. Loosen rtol/atol or "
                    "raise mxstep."
                )
        else:
            out, info = odeint(
                rhs,
                y0,
                np.asarray(times),
                Dfun=self.jacobian or jac,
                full_output=True,
                **self.options,
            )
        self.info = info
        return out

    def dense(self, rhs: Callable, y0: np.ndarray, times: np.ndarray) -> Callable:
        """``y(s)`` for any ``s`` between ``times[0]`` and ``times[-1]``: SciPy's LSODA with
        dense output (``solve_ivp``), same tolerances, for the adjoint's backward solves."""
        return _dense(rhs, y0, times, "LSODA", self.options.get("rtol"), self.options.get("atol"))

    def derivative(self) -> Odeint:
        options = {k: v for k, v in self.options.items() if k in _DERIVED_ODEINT}
        for key in ("rtol", "atol"):
            if key in options:
                options[key] = _scalar_tolerance(options[key])
        derived = Odeint(options)
        derived.derived = True  # its systems get their Jacobian from jacfwd
        return derived

    def spanning(self, intervals: int, span: float) -> Odeint:
        """For a solve in a pseudo-time ``sigma`` in [0, 1] that covers ``intervals``
        output intervals, the longest of duration ``span``: the step budget of each
        interval for all of them, and step bounds in ``sigma``."""
        options = dict(self.options)
        # Copy i spans output intervals 0..i, and the copies' hard stretches fall at
        # different pseudo-times: a budget of every copy's steps (a limit, not a cost).
        options["mxstep"] = (options.get("mxstep") or 500) * 2 * intervals * (intervals + 1)
        for key in ("hmax", "hmin"):
            if options.get(key):
                options[key] = options[key] / span
        spanning = Odeint(options)
        spanning.derived = True
        return spanning

    def batched(self) -> Odeint:
        batched = self.derivative()
        batched.info = None
        return _SharedInfo(batched, self)


class _SharedInfo:
    """A batch's integrator that reports its ``info`` to the user's integrator too."""

    def __init__(self, inner: Any, user: Any) -> None:
        self.inner, self.user = inner, user

    @property
    def derived(self) -> bool:
        return getattr(self.inner, "derived", False)

    def settings(self) -> tuple:
        """The inner integrator's (the user's only receives its ``info``)."""
        return (type(self.inner), self.inner.settings())

    def integrate(
        self, rhs: Callable, y0: np.ndarray, times: np.ndarray, jac: Callable | None = None
    ) -> np.ndarray:
        out = self.inner.integrate(rhs, y0, times, jac)
        self.user.info = self.inner.info
        return out

    def derivative(self) -> Any:
        return self.inner.derivative()

    def dense(self, rhs: Callable, y0: np.ndarray, times: np.ndarray) -> Callable:
        return self.inner.dense(rhs, y0, times)

    def batched(self) -> Any:
        return _SharedInfo(self.inner.batched(), self.user)

    def spanning(self, intervals: int, span: float) -> Any:
        return self.inner.spanning(intervals, span)


class Ivp:
    """``scipy.integrate.solve_ivp`` with one method, tolerances and options; ``info`` is
    the last result (its ``nfev``, ``status``, ``message``, and ``sol`` when dense).

    ``info`` and ``kept`` are per thread: a cached system (see ``._cache``) serves the
    solves of several threads with this one integrator.
    """

    def __init__(
        self,
        method: Any,
        rtol: Any,
        atol: Any,
        options: dict[str, Any],
        dense_output: bool = False,
    ) -> None:
        self.method, self.rtol, self.atol = method, rtol, atol
        self.options = options
        self.dense_output = dense_output
        self._local = threading.local()

    def settings(self) -> tuple:
        """What decides how it solves (see :func:`same_integrator`)."""
        return (self.method, self.rtol, self.atol, self.options, self.dense_output)

    @property
    def info(self) -> Any:
        return getattr(self._local, "info", None)

    @info.setter
    def info(self, value: Any) -> None:
        self._local.info = value

    @property
    def kept(self) -> tuple | None:
        """(y0, result) of the solve that chose the times (see :meth:`steps`)."""
        return getattr(self._local, "kept", None)

    @kept.setter
    def kept(self, value: tuple | None) -> None:
        self._local.kept = value

    def steps(self, rhs: Callable, y0: np.ndarray, t0: float, tf: float) -> np.ndarray:
        """The solver's own output times from ``t0`` to ``tf`` (without ``t_eval``); the
        solve is kept for :meth:`integrate` to reuse if asked for the same times."""
        from scipy.integrate import solve_ivp

        result = solve_ivp(
            lambda s, y: rhs(y, s),
            (t0, tf),
            np.asarray(y0, dtype=np.float64),
            method=self.method,
            rtol=self.rtol,
            atol=self.atol,
            dense_output=self.dense_output,
            **self.options,
        )
        if result.status < 0:
            raise RuntimeError(
                f"kenaz.scipy.integrate.solve_ivp: the solver failed: {result.message}"
            )
        self.kept = (np.asarray(y0, dtype=np.float64).copy(), result)
        return result.t

    def integrate(
        self, rhs: Callable, y0: np.ndarray, times: np.ndarray, jac: Callable | None = None
    ) -> np.ndarray:
        """As :meth:`Odeint.integrate`; the implicit methods use ``jac`` (unless the user
        gave theirs), the explicit ones ignore it."""
        from scipy.integrate import solve_ivp

        times = np.asarray(times, dtype=np.float64)
        y0 = np.asarray(y0, dtype=np.float64)
        kept, self.kept = self.kept, None
        if kept is not None and np.array_equal(kept[0], y0) and np.array_equal(kept[1].t, times):
            self.info = kept[1]  # the solve that found these times: same steps, same values
            return kept[1].y.T
        if times.shape[0] == 1 or times[0] == times[-1]:
            return np.broadcast_to(y0, (times.shape[0], y0.shape[0])).copy()
        # SciPy wants t_eval strictly monotonic: a repeated time (t_eval starting at t0, two
        # events at once) is solved for once and copied.
        new = np.concatenate([[True], np.diff(times) != 0])
        result = solve_ivp(
            lambda s, y: rhs(y, s),
            (times[0], times[-1]),
            y0,
            method=self.method,
            t_eval=times[new],
            rtol=self.rtol,
            atol=self.atol,
            dense_output=self.dense_output,
            **self.options,
            **({"jac": lambda s, y: jac(y, s)} if jac is not None and self._implicit() else {}),
        )
        self.info = result
        if result.status < 0:
            raise RuntimeError(
                f"kenaz.scipy.integrate.solve_ivp: the solver failed: {result.message}"
            )
        return result.y.T if new.all() else result.y.T[np.cumsum(new) - 1]

    def dense(self, rhs: Callable, y0: np.ndarray, times: np.ndarray) -> Callable:
        """As :meth:`Odeint.dense`, with this method and tolerances."""
        return _dense(rhs, y0, times, self.method, self.rtol, self.atol)

    def _implicit(self) -> bool:
        return self.method in ("Radau", "BDF", "LSODA") and "jac" not in self.options

    def spanning(self, intervals: int, span: float) -> Ivp:
        """As :meth:`Odeint.spanning`: step bounds in the pseudo-time."""
        options = {k: v / span for k, v in self.options.items() if k in ("max_step", "min_step")}
        return Ivp(self.method, self.rtol, self.atol, options)

    def derivative(self) -> Ivp:
        options = {k: v for k, v in self.options.items() if k in ("max_step", "min_step")}
        return Ivp(self.method, _scalar_tolerance(self.rtol), _scalar_tolerance(self.atol), options)

    def batched(self) -> Any:
        batched = self.derivative()
        batched.dense_output = self.dense_output
        return _SharedInfo(batched, self)


def _dense(
    rhs: Callable, y0: np.ndarray, times: np.ndarray, method: Any, rtol: Any, atol: Any
) -> Callable:
    from scipy.integrate import solve_ivp

    times = np.asarray(times, dtype=np.float64)
    if times.shape[0] == 1 or times[0] == times[-1]:
        y0 = np.asarray(y0, dtype=np.float64)
        return lambda s: y0
    result = solve_ivp(
        lambda s, y: rhs(y, s),
        (times[0], times[-1]),
        np.asarray(y0, dtype=np.float64),
        method=method,
        rtol=1.49012e-8 if rtol is None else rtol,
        atol=1.49012e-8 if atol is None else atol,
        dense_output=True,
    )
    if result.status < 0:
        raise RuntimeError(
            f"kenaz.scipy.integrate: the adjoint's forward solve failed: {result.message}"
        )
    return _fast_solution(result.sol)


def _fast_solution(solution: Any) -> Callable[[np.ndarray], np.ndarray]:
    """``at(times)``: the solution at each of ``times``, shape ``(len(times), n)``, without
    ``OdeSolution``'s checks and dispatch (the adjoint asks at every step).

    LSODA's segments (a Nordsieck polynomial each) are evaluated together from
    stacked arrays; other methods' segments are called one time at a time.
    """
    from scipy.integrate._ivp.lsoda import LsodaDenseOutput

    ascending = solution.ascending
    edges = np.asarray(solution.ts_sorted, dtype=np.float64)
    count = solution.n_segments
    segments = solution.interpolants

    def segments_of(times: np.ndarray) -> np.ndarray:
        k = edges.searchsorted(times, side=solution.side) - 1
        np.maximum(k, 0, out=k)
        np.minimum(k, count - 1, out=k)  # not np.clip: its Python-level checks cost more
        return k if ascending else count - 1 - k

    if all(type(p) is LsodaDenseOutput for p in segments):
        width = max(len(p.p) for p in segments)
        powers = np.arange(width)
        starts = np.array([float(p.t) for p in segments])
        steps = np.array([float(p.h) for p in segments])
        coefficients = np.zeros((count, segments[0].yh.shape[0], width))
        for k, p in enumerate(segments):
            coefficients[k, :, : p.yh.shape[1]] = p.yh

        def lsoda(times: np.ndarray) -> np.ndarray:
            k = segments_of(times)
            x = ((times - starts[k]) / steps[k])[:, None] ** powers
            return np.einsum("mnw,mw->mn", coefficients[k], x)

        return lsoda

    def other(times: np.ndarray) -> np.ndarray:
        k = segments_of(times)
        return np.stack([segments[j]._call_impl(np.float64(s)) for j, s in zip(k, times)])

    return other
