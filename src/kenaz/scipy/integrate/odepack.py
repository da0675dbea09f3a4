"""``odeint``: SciPy's ``scipy.integrate.odeint`` (LSODA), differentiable to any order.

The solution is SciPy's, with ``func`` traced once per solve and compiled
(see :mod:`._system`). Derivatives come from the solve op's rules
(:mod:`._solve`): the adjoint method in reverse mode, forward sensitivities
in forward mode, one batched solve under ``vmap``; each is a solve again, so
``hessian``, ``jacfwd`` and ``vmap(grad)`` compose.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ... import numpy as _knp
from ... import tree
from ...convert import as_tensor
from ...tensor import Tensor
from ._fingerprint import value_key as _value_key
from ._function import Function
from ._integrators import Odeint
from ._solve import solve
from ._traced import refuse, traced

__all__ = ["odeint"]

# SciPy's defaults: an option left at its default is not passed on.
_OPTION_DEFAULTS = {
    "ml": None,
    "mu": None,
    "rtol": None,
    "atol": None,
    "tcrit": None,
    "h0": 0.0,
    "hmax": 0.0,
    "hmin": 0.0,
    "ixpr": 0,
    "mxstep": 0,
    "mxhnil": 0,
    "mxordn": 12,
    "mxords": 5,
    "printmessg": 0,
}


def as_float_tensor(x: Any) -> Tensor:
    """``x`` as a tensor of an inexact dtype (integers and booleans as float64)."""
    x = as_tensor(x)
    return x if x.dtype.kind in "fc" else x.astype(np.float64)


def _is_default(value: Any, default: Any) -> bool:
    if value is default:
        return True
    return isinstance(value, (int, float)) and default is not None and value == default


def _plain_args(args: tuple) -> tuple:
    """``args`` with tensors as NumPy values (for a user's ``Dfun``, which SciPy calls)."""
    return tree.map(lambda x: x._value if type(x) is Tensor else x, args)


def odeint(
    func: Callable,
    y0: Any,
    t: Any,
    args: Any = (),
    Dfun: Callable | None = None,
    col_deriv: int = 0,
    full_output: int = 0,
    ml: int | None = None,
    mu: int | None = None,
    rtol: Any = None,
    atol: Any = None,
    tcrit: Any = None,
    h0: float = 0.0,
    hmax: float = 0.0,
    hmin: float = 0.0,
    ixpr: int = 0,
    mxstep: int = 0,
    mxhnil: int = 0,
    mxordn: int = 12,
    mxords: int = 5,
    printmessg: int = 0,
    tfirst: bool = False,
) -> Any:
    """Integrate ``dy/dt = func(y, t, *args)`` with SciPy's ``odeint``, differentiably.

    Parameters
    ----------
    func : callable
        ``func(y, t, *args)`` (``func(t, y, *args)`` with ``tfirst``), written
        with ``kenaz.numpy``; returns ``dy/dt`` of ``y``'s shape (a list of
        scalars is stacked).
    y0 : array_like
        The initial state. A scalar is a state of one entry, as in SciPy;
        other shapes are kept (SciPy takes 1-d states only).
    t : array_like
        The output times, monotonic, starting at the time of ``y0``.
    args : any pytree, optional
        Handed to ``func`` unchanged (``args=(params,)`` with ``params`` a
        list of ``(W, b)`` pairs works). Its float leaves are differentiated;
        so are tensors ``func`` reads without being given them (closed over).
    Dfun, col_deriv, ml, mu, rtol, atol, tcrit, h0, hmax, hmin, ixpr, mxstep, \
mxhnil, mxordn, mxords, printmessg : optional
        SciPy's options, with SciPy's meaning and defaults. The derivative
        solves use the same ``rtol``, ``atol``, ``mxstep``, ``hmax``, ``hmin``
        and method orders; ``Dfun`` serves the solution only (called with
        NumPy values, as SciPy calls it).
    full_output : bool, optional
        Also return SciPy's ``infodict`` of the solution's solve. Not under
        ``jit`` (when the solve depends on the jitted function's inputs): its
        counts depend on the values, and a compiled program would replay those
        of its trace, so that raises :class:`~kenaz.errors.ConcretizationError`.
    tfirst : bool, optional
        ``func(t, y, *args)``, as in SciPy.

    Returns
    -------
    y : Tensor
        ``y`` at each time of ``t``: shape ``(len(t), *y0.shape)``, and
        ``(len(t), 1)`` for a scalar ``y0``.
    infodict : dict
        With ``full_output`` only: SciPy's diagnostics.

    Examples
    --------
    >>> import kenaz, kenaz.numpy as knp
    >>> from kenaz.scipy.integrate import odeint
    >>> decay = lambda k: odeint(lambda y, t, k: -k * y, 1.0, knp.array([0.0, 1.0]), (k,))[-1, 0]
    >>> round(float(kenaz.grad(decay)(0.5)), 6)  # d/dk exp(-k) = -exp(-k)
    -0.606531
    """
    y0 = as_float_tensor(y0)
    if y0.ndim == 0:
        y0 = _knp.reshape(y0, (1,))
    t = as_tensor(t)
    t = t if t.dtype == np.float64 else t.astype(np.float64)
    if t.ndim != 1 or t.shape[0] < 1:
        raise ValueError(
            f"kenaz.scipy.integrate.odeint: t must be 1-d and non-empty, got {t.shape}"
        )
    given = {
        "ml": ml, "mu": mu, "rtol": rtol, "atol": atol, "tcrit": tcrit, "h0": h0,
        "hmax": hmax, "hmin": hmin, "ixpr": ixpr, "mxstep": mxstep, "mxhnil": mxhnil,
        "mxordn": mxordn, "mxords": mxords, "printmessg": printmessg,
    }  # fmt: skip
    options = {k: v for k, v in given.items() if not _is_default(v, _OPTION_DEFAULTS[k])}
    if not isinstance(args, tuple):
        args = (args,)  # SciPy: a single extra argument may be passed bare
    jacobian = None
    if Dfun is not None:
        plain = _plain_args(args)

        def jacobian(y: np.ndarray, s: float) -> np.ndarray:
            out = Dfun(s, y, *plain) if tfirst else Dfun(y, s, *plain)
            out = np.asarray(out._value if isinstance(out, Tensor) else out, dtype=np.float64)
            return out.T if col_deriv else out

    integrator = Odeint(options, jacobian)
    # full_output reads the integrator's last info, and Dfun is bound to these args: such
    # solves get a system of their own (no cache).
    solver_key = None if full_output or Dfun is not None else _value_key(options)
    function = Function(func, y0.shape, args, tfirst, integrator, y0, t[0], "odeint", solver_key)
    if full_output and traced([y0, t, *function.params]):
        raise refuse(
            "odeint",
            "full_output's infodict (nfe, nst, the step sizes...)",
            "Call odeint(..., full_output=True) outside jit, or leave full_output out of the "
            "jitted function.",
        )
    flat = _knp.reshape(y0, (-1,))
    ys = solve(flat, t, *function.params, system=function.system)
    ys = _knp.reshape(ys, (t.shape[0], *y0.shape))
    if full_output:
        return ys, integrator.info
    return ys
