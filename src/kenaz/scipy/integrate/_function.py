"""A user's right-hand side ``func(y, t, *args)`` as a :class:`System` of a flat state.

``args`` is handed to ``func`` unchanged, as SciPy does: any pytree. Its
inexact leaves (tensors, float arrays, Python floats) are the system's
parameters, differentiated; other leaves (ints, strings, callables) are
passed as they are.

Tensors ``func`` reads without being given them (closed over, a bound
method's attributes, a partial's or a default argument's, a global) are
found by running it: the trace that compiles ``func`` records each tensor
that a transformation tracks as a *captured* input, and those become
parameters too (closure conversion), differentiated like ``args``. A
``func`` that cannot be traced runs eagerly, and is run once under a watch
that refuses such tensors (their derivative would be lost).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ... import numpy as _knp
from ... import tree
from ...compiler import program as program_module
from ...convert import as_tensor
from ...effects import Handler, handler, no_handlers, perform_args
from ...errors import ConcretizationError
from ...tensor import Tensor
from . import _cache
from ._fingerprint import fingerprint
from ._system import System


def _is_parameter(x: Any) -> bool:
    if isinstance(x, Tensor):
        return x.dtype.kind in "fc"
    if isinstance(x, (np.ndarray, np.generic)):
        return x.dtype.kind in "fc"
    return type(x) in (float, complex)


def _as_parameter(x: Any) -> Tensor:
    return x if isinstance(x, Tensor) else as_tensor(x)


class Function:
    """``func(y, t, *args)`` on a flat state: the parameters, the captured tensors, the system.

    Attributes
    ----------
    params : list of Tensor
        The inexact leaves of ``args``, then the captured tensors.
    system : System
        ``fn(y_flat, t, *params)``.
    """

    def __init__(
        self,
        func: Callable,
        shape: tuple[int, ...],
        args: Any,
        tfirst: bool,
        integrator: Any,
        y0: Tensor,
        t0: Any,
        who: str,
        solver_key: Any = None,
    ) -> None:
        leaves, treedef = tree.flatten(args)
        dynamic = [i for i, x in enumerate(leaves) if _is_parameter(x)]
        size = int(np.prod(shape))
        name = getattr(func, "__name__", type(func).__name__)
        params = [_as_parameter(leaves[i]) for i in dynamic]
        # A solve like an earlier one reuses its system (see ._cache): same func and Python
        # state it reads, same structure, shapes and dtypes, same solver options.
        key = entry = None
        if solver_key is not None:
            static = [x for i, x in enumerate(leaves) if i not in set(dynamic)]
            state = _cache.snapshot(func, static)
            if state is not None:
                types = tuple((type(x), x.shape, x.dtype) for x in params)
                key = (state, treedef, types, shape, tfirst, who, solver_key)
                entry = _cache.lookup(key)
                if entry is _cache.VOLATILE:
                    key = entry = None
                elif entry is not None and entry.checked:
                    self.params, self.system = params, entry.system
                    return

        def user_fn(y: Any, s: Any, *params: Any) -> Tensor:
            full = list(leaves)
            for i, p in zip(dynamic, params, strict=True):
                full[i] = p
            unflat = tree.unflatten(treedef, full)
            state = _knp.reshape(y, shape)
            out = func(s, state, *unflat) if tfirst else func(state, s, *unflat)
            out = _knp.asarray(out)
            if out.size != size:
                raise ValueError(
                    f"kenaz.scipy.integrate.{who}: func returned shape {out.shape} for a state of "
                    f"shape {shape}; it must return dy/dt, of the state's shape"
                )
            out = _knp.reshape(out, (size,))
            return out if out.dtype == np.float64 else out.astype(np.float64)

        # Plain values to trace with: no op is performed on the solve's own tensors, so a
        # solve traced and a solve found in the cache look the same to an outer `jit`.
        example_y = np.asarray(_example(y0), dtype=np.float64).reshape(size)
        examples = (example_y, _example(t0), *[_example(p) for p in params])
        try:
            program = program_module.trace(user_fn, examples, {}, None, name)
        except ConcretizationError:
            _refuse_tracked_reads(user_fn, example_y, t0, params, who)
            self.params = params
            self.system = System(user_fn, size, integrator, name, traceable=False)
            # It runs `func` itself at each step, reading what `func` reads then: another
            # solve of the same `func` with the same non-parameter arguments is the same.
            static = [x for i, x in enumerate(leaves) if i not in set(dynamic)]
            self.system.eager_key = (func, treedef, static, shape, tfirst)
            return
        # The program with its captured tensors as trailing inputs: a function of its
        # parameters only, which the rules may differentiate, batch and compile again.
        core, captured = program.with_captured_as_inputs()

        def fn(y: Any, s: Any, *params: Any) -> Tensor:
            return program_module.replay(core, (y, s, *params))[0]

        self.params = [*params, *captured]
        if entry is not None:  # the key's second solve: the same program, or never cached
            if not captured and fingerprint(core) == entry.fingerprint:
                entry.checked = True
                self.system = entry.system
                return
            _cache.store(key, _cache.VOLATILE)
            key = None
        self.system = System(fn, size, integrator, name)
        self.system.seed(core, [program_module.example_value(p) for p in self.params])
        if key is not None and not captured and self.system.identity is not None:
            _cache.store(key, _Entry(self.system))


class _Entry:
    """A cached system; ``checked`` once a second trace gave the same program."""

    def __init__(self, system: System) -> None:
        self.system = system
        self.fingerprint = system.identity
        self.checked = False


class _Watch(Handler):
    """Refuses ops on tensors a transformation tracks that are not ``func``'s inputs."""

    def __init__(self, inputs: list[Any], who: str) -> None:
        self.allowed = {id(x) for x in inputs}
        self.who = who

    def handle(self, op: Any, args: tuple, params: dict) -> Any:
        for a in args:
            if isinstance(a, Tensor) and id(a) not in self.allowed:
                if type(a) is not Tensor or a._trace:
                    raise ValueError(
                        f"kenaz.scipy.integrate.{self.who}: func reads a tensor that is being "
                        f"differentiated or batched (in {op.name}) without it being in args, and "
                        "func cannot be traced (it reads a value), so that tensor cannot be made "
                        "a parameter; pass it in args=(...)."
                    )
        out = perform_args(op, args, params)
        for o in out if isinstance(out, tuple) else (out,):
            self.allowed.add(id(o))
        return out


def _example(x: Any) -> Any:
    return program_module.example_value(x) if isinstance(x, Tensor) else x


def _plain(x: Any) -> Tensor:
    value = program_module.example_value(x) if isinstance(x, Tensor) else np.asarray(x)
    return Tensor(np.asarray(value))


def _refuse_tracked_reads(fn: Callable, y: Tensor, t0: Any, params: list, who: str) -> None:
    """Run ``fn`` once on plain values, watching for tracked tensors it was not given."""
    inputs = [_plain(y), _plain(t0), *[_plain(p) for p in params]]
    watch = _Watch(inputs, who)
    with no_handlers(), handler(watch):
        fn(*inputs)
