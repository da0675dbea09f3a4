"""Where kenaz's per-op time goes: the cost of each layer between the user's code and NumPy.

Run ``python benchmarks/breakdown.py`` (``.venv-bench/bin/python`` for the
same environment as ``make bench``). Three views of the W1 chain
(``x = sin(x) * 1.01 + 0.1`` on 16 float64 elements) and of its 0-d variant:

1. **Layers, by subtraction** (the accurate numbers): the same op sequence
   run as plain NumPy, as eager kenaz (no handler), as kenaz's forward pass
   under ``vjp`` (recording the tape), and as the full ``grad``. Each
   difference, divided by the number of ops, is one layer's cost per op.
2. **Components, timed alone**: one Tensor creation, one context-variable
   read, one handler-stack switch, one vjp-rule closure, one operator-method
   frame.
3. **The garbage collector's share** of ``grad``, timed with ``gc.callbacks``.
4. **py-spy samples** of ``grad`` in a loop (py-spy does not slow the
   program down as cProfile does), each charged to a category by its
   innermost frame: dispatch, eager op, handler, tape entry, backward.

It reaches into kenaz internals (``kenaz.effects._handlers``,
``kenaz.tensor._make``, ``kenaz.reverse.ReverseHandler``) to time the
components; a component whose internal has moved is reported as such.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(ROOT))

from benchmarks.harness.threads import pin_to_one_thread  # noqa: E402

pin_to_one_thread()

import gc  # noqa: E402
import inspect  # noqa: E402
import shutil  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from functools import partial  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

import kenaz  # noqa: E402
import kenaz.numpy as knp  # noqa: E402
from benchmarks.harness.timing import frozen_heap  # noqa: E402
from benchmarks.workloads.w1_sin_chain import chain  # noqa: E402
from benchmarks.workloads.w6_long_chain import long_chain  # noqa: E402

STEPS = 1000
OPS_PER_STEP = 3
PROFILE_SECONDS = 8.0


def median_seconds(run: Callable[[], Any], repeat: int = 15, number: int = 1) -> float:
    """Median CPU seconds per call over ``repeat`` samples of ``number`` calls."""
    run()
    samples = []
    for _ in range(repeat):
        start = time.process_time()
        for _ in range(number):
            run()
        samples.append((time.process_time() - start) / number)
    return statistics.median(samples)


def layers(x0: np.ndarray) -> dict[str, float]:
    """Seconds per op of each layer, by subtracting the runs below it."""
    ops = OPS_PER_STEP * STEPS
    x = knp.asarray(x0)
    loss = lambda x: knp.sum(chain(knp.sin, x, STEPS))
    gradient = kenaz.grad(loss)
    totals = {
        "numpy": median_seconds(lambda: chain(np.sin, x0, STEPS)),
        "eager": median_seconds(lambda: chain(knp.sin, x, STEPS)),
        "taped": median_seconds(lambda: kenaz.vjp(loss, x)),
        "grad": median_seconds(lambda: gradient(x)),
    }
    return {
        "NumPy itself (the ufuncs)": totals["numpy"] / ops,
        "eager kenaz: operator method, perform, unwrap, Tensor creation": (
            totals["eager"] - totals["numpy"]
        )
        / ops,
        "under grad, forward: handler dispatch, handle(), tape entry, vjp closure": (
            totals["taped"] - totals["eager"]
        )
        / ops,
        "under grad, backward: tape walk, pullbacks (rule arithmetic as eager ops), sums": (
            totals["grad"] - totals["taped"]
        )
        / ops,
        "total grad per op": totals["grad"] / ops,
    }


def components() -> dict[str, float | str]:
    """Seconds per call of single pieces of the hot path, timed alone."""
    number = 20_000
    results: dict[str, float | str] = {}
    value = np.zeros(16)
    x = knp.asarray(value)

    def timed(label: str, run: Callable[[], Any]) -> None:
        results[label] = median_seconds(run, repeat=7, number=number)

    timed("np.sin on 16 elements (reference)", lambda: np.sin(value))
    timed("knp.sin(x), eager", lambda: knp.sin(x))
    timed("x * 1.01, eager (operator method + perform_args)", lambda: x * 1.01)
    timed("knp.multiply(x, 1.01), eager (perform)", lambda: knp.multiply(x, 1.01))
    try:
        from kenaz.tensor import _make

        timed("Tensor creation (_make)", lambda: _make(value))
    except ImportError:
        results["Tensor creation (_make)"] = "kenaz.tensor._make has moved"
    try:
        from kenaz.effects import _handlers

        timed("handler stack read (ContextVar.get)", _handlers.get)

        def switch_stack() -> None:
            _handlers.reset(_handlers.set(None))

        timed("handler stack switch (ContextVar.set + reset)", switch_stack)
    except ImportError:
        results["handler stack read (ContextVar.get)"] = "kenaz.effects._handlers has moved"
    sin_vjp_maker = knp.sin.vjp[0] if getattr(knp.sin, "vjp", None) else None
    if sin_vjp_maker is not None:
        out = knp.sin(x)
        timed("sin's vjp closure creation (tape residual)", lambda: sin_vjp_maker(out, x))
        pullback = sin_vjp_maker(out, x)
        timed("sin's pullback dsin(g, x) = g * cos(x), eager (backward rule)", lambda: pullback(x))
    try:
        from kenaz.reverse import ReverseHandler

        recorder = ReverseHandler()
        record = getattr(recorder, "track", None) or recorder._record
        timed("tape node record (ReverseHandler.track)", lambda: record(out))
    except (ImportError, AttributeError):
        results["tape node record"] = "kenaz.reverse.ReverseHandler.track has moved"
    return results


def garbage_collector_share(run: Callable[[], Any], repeat: int = 3) -> tuple[float, int]:
    """The share of ``run``'s CPU time spent in the cyclic garbage collector, and collections.

    The tape's closures, lists and dicts are objects the collector tracks, so
    its full collections rescan the growing tape during the forward pass.
    """
    spent, collections, started = 0.0, 0, [0.0]

    def on_collection(phase: str, info: dict) -> None:
        nonlocal spent, collections
        if phase == "start":
            started[0] = time.process_time()
        else:
            spent += time.process_time() - started[0]
            collections += 1

    run()
    gc.callbacks.append(on_collection)
    try:
        start = time.process_time()
        for _ in range(repeat):
            run()
        total = time.process_time() - start
    finally:
        gc.callbacks.remove(on_collection)
    return spent / total, collections // repeat


def grad_loop(seconds: float) -> None:
    """Take W1's gradient over and over for ``seconds``: the target that py-spy samples."""
    x = knp.asarray(np.linspace(-1.0, 1.0, 16))
    gradient = kenaz.grad(lambda x: knp.sum(chain(knp.sin, x, STEPS)))
    gradient(x)
    with frozen_heap():
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            gradient(x)


