"""A traced program as a function: compiled NumPy code when no transformation is
installed, one call op with rules derived from the program under transformations.

:class:`Staged` is what ``jit`` keeps per signature. Called with no handler
installed, it runs its compiled function (:mod:`kenaz.compiler.codegen`) on the
arrays. Under a transformation it performs one :class:`~kenaz.call.Call`
op, ``jit[f]``, whose joint rules are derived from its program, as Mooncake
derives rules from IR:

- ``forward`` (jvp): the program of ``jvp`` of the program's replay, traced
  and staged once per pattern of tangents;
- ``reverse`` (grad, vjp): the program of ``vjp`` of the replay, split in
  two: the forward part (outputs and residuals) runs now and the backward
  part (residuals and cotangents to input cotangents) in the pullback;
- ``batch`` (vmap): the program of ``vmap`` of the replay, per batch axes and size.

Each derived program is itself :class:`Staged`, so it runs compiled when it
can and is one call op again under further transformations: ``hessian``,
``grad(grad(jit(f)))`` and ``vmap(grad(jit(f)))`` compose with no special case.
"""

from __future__ import annotations

import functools
from _thread import RLock
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..call import Call
from ..checks import float0
from ..effects import handlers_installed, perform_args
from ..forward import jvp
from ..reverse import vjp
from ..tensor import Tensor, _make
from ..transform import gc_pause, zeros_like
from ..vectorize import vmap
from . import fusion
from .codegen import compile_program, generate_source
from .passes import optimize
from .program import Const, Equation, Program, Var, _as_output, iterate_primitives, replay, trace
from .tiers import fused_code, tiered

__all__ = ["Staged"]

# Programs of this many equations (calls counted once) or more compile with the cyclic
# garbage collector paused.
_PAUSE_GC_FROM = 200


def _tensor_outputs(program: Program) -> list[Var | Const]:
    outputs = program.outputs
    for o in outputs:  # (a loop, not a comprehension: outputs are nearly always all tensors)
        if type(o) is not Var and type(o) is not Const:
            return [o for o in outputs if isinstance(o, (Var, Const))]
    return outputs


def _is_inexact(x: Any) -> bool:
    dtype = x.dtype if isinstance(x, (Tensor, np.ndarray, np.generic)) else np.result_type(x)
    return dtype.kind in "fc"


def _atom_dtype(atom: Var | Const) -> np.dtype:
    return atom.dtype if type(atom) is Var else np.result_type(atom.value)


