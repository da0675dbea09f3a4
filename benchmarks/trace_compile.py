"""What ``kenaz.jit`` costs to trace and compile a program: fresh traces, timed or counted.

Each case makes a new jitted function, asks for its optimized program
(``Jitted.program``: trace and optimize) and builds its first tier (the interpreter's
plan, which the first call that runs the program makes), as ``run_all.py``'s
trace+compile column does: every call pays the whole first-call cost but the run. The
cases are the jitted rows of W3, W4, W5 and W7, and five small functions that show the
fixed cost per trace.

    PYTHONPATH=src:. python -m benchmarks.trace_compile          # µs per trace+compile, µs/op
    python -m benchmarks.ab OLD/src src --cases benchmarks.trace_compile:cases --instructions
"""

from __future__ import annotations

import importlib
import statistics
import time
from collections.abc import Callable
from typing import Any

WORKLOADS = {
    "W3": "w3_mlp_loss",
    "W4": "w4_per_example_grads",
    "W5": "w5_hvp",
    "W7": "w7_jacobian",
}


def _workload_jit(key: str) -> tuple[Callable[[], Any], tuple]:
    """The ``make`` (a new jitted function) and the arguments of workload ``key``'s jit row."""
    from .harness import workload
    from .harness.peers import Peers

    found: dict[str, Any] = {}

    def capture(make: Callable[[], Any], args: Any, outputs: Any) -> Any:
        found["make"], found["args"] = make, tuple(args)
        return workload.Contender("kenaz (jit)", lambda: None, outputs)

    module = importlib.import_module(f"benchmarks.workloads.{WORKLOADS[key]}")
    saved = module.kenaz_jit
    module.kenaz_jit = capture
    try:
        module.build(Peers(), "full")
    finally:
        module.kenaz_jit = saved
    return found["make"], found["args"]


def _small() -> dict[str, tuple[Callable[[], Any], tuple]]:
    import numpy as np

    import kenaz
    import kenaz.numpy as knp

    x = knp.asarray(np.ones(16))
    return {
        "jit(x*2)": (lambda: kenaz.jit(lambda x: x * 2), (x,)),
        "jit(sin(sin(x)))": (lambda: kenaz.jit(lambda x: knp.sin(knp.sin(x))), (x,)),
        "jit(grad(sum(x*x)))": (lambda: kenaz.jit(kenaz.grad(lambda x: knp.sum(x * x))), (x,)),
        "jit(jacrev(sin))": (lambda: kenaz.jit(kenaz.jacrev(knp.sin)), (x,)),
        "jit(vmap(sin))": (lambda: kenaz.jit(kenaz.vmap(knp.sin)), (x,)),
    }


def programs() -> dict[str, tuple[Callable[[], Any], tuple]]:
    """Every case: ``(make, args)``."""
    found = {key: _workload_jit(key) for key in WORKLOADS}
    found.update(_small())
    return found


def _ready(jitted: Any, args: tuple) -> Any:
    """Trace and optimize ``jitted``'s program for ``args``, then build its tier 0."""
    from kenaz.compiler.interpreter import interpret

    return interpret(jitted.program(*args))


def cases() -> dict[str, Callable[[], object]]:
    """For ``benchmarks.ab``: one fresh trace+compile per call."""
    return {
        f"{name} trace+compile": (lambda make=make, args=args: _ready(make(), args))
        for name, (make, args) in programs().items()
    }


def quick_cases() -> dict[str, Callable[[], object]]:
    """A few of :func:`cases` (W3, W7, ``jit(x*2)``, ``jit(grad(...))``): for quick A/B runs."""
    every = cases()
    names = ["W3", "W7", "jit(x*2)", "jit(grad(sum(x*x)))"]
    return {f"{name} trace+compile": every[f"{name} trace+compile"] for name in names}


def main() -> None:
    for name, (make, args) in programs().items():
        for _ in range(20):  # warm-up: NumPy's and the rules' caches
            _ready(make(), args)
        jitted = make()
        jitted.program(*args)
        ops = jitted._entry(args, {}).staged.program.primitive_count()  # traced primitives
        batches = []
        for _ in range(7):
            started = time.process_time()
            for _ in range(40):
                _ready(make(), args)
            batches.append((time.process_time() - started) / 40)
        per = statistics.median(batches) * 1e6
        print(f"{name:22s} {ops:3d} ops  {per:7.0f} µs  {per / ops:6.1f} µs/op")


if __name__ == "__main__":
    main()
