"""A right-hand side ``dy/dt = fn(y, t, *params)`` as the parameter of a solve op.

:class:`System` holds a kenaz function of a flat state, a scalar time and
tensor parameters, and the integrator that solves it. Its right-hand side on
NumPy values is *traced once per signature and compiled* (``kenaz.jit``'s
pipeline), so a solver's hundreds of steps run generated NumPy code, not
kenaz ops one by one. A function that cannot be traced (Python control flow
on a value) runs eagerly instead: same results, slower.

The derived systems the solve op's rules integrate (the adjoint, the forward
sensitivities, a batch of systems) are :class:`System` s too, built from
this one with kenaz's own ``vjp``, ``jvp`` and ``vmap`` and cached on it:
each is traced and compiled once, whatever the number of solves.

A system is the ``system=`` parameter of the solve op, so ``jit``'s purity
check compares the systems of two traces of a function that solves. Each
trace makes a new one (the right-hand side is traced anew, as it may read
tensors the function computed); two are equal when they are the same
program (constants compared by value), derived the same way, with integrators
that solve alike (:meth:`System.__eq__`). A system that runs eagerly is
equal only to itself.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ... import numpy as _knp
from ...compiler import program as program_module
from ...compiler import staged as _staged
from ...compiler.passes import optimize
from ...compiler.purity import first_difference
from ...effects import handlers_installed, no_handlers
from ...errors import ConcretizationError
from ...forward import jvp
from ...jacobians import jacfwd
from ...reverse import vjp
from ...tensor import Tensor
from ...vectorize import vmap
from ._fingerprint import compiled_program, fingerprint, fuse_scalar_stacks, share, shared
from ._integrators import same_integrator, same_settings
from ._scalar import scalar_code


def _compile_program(program: Any, key: Any = None) -> Callable:
    """Optimized and compiled (once per distinct program: see :mod:`._fingerprint`)."""

    def compile_it(program: Any) -> Callable:
        # No numba fusion: compiling its kernels takes seconds, which a right-hand side's
        # small arrays do not earn back (small ones run as Python floats, below).
        fused = fuse_scalar_stacks(program, program_module)
        code = _staged.Staged(fused, fuse=False).compile()
        return scalar_code(optimize(program), code) or code

    return compiled_program(program, compile_it, key)


def _signature(values: Sequence[Any]) -> tuple:
    """Shapes and dtypes (of arrays and NumPy scalars; a Python number's type)."""
    return tuple((v.shape, v.dtype) if hasattr(v, "dtype") else type(v) for v in values)


def scalars(values: Sequence[Any]) -> list[Any]:
    """0-d arrays as NumPy scalars: the compiled code's arithmetic on them is three times
    as fast (NumPy's scalar path), and a solver runs it at every step."""
    return [v[()] if type(v) is np.ndarray and v.ndim == 0 else v for v in values]


def values_of(xs: Sequence[Any]) -> list[Any]:
    """Plain values of tensors (``_value``), others as they are."""
    return [x._value if isinstance(x, Tensor) else x for x in xs]


class System:
    """``dy/dt = fn(y, t, *params)`` on a flat state of ``size`` entries.

    Parameters
    ----------
    fn : callable
        A kenaz function ``fn(y, t, *params)`` of a flat state ``(size,)``
        and a scalar time, returning the flat derivative ``(size,)``. It must
        not close over tensors that a transformation tracks (those are
        parameters).
    size : int
        Length of the state.
    integrator : object
        Solves the system: ``integrator.integrate(rhs, y0, times)`` with
        ``rhs(y, t)`` on NumPy values; ``integrator.derivative()`` the
        integrator of the derived systems.
    name : str
        Shown by ``debug`` and in errors.
    traceable : bool, optional
        Whether ``fn`` can be traced (False: it runs eagerly).
    """

    def __init__(
        self, fn: Callable, size: int, integrator: Any, name: str, traceable: bool = True
    ) -> None:
        self.fn = fn
        self.size = size
        self.integrator = integrator
        self.name = name
        self.traceable = traceable
        self._compiled: dict[tuple, Callable] = {}
        self._derived: dict[Any, System] = {}
        self._lock = threading.RLock()
        # What this system computes, when known: the fingerprint of the traced program it
        # derives from and the derivations. Its derived programs are shared under it
        # between solves, whose systems are new objects (see `shared_compile`).
        self.identity: Any = None
        self.origin: Any = None  # that program: kept with what is shared (its ids stay taken)
        self.derivation: tuple = ()  # the keys of `derived` from the origin's system to this
        # A system run eagerly (no origin): the user's function and what else it was given.
        self.eager_key: tuple | None = None

    def __repr__(self) -> str:
        return f"<ode {self.name}: {self.size} states>"

    def __eq__(self, other: object) -> bool:
        """The same system: the same traced program (its constants compared by value, as
        ``jit``'s purity check compares them), derived the same way, of the same size, and
        an integrator that solves alike. One that runs eagerly: the same user's function
        (the very object: it reads its state as it runs) given the same other arguments."""
        if self is other:
            return True
        if type(other) is not System:
            return NotImplemented
        if not (
            self.size == other.size
            and self.derivation == other.derivation
            and getattr(self, "out_shape", None) == getattr(other, "out_shape", None)
            and same_integrator(self.integrator, other.integrator)
        ):
            return False
        mine, theirs = self.origin, other.origin
        if mine is not None and theirs is not None:
            return mine is theirs or first_difference(mine, theirs) is None
        mine, theirs = self.eager_key, other.eager_key  # (both None: one was traced)
        return (
            mine is not None
            and theirs is not None
            and mine[0] is theirs[0]
            and same_settings(mine[1:], theirs[1:])
        )

    def __hash__(self) -> int:
        # What equal systems share, and set at construction (identity and origin come later).
        return hash((System, self.size))

    # -- the right-hand side on NumPy values ----------------------------------------------------
    def rhs(self, params: Sequence[Any]) -> Callable[[np.ndarray, float], np.ndarray]:
        """``rhs(y, t)`` on NumPy values, with ``params`` (plain values) bound."""
        params = scalars(params)
        key = _signature(params)
        compiled = self._compiled.get(key)
        if compiled is None:
            compiled = self._compile(key, params)
        if compiled is _EAGER:
            fn = self.fn

            def eager(y: np.ndarray, s: float) -> np.ndarray:
                with no_handlers():
                    out = fn(Tensor(y), Tensor(np.float64(s)), *[Tensor(p) for p in params])
                return out._value

            return eager
        shape = getattr(self, "out_shape", None)
        if shape is not None:
            return lambda y, s: np.reshape(compiled(y, s, *params)[0], shape)
        return lambda y, s: compiled(y, s, *params)[0]

    def jacobian(self, params: Sequence[Any]) -> Callable[[np.ndarray, float], np.ndarray] | None:
        """``jac(y, t)``, ``d fn / d y`` on NumPy values (``jacfwd`` of ``fn``, traced and
        compiled at its first call: a non-stiff solver never asks). None if ``fn`` runs
        eagerly: the solver's finite differences are cheaper than eager ``jacfwd``."""
        if not self.traceable:
            return None
        params = list(params)
        found: list[Callable] = []

        def jac(y: np.ndarray, s: float) -> np.ndarray:
            if not found:
                found.append(self.derived(("jacobian",), self._jacobian_system).rhs(params))
            return found[0](y, s)

        return jac

    def _jacobian_system(self) -> System:
        n = self.size
        fn = jacfwd(self.fn)
        flat = lambda y, s, *p: _knp.reshape(fn(y, s, *p), (n * n,))  # noqa: E731
        # Never solved: its `size` is its input's, as `_compile` traces with it.
        return System(flat, n, None, f"jacobian of {self.name}").reshaped((n, n))

    def reshaped(self, shape: tuple[int, ...]) -> System:
        """This system's ``rhs`` gives arrays of ``shape`` (a Jacobian's)."""
        self.out_shape = shape
        return self

    def seed(self, program: Any, params: Sequence[Any]) -> None:
        """Compile an already traced program of ``fn`` for the signature of ``params``."""
        self.identity, self.origin = fingerprint(program), program
        self._compiled[_signature(list(params))] = _compile_program(program, self.identity)

    def _compile(self, key: tuple, params: list[Any]) -> Callable:
        with self._lock:
            found = self._compiled.get(key)
            if found is not None:
                return found
            compiled: Any = _EAGER
            if self.traceable:
                example = (np.zeros(self.size), np.float64(0.0), *params)
                compiled = self._shared(("rhs", key), self.fn, example)
                if compiled is None:
                    self.traceable = False
                    compiled = _EAGER
            self._compiled[key] = compiled
            return compiled

    def _shared(self, key: Any, fn: Callable, example: tuple) -> Callable | None:
        """``fn`` traced on ``example`` and compiled, or the compiled function another
        system with this identity made (no trace); None if ``fn`` cannot be traced."""
        shared_key = None if self.identity is None else (self.identity, key)
        if shared_key is not None:
            found = shared(shared_key)
            if found is not None:
                return found
        try:
            program = program_module.trace(fn, example, {}, None, self.name)
        except ConcretizationError:
            return None
        compiled = _compile_program(program)
        if shared_key is not None:
            share(shared_key, compiled, self.origin)
        return compiled

    # -- the right-hand side on tensors ---------------------------------------------------------
    def evaluate(self, y: Any, s: Any, params: Sequence[Any]) -> Tensor:
        """``fn(y, s, *params)``: compiled on plain values, else performed (differentiated)."""
        if not handlers_installed():
            values = values_of(params)
            out = self.rhs(values)(np.asarray(values_of([y])[0]), values_of([s])[0])
            return Tensor(np.asarray(out))
        return self.fn(y, s, *params)

    # -- derived systems ------------------------------------------------------------------------
    def derived(self, key: Any, build: Callable[[], System]) -> System:
        """The derived system ``key`` (built once)."""
        found = self._derived.get(key)
        if found is None:
            with self._lock:
                found = self._derived.get(key)
                if found is None:
                    found = self._derived[key] = build()
                    found.derivation = (*self.derivation, key)
                    if self.identity is not None:
                        found.identity, found.origin = (self.identity, key), self.origin
        return found

    def adjoint_numpy(
        self, params: Sequence[Any], copies: int, jacobian: bool = False
    ) -> Callable[[np.ndarray, np.ndarray, np.ndarray], Any]:
        """``rhs(a, t, y)`` of ``copies`` adjoints ``[a, a_params]`` side by side on NumPy
        values: ``a`` and ``y`` of shape ``(copies, n)``, ``t`` of ``(copies,)``, each copy
        at its own time; ``y`` given (interpolated from the forward solution, so stable
        for stiff systems). Returns ``(copies, n + params' size)``; with ``jacobian``, its
        derivative in ``a`` instead, ``(copies, n + params' size, n)`` (exact: the adjoint
        is linear in ``a``)."""
        params = scalars(params)
        key = ("adjoint numpy", copies, jacobian, _signature(params))
        compiled = self._compiled.get(key)
        if compiled is None:
            n, fn = self.size, self.fn

            def adjoint_fn(a: Any, s: Any, y: Any, *ps: Any) -> Tensor:
                _, pullback = vjp(lambda y_, *p: fn(y_, s, *p), y, *ps)
                flat = [_knp.reshape(c, (-1,)) for c in pullback(-a)]
                return _knp.concatenate(flat).astype(np.float64)

            one = jacfwd(adjoint_fn) if jacobian else adjoint_fn
            mapped = vmap(one, in_axes=(0, 0, 0, *[None] * len(params)))
            with self._lock:
                if self.traceable:
                    example = (np.zeros((copies, n)), np.zeros(copies), np.zeros((copies, n)))
                    compiled = self._shared(key, mapped, (*example, *params))
                if compiled is None:  # Python control flow on the time: one copy at a time
                    eager = _eager(one)

                    def compiled(a: Any, s: Any, y: Any, *ps: Any) -> tuple:
                        rows = [eager(a[i], s[i], y[i], *ps)[0] for i in range(copies)]
                        return (np.stack(rows),)

                self._compiled[key] = compiled
        return lambda a, s, y: compiled(a, s, y, *params)[0]

    def sensitivity(self, active: tuple[int, ...]) -> System:
        """State ``[y, s]``: ``y' = f``, ``s' = J_y s + J_params params_dot`` for the
        parameters at positions ``active``, whose tangents are trailing parameters."""

        def build() -> System:
            n, fn = self.size, self.fn

            def sensitivity_fn(state: Any, s: Any, *params_and_tangents: Any) -> Tensor:
                count = len(params_and_tangents) - len(active)
                params = params_and_tangents[:count]
                tangents = params_and_tangents[count:]

                def moving(y: Any, *moved: Any) -> Tensor:
                    full = list(params)
                    for k, value in zip(active, moved, strict=True):
                        full[k] = value
                    return fn(y, s, *full)

                primals = (state[:n], *[params[k] for k in active])
                dy, ds = jvp(moving, primals, (state[n:], *tangents))
                return _knp.concatenate([dy, ds]).astype(np.float64)

            return System(
                sensitivity_fn,
                2 * self.size,
                self.integrator.derivative(),
                f"sensitivity of {self.name}",
                self.traceable,
            )

        return self.derived(("sensitivity", active), build)

    def sensitivities(self, shapes: tuple[tuple[int, ...], ...]) -> System:
        """State ``[y, S]`` with ``S = dy / d(y0, params)`` of shape ``(n, m)`` flattened,
        ``m = n + params' size`` (parameters of ``shapes``): ``y' = f``, ``S' = J_y S +
        [0 | J_params]``, from ``S(t0) = [I | 0]``. The reverse rule of a small system
        (:func:`._solve._reverse`): its pullback is a contraction, with no backward solve."""

        def build() -> System:
            n, fn = self.size, self.fn
            sizes = [int(np.prod(shape)) for shape in shapes]
            m = n + sum(sizes)
            # Row k of `basis[j]` is parameter j's tangent in column k of S: the unit
            # vector of that column, zero in the columns of y0 and of other parameters.
            eye = np.eye(m)
            basis, start = [], n
            for shape, size in zip(shapes, sizes, strict=True):
                basis.append(eye[:, start : start + size].reshape((m, *shape)))
                start += size

            def sensitivities_fn(state: Any, s: Any, *params: Any) -> Tensor:
                y = state[:n]
                columns = _knp.transpose(_knp.reshape(state[n:], (n, m)))  # (m, n)

                def push(dy: Any, *dparams: Any) -> Tensor:
                    return jvp(lambda y_, *p: fn(y_, s, *p), (y, *params), (dy, *dparams))[1]

                pushed = vmap(push)(columns, *[_knp.asarray(b) for b in basis])  # (m, n)
                dS = _knp.reshape(_knp.transpose(pushed), (n * m,))
                return _knp.concatenate([fn(y, s, *params), dS]).astype(np.float64)

            return System(
                sensitivities_fn,
                n * (1 + m),
                self.integrator.derivative(),
                f"sensitivities of {self.name}",
                self.traceable,
            )

        return self.derived(("sensitivities", shapes), build)

    def batched(self, size: int, batched_params: tuple[bool, ...]) -> System:
        """``size`` copies of the system as one, states side by side (``vmap`` of ``fn``)."""

        def build() -> System:
            n, fn = self.size, self.fn
            in_axes = (0, None, *[0 if b else None for b in batched_params])
            mapped = vmap(fn, in_axes=in_axes)

            def batched_fn(state: Any, s: Any, *params: Any) -> Tensor:
                return _knp.reshape(mapped(_knp.reshape(state, (size, n)), s, *params), (-1,))

            return System(
                batched_fn,
                size * n,
                self.integrator.batched(),
                f"vmap({self.name})",
                self.traceable,
            )

        return self.derived(("batched", size, batched_params), build)


def _eager(fn: Callable) -> Callable:
    """``fn`` on NumPy values with no handlers installed: a tuple of one NumPy result."""

    def run(*values: Any) -> tuple:
        with no_handlers():
            out = fn(*[Tensor(v) for v in values])
        return (out._value,)

    return run


_EAGER: Any = object()  # the compiled entry of a function that cannot be traced