class Staged:
    """One traced program, run compiled or as one call op (see the module doc).

    Parameters
    ----------
    program : Program
        The traced program. Its captured tensors (closed over, tracked by
        some transformation) become trailing arguments of the call op, so
        that transformations see them.
    optimize : bool
        Whether compiled code runs the optimized program.
    fuse : bool or None
        Fuse elementwise runs with numba (:mod:`kenaz.compiler.tiers`): ``None``
        once the program is hot and if it pays, ``True`` at once, ``False`` never.
    neutral : bool
        The program runs on another library's arrays: compiled code calls each
        op's implementation in the arrays' namespace (no ufuncs, no fusion).
    """

    # A trace that meets this call records the program's equations (see kenaz.compiler.program).
    inline_when_traced = True

    def __init__(
        self,
        program: Program,
        optimize: bool = True,
        fuse: bool | None = None,
        neutral: bool = False,
    ) -> None:
        captured = program.captured
        self.extra = [t for _, t in captured] if captured else []
        self.name = program.name
        # Captured tensors are trailing inputs; only tensor outputs are the op's results (the
        # traced program itself when it has no captured tensor and every output is one).
        outputs = _tensor_outputs(program)
        if captured or outputs is not program.outputs:
            self.program = Program(
                program.name,
                program.inputs + [v for v, _ in captured] if captured else program.inputs,
                [],
                program.equations,
                outputs,
                None,
                None,
            )
            self.program.calls = program.calls
            self.program.distinct = program.distinct
        else:
            self.program = program
        self.optimize = optimize
        self.fuse = fuse
        self.neutral = neutral
        self.optimized: Program | None = None
        self.compiled: Callable[..., tuple] | None = None
        self.generated: Callable[..., tuple] | None = None  # its generated code, once warm
        self._derived: dict[Any, Any] = {}
        self._lock = RLock()

    @functools.cached_property
    def op(self) -> Call:
        """The call op this program is under transformations (made when first needed)."""
        op = Call(
            f"jit[{self.name}]",
            self._run,
            forward=self._forward,
            reverse=self._reverse,
            batch=self._batch,
        )
        op.impl = self._impl  # with no handler: the compiled function, not a replay
        return op

    # -- running ----------------------------------------------------------------------------
    def __call__(self, leaves: Sequence[Any]) -> list[Tensor]:
        """The tensor outputs of the program on the input leaves."""
        if handlers_installed():
            return list(perform_args(self.op, (*leaves, *self.extra), {}))
        compiled = self.compiled or self.compile()
        values = [x._value if isinstance(x, Tensor) else x for x in leaves]
        if self.extra:
            values += [t._value for t in self.extra]
        return [_make(v) if type(v) is not Tensor else v for v in compiled(*values)]

    def _impl(self, *values: Any, **params: Any) -> tuple:
        """The op's backend implementation: the compiled function on plain values."""
        compiled = self.compiled or self.compile()
        return compiled(*values)

    def _run(self, args: tuple, params: dict) -> tuple[Tensor, ...]:
        """``Call.run``: replay the program on the current handler stack."""
        return tuple(_as_output(v) for v in replay(self.program, args))

    def compile(self) -> Callable[..., tuple]:
        """Optimize and compile the program (once; later calls return the same function)."""
        with self._lock:
            if self.compiled is None:
                # The collector's passes over a big program's new objects find nothing (see
                # gc_paused); a small one allocates too little to start a pass, and pausing
                # costs as much as optimizing a few equations.
                if len(self.program.equations) < _PAUSE_GC_FROM:
                    self._compile()
                else:
                    with gc_pause:
                        self._compile()
            return self.compiled  # type: ignore[return-value]

    def _compile(self) -> None:
        """Optimize the program and make its first tier (the lock held)."""
        program = self.program
        if self.optimize:  # (the interpreter's plan made with it: NumPy code, not neutral)
            program = optimize(program, plan=not self.neutral)
        else:
            program = Program(
                program.name,
                program.inputs,
                [],
                list(iterate_primitives(program.equations)),
                program.outputs,
                None,
                None,
            )
        self.optimized = program
        fuse = self.fuse is not False and self.optimize and not self.neutral
        if fuse and self.fuse and fusion.available():  # fuse=True: fused code at once
            code = compile_program(program, self.optimize, self.neutral)
            self.compiled = fused_code(program, self.optimize) or code
        else:  # interpreted, then generated, then fused if it pays (see tiers)
            # (tiers asks for numba at the hot call: importing it takes longer than
            # most first calls, and a signature called a few times never needs it)
            self.compiled = tiered(self, program, fuse)

    def source(self) -> str:
        """The Python source the program runs once warm (its fused form once hot, if any)."""
        self.compile()
        found = getattr(self.compiled, "source", None)
        return found or generate_source(self.optimized, self.optimize)[0]  # type: ignore[arg-type]

    def _derive(self, key: Any, build: Callable[[], Any]) -> Any:
        """A derived program for ``key``, built once."""
        found = self._derived.get(key)
        if found is None:
            with self._lock:
                found = self._derived.get(key)
                if found is None:
                    found = self._derived[key] = build()
        return found

    def _stage(self, function: Callable, leaves: Sequence[Any], what: str) -> Staged:
        program = trace(function, tuple(leaves), {}, None, f"{what} of {self.name}")
        return Staged(program, self.optimize, self.fuse, self.neutral)

    # -- forward mode -------------------------------------------------------------------------
    def _forward(self, primals: tuple, tangents: tuple, **params: Any) -> tuple:
        active = tuple(
            i for i, t in enumerate(tangents) if t is not None and _is_inexact(primals[i])
        )
        outputs = self.program.outputs
        count = len(outputs)
        if not active:
            return tuple(self(primals)), (None,) * count
        # Only inexact outputs have tangents in the derived program: an integer output's is
        # float0, not a tensor, so the program would drop it and shift the ones after it.
        inexact = [k for k, o in enumerate(outputs) if _atom_dtype(o).kind in "fc"]

        def jvp_program(*flat: Any) -> tuple:
            inputs = list(flat[: len(primals)])

            def function(*moving: Any) -> tuple:
                full = list(inputs)
                for i, x in zip(active, moving, strict=True):
                    full[i] = x
                return self._run(tuple(full), {})

            out, tangent_out = jvp(
                function, tuple(inputs[i] for i in active), tuple(flat[len(primals) :])
            )
            return (*out, *(tangent_out[k] for k in inexact))

        derived = self._derive(
            ("jvp", active),
            lambda: self._stage(jvp_program, [*primals, *(tangents[i] for i in active)], "jvp"),
        )
        values = derived([*primals, *(tangents[i] for i in active)])
        tangents_out: list[Any] = [None] * count
        for k, tangent in zip(inexact, values[count:], strict=True):
            tangents_out[k] = tangent
        return tuple(values[:count]), tuple(tangents_out)

    # -- reverse mode -------------------------------------------------------------------------
    def _reverse(self, args: tuple, **params: Any) -> tuple:
        split = self._derive("vjp", lambda: _SplitVjp(self, args))
        values = split.forward(list(args))
        count = len(self.program.outputs)
        outs, residuals = values[:count], values[count:]

        def pullback(cotangents: Any) -> tuple:
            if not isinstance(cotangents, tuple):
                cotangents = (cotangents,)
            seeds = [
                zeros_like(outs[k])  # a symbolic zero: compiled code needs an array
                if cotangents[k] is None
                else cotangents[k]
                for k in split.inexact_outputs
            ]
            grads = split.backward([*residuals, *seeds])
            result: list[Any] = [None] * len(args)
            for i, g in zip(split.inexact_inputs, grads, strict=True):
                result[i] = g
            return tuple(result)

        return tuple(outs), pullback

    # -- batching --------------------------------------------------------------------------------
    def _batch(self, op: Any, args: Sequence[Any], axes: Sequence[Any], **params: Any) -> tuple:
        axes = tuple(axes)
        size = next(np.shape(a)[ax] for a, ax in zip(args, axes, strict=True) if ax is not None)

        # Outputs that no batched input reaches stay unbatched (jacfwd relies on it).
        out_axes = tuple(
            0 if batched else None
            for batched in _reaches(self.program, [ax is not None for ax in axes])
        )

        def batched_program(*xs: Any) -> tuple:
            return vmap(lambda *a: self._run(a, {}), in_axes=axes, out_axes=out_axes)(*xs)

        derived = self._derive(
            ("vmap", axes, size), lambda: self._stage(batched_program, list(args), "vmap")
        )
        outs = derived(list(args))
        return tuple(outs), out_axes


