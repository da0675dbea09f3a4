"""What ``kenaz.jit`` costs before it runs fast: trace and compile per op, and the first calls.

For each workload's ``kenaz (jit)`` function (the one ``run_all.py`` times):

- **eager, trace, optimize, tier 0, trace+compile** in CPU µs per primitive op
  of the traced program: the traced function run eagerly on the workload's
  smoke-size inputs (the same ops on tiny arrays: what its transformations'
  Python costs alone, a floor for tracing), tracing, the passes, building the
  interpreter (tier 0), and all three as ``run_all.py``'s ``trace+compile``
  column measures them: ``jitted.program(*args)`` on a fresh function (trace
  and passes), then tier 0 for that program (which the first call that runs it
  makes). Best of ``--repeats``.
- **calls 1, 2, 3** of a fresh jitted function, ms of CPU time (``--clock wall``
  for wall-clock time), medians: call 1
  traces and runs; call 2 is the purity check (a second trace, its results
  computed from it); call 3 runs the staged program.
- **JAX's first call** of its ``jax (jit)`` row and **kenaz / JAX**, the ratio
  of the first calls (the issue asks for at most 1/10). Each library has made
  one unrelated jitted call before (its one-time start-up is not counted).

Then a 10,000-op ``jit(grad)`` (W1's chain at 2,000 steps): seconds until it is
ready to run (trace and compile), and its first call. And a steady call of a small
jitted MLP by the way its arguments are passed (positional tensors, a dict of
parameters, keyword arguments, a static argument by position or name): µs per call
and the ratio to the positional call.

Run in the bench venv for JAX (without it the JAX columns say so)::

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=src python -m benchmarks.jit_first_calls \\
        [--only W1,W3] [--repeats 5] [--no-jax]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from dataclasses import replace
from types import ModuleType
from typing import Any

from .harness.peers import Peers, load_peers
from .harness.workload import Contender, unavailable
from .workloads import (
    w1_sin_chain,
    w2_scalar_expression,
    w3_mlp_loss,
    w4_per_example_grads,
    w5_hvp,
    w6_long_chain,
    w7_jacobian,
)

MODULES: dict[str, ModuleType] = {
    "W1": w1_sin_chain,
    "W2": w2_scalar_expression,
    "W3": w3_mlp_loss,
    "W4": w4_per_example_grads,
    "W5": w5_hvp,
    "W6": w6_long_chain,
    "W7": w7_jacobian,
}
DEFAULT = "W1,W2,W3,W4,W5,W7"  # W6's 200,000-op program takes minutes: --only W6
CLOCK = [time.process_time]  # the calls' clock: CPU time, as run_all.py's; --clock wall


def kenaz_function(name: str, size: str = "full") -> tuple[Callable[[], Any], tuple]:
    """``(make, args)`` of workload ``name``'s ``kenaz (jit)`` row: ``make()`` is a fresh
    jitted function. Taken by standing in for the row's builder (which warms it up)."""
    module = MODULES[name]
    found: dict[str, Any] = {}

    def capture(make: Callable[[], Any], args: Any, outputs: Any) -> Contender:
        found["make"], found["args"] = make, tuple(args)
        return unavailable("kenaz (jit)", "measured by jit_first_calls")

    builder = module.kenaz_jit
    module.kenaz_jit = capture
    try:
        module.WORKLOAD.build(Peers(), size)
    finally:
        module.kenaz_jit = builder
    return found["make"], found["args"]


class _TimedJax:
    """``jax`` whose ``jit`` notes the wall-clock time of each jitted function's first call
    (until its result is ready): some rows compile while they are built."""

    def __init__(self, jax: ModuleType) -> None:
        self._jax = jax
        self.first_calls: list[float] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._jax, name)

    def jit(self, function: Callable, **options: Any) -> Callable:
        jitted = self._jax.jit(function, **options)
        done = False

        def timed(*args: Any, **kwargs: Any) -> Any:
            nonlocal done
            if done:
                return jitted(*args, **kwargs)
            done = True
            started = CLOCK[0]()
            result = self._jax.block_until_ready(jitted(*args, **kwargs))
            self.first_calls.append(CLOCK[0]() - started)
            return result

        return timed


