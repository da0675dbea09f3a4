"""Quadrature: ``quad`` (SciPy's adaptive QUADPACK) and the sampled rules ``trapezoid``,
``simpson`` and ``cumulative_trapezoid``, differentiable.

``quad`` is one op whose rules are integrals again (Leibniz's rule):
``d/db = f(b)``, ``d/da = -f(a)``, and a parameter's derivative is the
integral of the integrand's derivative, computed by the same op on the
integrand's ``vjp`` (reverse) or ``jvp`` (forward). So ``quad`` is
differentiable to any order. The integrand is traced once per call and
compiled; tensors it reads without being given them are found by that trace
and differentiated like ``args``. The sampled rules are composed of
differentiable ops, with SciPy's formulas (Simpson's rule with Cartwright's
correction for an even number of samples).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ... import numpy as _knp
from ... import tree
from ...compiler import program as program_module
from ...compiler import staged as _staged
from ...compiler.purity import first_difference
from ...effects import Op, handlers_installed
from ...forward import jvp
from ...ops import batching
from ...reverse import vjp
from ...tensor import Tensor
from ._function import _as_parameter, _is_parameter
from ._integrators import same_settings
from ._system import scalars, values_of
from ._traced import Unavailable, refuse, traced
from .odepack import as_float_tensor

__all__ = ["quad", "trapezoid", "simpson", "cumulative_trapezoid"]


class Integrand:
    """``fn(x, *params) -> (size,)``: a scalar-to-vector function, compiled per signature.

    ``origin`` is the traced program ``fn`` replays (or derives from, by the keys of
    ``derivation``): two integrands of the same program, derived alike, with the same
    options are equal, so that ``jit``'s purity check finds two traces of a function
    that integrates the same (each trace makes a new integrand).
    """

    def __init__(
        self,
        fn: Callable,
        size: int,
        options: dict[str, Any],
        name: str,
        origin: Any = None,
        derivation: tuple = (),
    ) -> None:
        self.fn, self.size, self.options, self.name = fn, size, options, name
        self.origin, self.derivation = origin, derivation
        self._compiled: dict[tuple, Callable] = {}
        self._derived: dict[Any, Integrand] = {}

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if type(other) is not Integrand:
            return NotImplemented
        if self.origin is None or other.origin is None:
            return False
        return (
            self.size == other.size
            and self.derivation == other.derivation
            and same_settings(self.options, other.options)
            and (self.origin is other.origin or first_difference(self.origin, other.origin) is None)
        )

    def __hash__(self) -> int:
        return hash((Integrand, self.size))

    def numpy(self, params: list[Any]) -> Callable[[float], np.ndarray]:
        params = scalars(params)
        key = tuple((np.shape(p), np.result_type(p)) for p in params)
        compiled = self._compiled.get(key)
        if compiled is None:
            program = program_module.trace(self.fn, (np.float64(0.0), *params), {}, None, self.name)
            compiled = self._compiled[key] = _staged.Staged(program, fuse=False).compile()
        return lambda x: compiled(x, *params)[0]

    def evaluate(self, x: Any, params: list[Any]) -> Tensor:
        if not handlers_installed():
            return Tensor(np.asarray(self.numpy(values_of(params))(values_of([x])[0])))
        return self.fn(x, *params)

    def derived(self, key: Any, fn: Callable, size: int) -> Integrand:
        found = self._derived.get(key)
        if found is None:
            found = self._derived[key] = Integrand(
                fn,
                size,
                self.options,
                f"{key[0]} of {self.name}",
                self.origin,
                (*self.derivation, key),
            )
        return found


def _quad_impl(a: Any, b: Any, *params: Any, integrand: Integrand) -> np.ndarray:
    from scipy.integrate import quad as scipy_quad
    from scipy.integrate import quad_vec

    f = integrand.numpy(list(params))
    a, b = float(a), float(b)
    if "weight" in integrand.options:  # SciPy's weighted rules are scalar: one per entry
        values, errors = [], []
        for i in range(integrand.size):
            value, error, *info = scipy_quad(
                lambda x, i=i: f(x)[i], a, b, full_output=1, **integrand.options
            )
            values.append(value)
            errors.append(error)
        integrand.info = (max(errors), *info) if integrand.size == 1 else (max(errors),)
        return np.array(values, dtype=np.float64)
    if integrand.size == 1:
        value, error, *info = scipy_quad(
            lambda x: f(x)[0], a, b, full_output=1, **integrand.options
        )
        integrand.info = (error, *info)
        return np.array([value])
    tolerances = {
        k: integrand.options[k] for k in ("epsabs", "epsrel", "limit") if k in integrand.options
    }
    value, error = quad_vec(f, a, b, **tolerances)
    integrand.info = (error,)
    return np.asarray(value, dtype=np.float64)


def _end_slope(integrand: Integrand, x: Tensor, params: list) -> Tensor | None:
    """``f(x) w(x)``, the derivative of the integral in its upper limit (zero at infinity;
    ``w`` is SciPy's ``weight``, 1 without one)."""
    if np.isinf(values_of([x])[0]) if type(x) is Tensor else False:
        return None
    slope = integrand.evaluate(x, params)
    weight = integrand.options.get("weight")
    if weight is None:
        return slope
    wvar = integrand.options["wvar"]
    if weight == "cos":
        return slope * _knp.cos(wvar * x)
    if weight == "sin":
        return slope * _knp.sin(wvar * x)
    if weight == "cauchy":
        return slope / (x - wvar)
    raise ValueError(
        f"kenaz.scipy.integrate.quad: weight={weight!r} holds the limits themselves; its "
        "derivative in a limit is not supported (differentiate in args only)"
    )


def _reverse(args: tuple, *, integrand: Integrand) -> tuple:
    a, b, *params = args
    out = integral(a, b, *params, integrand=integrand)

    def pullback(g: Tensor) -> tuple:
        # A limit no transformation tracks needs no slope (a weight may have none there).
        at_b, at_a = (
            _end_slope(integrand, end, params) if getattr(end, "_trace", None) else None
            for end in (b, a)
        )
        a_bar = None if at_a is None else -_knp.sum(at_a * g)
        b_bar = None if at_b is None else _knp.sum(at_b * g)
        if not params:
            return (a_bar, b_bar)
        sizes = tuple(int(np.prod(np.shape(p))) for p in params)
        fn = integrand.fn

        def cotangent_density(x: Any, *params_and_g: Any) -> Tensor:
            *ps, seed = params_and_g
            _, pull = vjp(lambda *q: fn(x, *q), *ps)
            return _knp.concatenate([_knp.reshape(c, (-1,)) for c in pull(seed)]).astype(np.float64)

        adjoint = integrand.derived(("vjp", sizes), cotangent_density, sum(sizes))
        flat = integral(a, b, *params, g, integrand=adjoint)
        bars, start = [], 0
        for p, size in zip(params, sizes, strict=True):
            bars.append(_knp.reshape(flat[start : start + size], np.shape(p)))
            start += size
        return (a_bar, b_bar, *bars)

    return out, pullback


def _forward(primals: tuple, tangents: tuple, *, integrand: Integrand) -> tuple:
    a, b, *params = primals
    da, db, *dparams = tangents
    out = integral(a, b, *params, integrand=integrand)
    tangent = None
    active = tuple(k for k, d in enumerate(dparams) if d is not None)
    if active:
        fn = integrand.fn

        def tangent_density(x: Any, *params_and_tangents: Any) -> Tensor:
            ps = params_and_tangents[: len(params)]
            ts = params_and_tangents[len(params) :]

            def moving(*moved: Any) -> Tensor:
                full = list(ps)
                for k, value in zip(active, moved, strict=True):
                    full[k] = value
                return fn(x, *full)

            return jvp(moving, tuple(ps[k] for k in active), tuple(ts))[1]

        density = integrand.derived(("jvp", active), tangent_density, integrand.size)
        tangent = integral(a, b, *params, *[dparams[k] for k in active], integrand=density)
    for end, d, sign in ((b, db, 1.0), (a, da, -1.0)):
        if d is not None:
            slope = _end_slope(integrand, end, params)
            if slope is not None:
                term = sign * slope * d
                tangent = term if tangent is None else tangent + term
    return out, tangent


def _batch(op: Op, args: list, axes: list, *, integrand: Integrand) -> tuple:
    """A batch of integrals, one quadrature each (adaptive subdivisions differ per example)."""
    size = batching.batch_size(args, axes)
    rows = []
    for i in range(size):
        sliced = [
            a if b is None else _knp.take(a, i, axis=b) for a, b in zip(args, axes, strict=True)
        ]
        rows.append(integral(*sliced, integrand=integrand))
    return _knp.stack(rows), 0


integral = Op("quad", _quad_impl, forward=_forward, reverse=_reverse, batch=_batch)


def quad(
    func: Callable,
    a: Any,
    b: Any,
    args: Any = (),
    full_output: int = 0,
    epsabs: float = 1.49e-8,
    epsrel: float = 1.49e-8,
    limit: int = 50,
    points: Any = None,
    weight: str | None = None,
    wvar: Any = None,
    wopts: Any = None,
    maxp1: int = 50,
    limlst: int = 50,
    complex_func: bool = False,
) -> tuple:
    """``integral of func(x, *args) dx from a to b`` with SciPy's ``quad``, differentiably.

    Parameters
    ----------
    func : callable
        ``func(x, *args)``, scalar-valued, written with ``kenaz.numpy``.
    a, b : float
        The limits (``numpy.inf`` allowed); differentiable.
    args : any pytree, optional
        Handed to ``func`` unchanged; float leaves are differentiated, as are
        tensors ``func`` reads without being given them.
    full_output, epsabs, epsrel, limit, points, maxp1, limlst : optional
        SciPy's options. The derivative integrals use ``epsabs``, ``epsrel``
        and ``limit``; ``complex_func`` is not supported yet.
    weight, wvar, wopts : optional
        SciPy's weighted rules (``"cos"``, ``"sin"``, ``"alg"``, ``"alg-loga"``,
        ``"alg-logb"``, ``"alg-log"``, ``"cauchy"``): the integral of ``func(x)
        w(x)``, differentiable in ``args`` (and closed-over tensors) for every
        weight, in the limits for ``"cos"``, ``"sin"`` and ``"cauchy"`` (the
        ``"alg"`` weights hold the limits themselves). ``wvar`` is a constant.

    Returns
    -------
    y : Tensor
        The integral.
    abserr : float
        SciPy's estimate of its absolute error (then ``infodict`` with
        ``full_output``). Under ``jit`` (an integral that depends on the jitted
        function's inputs) it raises :class:`~kenaz.errors.ConcretizationError`
        when used, and ``full_output`` raises at once: they depend on the
        values, and a compiled program would replay those of its trace.

    Examples
    --------
    >>> import kenaz
    >>> from kenaz.scipy.integrate import quad
    >>> area = lambda k: quad(lambda x, k: k * x**2, 0.0, 1.0, args=(k,))[0]
    >>> round(float(kenaz.grad(area)(2.0)), 6)  # d/dk (k / 3)
    0.333333
    """
    if complex_func:
        raise NotImplementedError(
            "kenaz.scipy.integrate.quad: complex_func= is not supported yet; integrate the "
            "real and imaginary parts"
        )
    options: dict[str, Any] = {"epsabs": epsabs, "epsrel": epsrel, "limit": limit}
    if points is not None:
        options["points"] = points
    if weight is not None:
        if isinstance(wvar, Tensor) and (type(wvar) is not Tensor or wvar._trace):
            raise ValueError(
                "kenaz.scipy.integrate.quad: wvar is a constant of the weight; its derivative "
                "is not supported (write the weight into func to differentiate it)"
            )
        wvar = tree.map(lambda v: v._value if isinstance(v, Tensor) else v, wvar)
        options.update(weight=weight, wvar=wvar)
        if wopts is not None:
            options["wopts"] = wopts
    if maxp1 != 50 or limlst != 50 or wvar is not None or wopts is not None:
        options.update(maxp1=maxp1, limlst=limlst)
    args = args if isinstance(args, tuple) else (args,)
    leaves, treedef = tree.flatten(args)
    dynamic = [i for i, x in enumerate(leaves) if _is_parameter(x)]

    def user_fn(x: Any, *params: Any) -> Tensor:
        full = list(leaves)
        for i, p in zip(dynamic, params, strict=True):
            full[i] = p
        out = _knp.asarray(func(x, *tree.unflatten(treedef, full)))
        return _knp.reshape(out, (1,)).astype(np.float64)

    a, b = as_float_tensor(a).astype(np.float64), as_float_tensor(b).astype(np.float64)
    params = [_as_parameter(leaves[i]) for i in dynamic]
    program = program_module.trace(user_fn, (a, *params), {}, None, getattr(func, "__name__", "f"))
    core, captured = program.with_captured_as_inputs()

    def fn(x: Any, *all_params: Any) -> Tensor:
        return program_module.replay(core, (x, *all_params))[0]

    integrand = Integrand(fn, 1, options, program.name, core)

    if traced([a, b, *params, *captured]):  # under jit: SciPy's diagnostics are the trace's
        if full_output:
            raise refuse(
                "quad",
                "full_output's infodict",
                "Call quad(..., full_output=1) outside jit, or leave full_output out of the "
                "jitted function.",
            )
        error = Unavailable(
            "quad",
            "the error estimate abserr",
            "Call quad outside jit to read it, or use only the integral in the jitted function.",
        )
        return integral(a, b, *params, *captured, integrand=integrand)[0], error
    value = integral(a, b, *params, *captured, integrand=integrand)[0]
    info = getattr(integrand, "info", (np.nan,))
    if full_output:
        return (value, *info)
    return value, info[0]


# -- sampled rules -----------------------------------------------------------------------------
def trapezoid(y: Any, x: Any = None, dx: float = 1.0, axis: int = -1) -> Tensor:
    """SciPy's ``trapezoid``: the trapezoidal rule along ``axis`` (differentiable in ``y``,
    ``x`` and ``dx``)."""
    return _knp.trapezoid(y, x=x, dx=dx, axis=axis)


def _last(y: Tensor, x: Tensor | None, axis: int) -> tuple[Tensor, Tensor | None]:
    """``y`` (and ``x`` when it has ``y``'s rank) with ``axis`` last."""
    y = _knp.moveaxis(y, axis, -1)
    if x is not None and x.ndim > 1:
        x = _knp.moveaxis(x, axis, -1)
    return y, x


def _basic_simpson(y: Tensor, stop: int, x: Tensor | None, dx: Any) -> Tensor:
    """Simpson's rule over the pairs of intervals from sample 0 to ``stop`` (last axis)."""
    y0, y1, y2 = y[..., 0:stop:2], y[..., 1 : stop + 1 : 2], y[..., 2 : stop + 2 : 2]
    if x is None:
        return _knp.sum(y0 + 4.0 * y1 + y2, axis=-1) * (dx / 3.0)
    h = _knp.diff(x, axis=-1)
    h0, h1 = h[..., 0:stop:2], h[..., 1 : stop + 1 : 2]
    hsum, hprod, ratio = h0 + h1, h0 * h1, h0 / h1
    terms = (
        hsum / 6.0 * (y0 * (2.0 - 1.0 / ratio) + y1 * (hsum * hsum / hprod) + y2 * (2.0 - ratio))
    )
    return _knp.sum(terms, axis=-1)


def simpson(y: Any, x: Any = None, *, dx: float = 1.0, axis: int = -1) -> Tensor:
    """SciPy's ``simpson``: composite Simpson's rule along ``axis``, with Cartwright's
    correction of the last interval for an even number of samples (SciPy >= 1.11)."""
    y = as_float_tensor(y)
    x = None if x is None else as_float_tensor(x)
    y, x = _last(y, x, axis)
    n = y.shape[-1]
    if n % 2:
        return _basic_simpson(y, n - 2, x, dx)
    if n == 2:
        width = dx if x is None else x[..., -1] - x[..., -2]
        return 0.5 * width * (y[..., -1] + y[..., -2])
    result = _basic_simpson(y, n - 3, x, dx)
    if x is None:
        h0 = h1 = dx
    else:
        h0, h1 = x[..., -2] - x[..., -3], x[..., -1] - x[..., -2]
    alpha = (2 * h1**2 + 3 * h0 * h1) / (6 * (h1 + h0))
    beta = (h1**2 + 3.0 * h0 * h1) / (6 * h0)
    eta = h1**3 / (6 * h0 * (h0 + h1))
    return result + alpha * y[..., -1] + beta * y[..., -2] - eta * y[..., -3]


def cumulative_trapezoid(
    y: Any, x: Any = None, dx: float = 1.0, axis: int = -1, initial: Any = None
) -> Tensor:
    """SciPy's ``cumulative_trapezoid``: running integral by the trapezoidal rule along
    ``axis``; ``initial`` (only ``0``, as in SciPy) is prepended."""
    if initial is not None and initial != 0:
        raise ValueError("kenaz.scipy.integrate.cumulative_trapezoid: `initial` must be None or 0")
    y = as_float_tensor(y)
    x = None if x is None else as_float_tensor(x)
    y, x = _last(y, x, axis)
    widths = dx if x is None else _knp.diff(x, axis=-1)
    out = _knp.cumsum(widths * (y[..., 1:] + y[..., :-1]) / 2.0, axis=-1)
    if initial is not None:
        out = _knp.concatenate([_knp.zeros((*out.shape[:-1], 1), dtype=out.dtype), out], axis=-1)
    return _knp.moveaxis(out, -1, axis)