def _reaches(program: Program, sources: Sequence[bool]) -> list[bool]:
    """For each output of ``program``: whether it depends on an input flagged in ``sources``."""
    reached = {v.id for v, flag in zip(program.inputs, sources, strict=True) if flag}
    for eq in program.equations:
        reads = [a for inner in [eq, *iterate_primitives(eq.body or [])] for a in inner.inputs]
        if any(type(a) is Var and a.id in reached for a in reads):
            reached.update(v.id for v in eq.outputs)
            if eq.body is not None:
                reached.update(v.id for inner in iterate_primitives(eq.body) for v in inner.outputs)
    return [type(o) is Var and o.id in reached for o in program.outputs]


class _SplitVjp:
    """The vjp program of a staged function, split into its forward and backward parts.

    ``forward(args)`` gives the outputs then the residuals; ``backward(residuals
    + cotangents of the inexact outputs)`` the cotangents of the inexact inputs.
    """

    def __init__(self, staged: Staged, args: tuple) -> None:
        outputs = staged.program.outputs
        self.inexact_inputs = [i for i, a in enumerate(args) if _is_inexact(a)]
        self.inexact_outputs = [k for k, o in enumerate(outputs) if _atom_dtype(o).kind in "fc"]
        shapes = [
            (o.shape, o.dtype) if type(o) is Var else (np.shape(o.value), _atom_dtype(o))
            for o in outputs
        ]
        count = len(args)

        def vjp_program(*flat: Any) -> tuple:
            inputs = list(flat[:count])
            cotangents = iter(flat[count:])

            def function(*moving: Any) -> tuple:
                full = list(inputs)
                for i, x in zip(self.inexact_inputs, moving, strict=True):
                    full[i] = x
                return staged._run(tuple(full), {})

            out, pullback = vjp(function, *(inputs[i] for i in self.inexact_inputs))
            seeds = tuple(
                # (an integer or boolean output's cotangent is float0, as vjp asks)
                next(cotangents) if k in self.inexact_outputs else np.zeros(shapes[k][0], float0)
                for k in range(len(outputs))
            )
            return (*out, *pullback(seeds))

        examples = [Tensor(np.ones(*shapes[k])) for k in self.inexact_outputs]
        program = trace(vjp_program, (*args, *examples), {}, None, f"vjp of {staged.name}")
        forward, backward = split_program(program, count, len(outputs))
        self.forward = Staged(forward, staged.optimize, staged.fuse, staged.neutral)
        self.backward = Staged(backward, staged.optimize, staged.fuse, staged.neutral)