def jax_first_call(name: str, peers: Peers) -> float | None:
    """Seconds of the first call of a fresh ``jax (jit)`` row of workload ``name``."""
    timed = _TimedJax(peers.jax)  # type: ignore[arg-type]
    case = MODULES[name].WORKLOAD.build(replace(peers, jax=timed), "full")
    row = next((c for c in case.contenders if c.library == "jax (jit)"), None)
    if row is None or row.run is None:
        return None
    row.run()  # its first call, unless the row made it while it was built
    return sum(timed.first_calls) if timed.first_calls else None


def _best_cpu(function: Callable[[], Any], repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        started = time.process_time()
        function()
        best = min(best, time.process_time() - started)
    return best


def compile_costs(make: Callable[[], Any], args: tuple, repeats: int) -> tuple[int, list[float]]:
    """The op count, then CPU seconds of: trace, optimize, tier 0, and all three (best of)."""
    from kenaz.compiler.interpreter import interpret
    from kenaz.compiler.passes import optimize
    from kenaz.compiler.program import trace
    from kenaz.compiler.staged import Staged

    function = make().fun
    program = trace(function, args, {})
    staged = Staged(program)
    optimized = optimize(staged.program)
    fresh = [make() for _ in range(repeats)]
    times = [
        _best_cpu(lambda: trace(function, args, {}), repeats),
        _best_cpu(lambda: optimize(staged.program), repeats),
        _best_cpu(lambda: interpret(optimized), repeats),
        _best_cpu(lambda: interpret(fresh.pop().program(*args)), repeats),
    ]
    return program.primitive_count(), times


def eager_per_op(make: Callable[[], Any], args: tuple, repeats: int) -> float:
    """CPU seconds per primitive op of the function jit traces, run eagerly on ``args``."""
    jitted = make()
    ops = jitted._entry(args, {}).staged.program.primitive_count()
    return _best_cpu(lambda: jitted.fun(*args), repeats) / ops


def first_calls(make: Callable[[], Any], args: tuple, repeats: int) -> list[float]:
    """Median seconds of calls 1, 2 and 3 of fresh jitted functions."""
    clock = CLOCK[0]
    times: list[list[float]] = [[], [], []]
    for _ in range(repeats):
        jitted = make()
        for k in range(3):
            started = clock()
            jitted(*args)
            times[k].append(clock() - started)
    return [statistics.median(t) for t in times]


def _warm_up(peers: Peers) -> None:
    """One unrelated jitted call per library: start-up costs are not a workload's."""
    import kenaz
    import kenaz.numpy as knp

    kenaz.jit(lambda x: knp.sin(x) * 2.0)(knp.ones(3))
    if peers.jax is not None:
        jax = peers.jax
        jax.block_until_ready(jax.jit(lambda x: jax.numpy.sin(x) * 2.0)(jax.numpy.ones(3)))


def _ready(jitted: Any, *args: Any) -> Any:
    """Trace and optimize ``jitted``'s program for ``args``, then build its tier 0."""
    from kenaz.compiler.interpreter import interpret

    return interpret(jitted.program(*args))


def ten_thousand_ops(repeats: int) -> tuple[int, float, float]:
    """W1's chain at 2,000 steps under ``jit(grad)``: ops, seconds to ready, first call."""
    import numpy as np

    import kenaz
    import kenaz.numpy as knp

    x = knp.asarray(np.linspace(-1.0, 1.0, w1_sin_chain.SIZES["full"][1]))

    def make() -> Any:
        return kenaz.jit(kenaz.grad(lambda x: knp.sum(w1_sin_chain.chain(knp.sin, x, 2000))))

    ops = make()._entry((x,), {}).staged.program.primitive_count()
    fresh = [make() for _ in range(repeats)]
    ready = _best_cpu(lambda: _ready(fresh.pop(), x), repeats)
    first = first_calls(make, (x,), repeats)[0]
    return ops, ready, first


def steady_calls(repeats: int) -> list[tuple[str, float]]:
    """CPU seconds per steady call of one small jitted MLP, by how its arguments come."""
    import numpy as np

    import kenaz
    import kenaz.numpy as knp

    rng = np.random.default_rng(0)
    w1, b1 = knp.asarray(rng.normal(size=(4, 8))), knp.zeros(8)
    w2, x = knp.asarray(rng.normal(size=(8, 1))), knp.asarray(rng.normal(size=(16, 4)))
    params = {"w1": w1, "b1": b1, "w2": w2}

    def mlp(w1: Any, b1: Any, w2: Any, x: Any, act: str = "tanh") -> Any:
        return knp.sum(getattr(knp, act)(x @ w1 + b1) @ w2)

    positional = kenaz.jit(mlp)
    in_a_dict = kenaz.jit(lambda p, x: mlp(p["w1"], p["b1"], p["w2"], x))
    keywords = kenaz.jit(lambda x, *, w1, b1, w2: mlp(w1, b1, w2, x))
    by_number = kenaz.jit(mlp, static_argnums=4)
    by_name = kenaz.jit(mlp, static_argnames="act")
    cases = [
        ("positional", lambda: positional(w1, b1, w2, x)),
        ("dict of params", lambda: in_a_dict(params, x)),
        ("keyword args", lambda: keywords(x, w1=w1, b1=b1, w2=w2)),
        ("static argnum", lambda: by_number(w1, b1, w2, x, "tanh")),
        ("static argname", lambda: by_name(w1, b1, w2, x, act="tanh")),
    ]
    for _, call in cases:
        for _ in range(30):  # traced, checked, warm (tier 1)
            call()
    per_call = []
    for label, call in cases:
        seconds = _best_cpu(lambda call=call: [call() for _ in range(200)], repeats)
        per_call.append((label, seconds / 200))
    return per_call


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default=DEFAULT, help="workloads, comma-separated")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--no-jax", action="store_true", help="skip JAX's first calls")
    parser.add_argument("--clock", choices=("cpu", "wall"), default="cpu", help="for the calls")
    options = parser.parse_args()
    if options.clock == "wall":
        CLOCK[0] = time.perf_counter
    peers = Peers() if options.no_jax else load_peers(("jax",))
    _warm_up(peers)
    jax_note = "" if peers.jax is not None else f" (JAX: {peers.why_missing('jax')})"
    print(f"kenaz jit before it runs fast; CPU µs/op best of {options.repeats}, calls in "
          f"{options.clock} ms, medians{jax_note}")  # fmt: skip
    calls = " ".join(f"{c:>8}" for c in ("call 1", "call 2", "call 3"))
    print(f"{'':4} {'ops':>6} {'eager':>7} {'trace':>7} {'optim':>7} {'tier 0':>7} "
          f"{'trace+compile':>14} "
          f"{calls} {'JAX 1st':>9} {'kenaz/JAX':>10}")  # fmt: skip
    for name in options.only.split(","):
        make, args = kenaz_function(name)
        make()(*args)  # this workload's first-use caches (its ops' dtypes) out of the way
        ops, (traced, optimized, tier0, total) = compile_costs(make, args, options.repeats)
        small = eager_per_op(*kenaz_function(name, "smoke"), 5 * options.repeats)
        calls = first_calls(make, args, options.repeats)
        jax = jax_first_call(name, peers) if peers.jax is not None else None
        ratio = f"{calls[0] / jax:10.4f}" if jax else f"{'-':>10}"
        jax_ms = f"{1e3 * jax:9.1f}" if jax else f"{'-':>9}"
        print(f"{name:4} {ops:6d} {1e6 * small:7.1f} {1e6 * traced / ops:7.1f} "
              f"{1e6 * optimized / ops:7.1f} {1e6 * tier0 / ops:7.1f} {1e6 * total / ops:14.1f} "
              + " ".join(f"{1e3 * t:8.2f}" for t in calls)
              + f" {jax_ms} {ratio}")  # fmt: skip
    ops, ready, first = ten_thousand_ops(min(options.repeats, 3))
    print(f"jit(grad) of {ops:,} ops (W1's chain, 2,000 steps): ready in {ready:.3f} s of CPU "
          f"({1e6 * ready / ops:.1f} µs/op), first call {first:.3f} s "
          f"({options.clock})")  # fmt: skip
    per_call = steady_calls(options.repeats)
    print("steady calls of a small jitted MLP, CPU µs per call (ratio to positional): "
          + ", ".join(f"{label} {1e6 * t:.1f} ({t / per_call[0][1]:.2f}x)"
                      for label, t in per_call))  # fmt: skip


if __name__ == "__main__":
    main()