def sample_with_py_spy(seconds: float) -> Path | None:
    """Run :func:`grad_loop` under ``py-spy record``; the path of its raw stacks, or None."""
    py_spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    if not Path(py_spy).exists():
        return None
    output = Path(tempfile.mkdtemp()) / "stacks.txt"
    # Blocking sampling (py-spy pauses the process for each sample): with
    # --nonblocking it reads frames while they change and truncates many stacks.
    command = [py_spy, "record", "--rate", "500", "--format", "raw"]
    command += ["--output", str(output), "--", sys.executable, __file__, "--loop", str(seconds)]
    subprocess.run(command, check=True, capture_output=True)
    return output


def _source_lines(function: Callable, *needles: str) -> set[int]:
    """Line numbers of ``function``'s source lines that contain any of ``needles``."""
    lines, first = inspect.getsourcelines(inspect.unwrap(function))
    return {first + i for i, text in enumerate(lines) if any(n in text for n in needles)}


def _dispatch_lines() -> dict[str, set[int]]:
    """For ``perform`` and ``perform_args``: their lines up to the switch to the next
    handler (before the eager path)."""
    from kenaz import effects

    found = {}
    for name in ("perform", "perform_args"):
        lines, first = inspect.getsourcelines(getattr(effects, name))
        dispatch = set()
        for i, text in enumerate(lines):
            dispatch.add(first + i)
            if "_handlers.reset" in text:
                break
        found[name] = dispatch
    return found


def categorize_samples(stacks: Path) -> dict[str, dict[str, int]]:
    """Samples per category, in the forward and the backward pass of ``grad``.

    A sample is charged to its innermost frame: Python and C time spent on
    that line (a NumPy ufunc runs inside the ``perform`` line that calls it,
    freeing a tape inside the line that drops it).
    """
    from kenaz.reverse import ReverseHandler

    dispatch = _dispatch_lines()
    closure_lines = _source_lines(ReverseHandler.handle, "maker(")
    record_lines = _source_lines(
        ReverseHandler.handle,
        "_record(",
        "track(",
        "record(",
        "tape.append",
        "node_count",
        "_trace",
    )
    perform_call_lines = _source_lines(ReverseHandler.handle, "perform_args(")
    counts: dict[str, dict[str, int]] = {"forward": {}, "backward": {}, "around": {}}
    for line in stacks.read_text().splitlines():
        stack, _, number = line.rpartition(" ")
        frames = [_parse_frame(frame) for frame in stack.split(";") if frame]
        functions = {function for function, _, _ in frames}
        if "grad_loop" not in functions:
            continue  # start-up: imports, building the function
        if "ReverseHandler.backward" in functions:
            phase = "backward"
        elif "chain" in functions:  # the user's function is running: the forward pass
            phase = "forward"
        else:
            phase = "around"
        category = _category(
            frames[-1], phase, dispatch, closure_lines, record_lines, perform_call_lines
        )
        counts[phase][category] = counts[phase].get(category, 0) + int(number)
    return counts