def split_program(program: Program, arg_count: int, out_count: int) -> tuple[Program, Program]:
    """Split the program of a vjp (inputs: arguments then cotangents; outputs: the function's
    outputs then the input cotangents) into a forward and a backward program.

    The backward part is every equation that depends on a cotangent; the
    residuals are what it reads of the forward part (and of the arguments).
    """
    depends = {v.id for v in program.inputs[arg_count:]}
    forward_eqs: list[Equation] = []
    backward_eqs: list[Equation] = []
    for eq in program.equations:
        reads = [a for inner in [eq, *iterate_primitives(eq.body or [])] for a in inner.inputs]
        if any(type(a) is Var and a.id in depends for a in reads):
            backward_eqs.append(eq)
            depends.update(v.id for v in eq.outputs)
            if eq.body is not None:
                depends.update(v.id for inner in iterate_primitives(eq.body) for v in inner.outputs)
        else:
            forward_eqs.append(eq)
    defined_in_backward = set(depends)
    residuals: list[Var] = []
    seen: set[int] = set()

    def need(atom: Any) -> None:
        if type(atom) is Var and atom.id not in defined_in_backward and atom.id not in seen:
            seen.add(atom.id)
            residuals.append(atom)

    for eq in backward_eqs:
        for inner in [eq, *iterate_primitives(eq.body or [])]:
            for a in inner.inputs:
                need(a)
    for o in program.outputs[out_count:]:
        need(o)
    name = program.name
    forward = Program(
        f"{name} (forward)",
        program.inputs[:arg_count],
        program.captured,  # closed-over tracked tensors: the backward part gets them as residuals
        forward_eqs,
        [*program.outputs[:out_count], *residuals],
        None,
        None,
    )
    backward = Program(
        f"{name} (backward)",
        [*residuals, *program.inputs[arg_count:]],
        [],
        backward_eqs,
        list(program.outputs[out_count:]),
        None,
        None,
    )
    return forward, backward
