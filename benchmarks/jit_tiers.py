"""What each tier of ``kenaz.jit`` costs to build and to run, on W1 and W2 (full size).

Tier 0 interprets the optimized program, tier 1 runs its generated NumPy code,
tier 2 its fused numba code (``kenaz[jit]``). For each: the CPU time to build it
(tracing and optimizing are shared, shown once) and the time of one call::

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=src python -m benchmarks.jit_tiers
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from .workloads import w1_sin_chain, w2_scalar_expression


def _cpu(function: Callable[[], Any]) -> tuple[float, Any]:
    started = time.process_time()
    result = function()
    return time.process_time() - started, result


def _per_call(code: Callable[..., Any], values: list[Any]) -> float:
    best = float("inf")
    for _ in range(5):
        seconds, _ = _cpu(lambda: [code(*values) for _ in range(20)])
        best = min(best, seconds / 20)
    return best


def measure(name: str, function: Callable, args: tuple) -> None:
    """Print the build cost and the call time of each tier of ``jit(function)``."""
    import kenaz
    from kenaz.compiler import fusion
    from kenaz.compiler.codegen import compile_program
    from kenaz.compiler.interpreter import interpret
    from kenaz.compiler.passes import optimize
    from kenaz.compiler.program import trace
    from kenaz.compiler.tiers import fused_code

    function(*args)  # imports and first-use caches out of the way
    traced_in, program = _cpu(lambda: trace(function, args, {}))
    optimized_in, optimized = _cpu(lambda: optimize(program))
    ops = program.primitive_count()
    values = [a.numpy() for a in args]
    print(f"{name}: {ops} ops; trace {1e6 * traced_in / ops:.1f} µs/op, "
          f"optimize {1e6 * optimized_in / ops:.1f} µs/op")  # fmt: skip
    builders = [
        ("0 interpreter", lambda: interpret(optimized)),
        ("1 generated NumPy code", lambda: compile_program(optimized)),
    ]
    if fusion.available():
        builders.append(("2 fused (numba)", lambda: fused_code(optimized, True)))
    for label, build in builders:
        built_in, code = _cpu(build)
        first_in, _ = _cpu(lambda code=code: code(*values))  # numba compiles at first call
        print(f"  tier {label:<24} build {1e3 * (built_in + first_in):9.2f} ms "
              f"({1e6 * (built_in + first_in) / ops:8.1f} µs/op)   "
              f"call {1e6 * _per_call(code, values):9.1f} µs")  # fmt: skip
    del kenaz


def main() -> None:
    import numpy as np

    import kenaz
    import kenaz.numpy as knp

    steps, size = w1_sin_chain.SIZES["full"]
    x = knp.asarray(np.linspace(-1, 1, size))
    w1 = kenaz.grad(lambda x: knp.sum(w1_sin_chain.chain(knp.sin, x, steps)))
    measure("W1 jit(grad)", w1, (x,))
    steps = w2_scalar_expression.SIZES["full"]
    a, b = knp.asarray(np.asarray(0.3)), knp.asarray(np.asarray(0.9))
    expression = w2_scalar_expression.expression
    w2 = kenaz.grad(lambda a, b: expression(knp.sin, knp.cos, a, b, steps), argnums=(0, 1))
    measure("W2 jit(grad)", w2, (a, b))


if __name__ == "__main__":
    main()