def _parse_frame(frame: str) -> tuple[str, str, int]:
    """``"perform (kenaz/effects.py:173)"`` -> ``("perform", "kenaz/effects.py", 173)``."""
    function, _, where = frame.rpartition(" (")
    filename, _, line = where.rstrip(")").rpartition(":")
    return function, filename, int(line) if line.isdigit() else 0


def _category(
    leaf: tuple[str, str, int],
    phase: str,
    dispatch: dict[str, set[int]],
    closure_lines: set[int],
    record_lines: set[int],
    perform_call_lines: set[int],
) -> str:
    function, filename, line = leaf
    if "numpy/" in filename:
        return "NumPy's own Python code"
    if function in dispatch:  # perform, perform_args
        if line in dispatch[function]:
            return "dispatch: perform switching to the handler (ContextVar set/reset)"
        return "eager op: unwrap, NumPy ufunc, Tensor creation"
    if function.endswith(("impl_naming_shapes", ".impl", "_impl")):  # an op's NumPy code
        return "eager op: unwrap, NumPy ufunc, Tensor creation"
    if function.startswith("ReverseHandler.handle.<locals>"):  # the edges' comprehension
        return "tape entry: vjp rule closure (residuals)"
    if function == "ReverseHandler.handle":
        if line in closure_lines:
            return "tape entry: vjp rule closure (residuals)"
        if line in record_lines:
            return "tape entry: node record, tape append"
        if line in perform_call_lines:
            return "handler: handle() performing the op outward"
        return "handler: handle() checks"
    if function in ("tracked_records", "ReverseHandler._record"):
        return (
            "handler: tracked_records"
            if function == "tracked_records"
            else ("tape entry: node record, tape append")
        )
    if function == "ReverseHandler.backward":
        return "backward: tape walk, cotangent lookup and sums"
    if "kenaz/ops/" in filename:
        if phase == "forward":
            return "tape entry: vjp rule closure (residuals)"
        return "backward rule: pullback code (closures, sum_to)"
    if function.startswith("Tensor.") or "kenaz/tensor.py" in filename:
        return "operator method / Tensor attribute"
    if function == "gc_paused":
        return "garbage collection as the collector's pause ends (the live tape is all young)"
    if function in ("grad_loop", "frozen_heap"):
        return "the benchmark loop (calling grad, dropping its result)"
    if function.endswith(("grad_f", "value_and_grad_f")):
        return "grad's entry and exit, freeing the tape"
    if "kenaz/" in filename:
        return f"kenaz, other ({function})"
    return f"outside kenaz ({function})"


def print_report() -> None:
    x0 = np.linspace(-1.0, 1.0, 16)
    print(f"kenaz per-op cost breakdown: W1 chain, {STEPS} steps x {OPS_PER_STEP} ops, 16 f64")
    print("\n1. Layers (CPU time per op, by subtraction):")
    with frozen_heap():
        for label, seconds in layers(x0).items():
            print(f"   {seconds * 1e6:7.2f} µs  {label}")
        for label, seconds in layers(np.asarray(0.5)).items():
            if label.startswith("total"):
                print(f"   {seconds * 1e6:7.2f} µs  same, on a 0-d value: {label}")
        print("\n2. Components (CPU time per call, timed alone):")
        for label, seconds in components().items():
            shown = f"{seconds * 1e9:7.0f} ns" if isinstance(seconds, float) else f"{'?':>10}"
            print(f"   {shown}  {label}" + ("" if isinstance(seconds, float) else f": {seconds}"))
    print("\n3. Garbage collector's share of grad's CPU time:")
    with frozen_heap():
        for label, x, loss in (
            (
                "W1 (3,000 ops, 16 f64)",
                knp.asarray(x0),
                lambda x: knp.sum(chain(knp.sin, x, STEPS)),
            ),
            ("W6 (100,000 ops, 0-d)", knp.asarray(0.5), lambda x: long_chain(knp.sin, x, 25_000)),
        ):
            gradient = kenaz.grad(loss)
            share, collections = garbage_collector_share(partial(gradient, x), repeat=2)
            print(f"   {100 * share:5.1f}%  {label}, {collections} collections per grad")
    print("\n4. py-spy samples of grad, by where the innermost frame is (see the docstring):")
    stacks = sample_with_py_spy(PROFILE_SECONDS)
    if stacks is None:
        print("   py-spy is not installed: `.venv-bench/bin/pip install py-spy`")
        return
    counts = categorize_samples(stacks)
    total = sum(sum(categories.values()) for categories in counts.values())
    titles = {
        "forward": "forward pass (f under the grad handler)",
        "backward": "backward pass",
        "around": "around them",
    }
    print(f"   {total} samples; share of grad's whole time:")
    for phase, categories in counts.items():
        phase_total = sum(categories.values())
        print(f"   {100 * phase_total / max(total, 1):5.1f}%  {titles[phase]}")
        for category, count in sorted(categories.items(), key=lambda item: -item[1]):
            if count / max(total, 1) >= 0.005:
                print(f"     {100 * count / total:5.1f}%  {category}")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--loop":
        grad_loop(float(sys.argv[2]))
    else:
        print_report()
