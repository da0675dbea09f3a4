"""Random programs run by kenaz and by JAX: values and derivatives compared.

Each program is a short chain of ops from ``_jax_ops.SPECS`` (elementwise and special
functions, reductions with axes, linear algebra, indexing, shapes) applied to two inputs
``x`` and ``y`` of random shapes (0-d, size 0, broadcasting), at float64 or float32.
For each program this compares, kenaz against JAX (``jax_enable_x64``):

- the value (shape, dtype, numbers);
- ``grad`` of ``sum(f(x, y) * c)`` in both inputs, ``jvp``, ``vjp``;
- ``jacfwd``, ``jacrev`` and ``hessian`` in ``x`` (when small);
- ``vmap`` over a batch of ``x`` (``y`` unbatched) and over both;
- ``kenaz.jit`` of the program: its value and ``grad(jit(...))``;
- and that ``grad`` refuses an integer input (never a silent zero).

Tolerances scale with the dtype (float32 about 1e-3 relative, float64 1e-6) and with
the largest reference value. A mismatch in a chain is blamed on the first op that fails
the same check alone (on its own intermediate input). Known differences that are
documented kenaz conventions, or where JAX departs from NumPy, are reported apart
(``KNOWN``).

Usage (where JAX is installed; kenaz's tree first)::

    PYTHONPATH=src /work/wt/jit-speed/.venv-bench/bin/python scripts/compare_with_jax.py \\
        --seconds 60 --seed 0

``--ops sin,cumprod`` restricts the first op of each program; ``--program N`` reruns
program N of the seed alone and prints every comparison; ``--steps 1`` tests ops alone.
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import time
import traceback
import types
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np

os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("JAX_ENABLE_X64", "1")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import jax.scipy.special as jsp  # noqa: E402
from _jax_ops import BY_NAME, SPECS, Spec  # noqa: E402

import kenaz  # noqa: E402
import kenaz.numpy as knp  # noqa: E402
import kenaz.scipy.special as ksp  # noqa: E402

jax.config.update("jax_enable_x64", True)

K = types.SimpleNamespace(np=knp, la=knp.linalg, sp=ksp, name="kenaz")
J = types.SimpleNamespace(np=jnp, la=jnp.linalg, sp=jsp, name="jax")

# Relative tolerances, by dtype and by what is compared.
TOLERANCE = {
    np.dtype(np.float64): {"value": 1e-6, "first": 1e-6, "second": 1e-5},
    np.dtype(np.float32): {"value": 2e-3, "first": 5e-3, "second": 3e-2},
}
KIND = {"value": "value", "jit_value": "value", "vmap": "value", "vmap_both": "value",
        "hessian": "second"}  # fmt: skip

# Known differences, reported apart and not counted as failures: op -> (a piece of the
# mismatch message that identifies it, why). "convention": a documented kenaz choice
# (docs/conventions.md); "jax": JAX departs from NumPy/SciPy, which kenaz follows.
KNOWN = {
    "abs": ("", "convention: abs'(0) = 0, JAX 1 (docs/conventions.md, 'abs at 0')"),
    "std": ("nan", "convention: std of constant data has derivative 0, JAX nan "
                   "(docs/conventions.md, the argument sweep's choices)"),
    "float_power": ("dtype float64 vs jax float32",
                    "jax: numpy.float_power computes in float64 always; jnp keeps float32"),
}  # fmt: skip


@dataclass
class Program:
    """``steps`` applied to ``x``; binary steps take ``y`` (or a scalar made of it)."""

    dtype: np.dtype
    x: np.ndarray
    y: np.ndarray
    steps: list = field(default_factory=list)  # (Spec, params)

    def describe(self) -> str:
        ops = " > ".join(f"{s.name}{_short(p)}" for s, p in self.steps)
        return f"{self.dtype.name} x{self.x.shape} y{self.y.shape}: {ops}"

    def function(self, M: Any) -> Any:
        steps = list(self.steps)

        def f(x: Any, y: Any) -> Any:
            x, y = M.np.asarray(x), M.np.asarray(y)  # arrays of the library (`x.at[...]`)
            h = x
            for spec, p in steps:
                if spec.arity == 1:
                    h = spec.fn(M, p, h)
                else:
                    h = spec.fn(M, p, h, _other(M, h, y))
            return h

        return f


def _short(p: dict) -> str:
    if not p:
        return ""
    items = []
    for k, v in p.items():
        if isinstance(v, np.ndarray):
            v = v.tolist() if v.size <= 6 else f"array{v.shape}"
        items.append(f"{k}={v}")
    return "(" + ", ".join(items) + ")"


def _other(M: Any, h: Any, y: Any) -> Any:
    """``y`` where it broadcasts to ``h``'s shape; else a scalar made of it."""
    try:
        if np.broadcast_shapes(tuple(y.shape), tuple(h.shape)) == tuple(h.shape):
            return y
    except ValueError:
        pass
    return M.np.sum(y) * 0.3 + 0.1


def _y_shape(rng: np.random.Generator, shape: tuple) -> tuple:
    """A shape for ``y``: ``shape`` itself, 0-d, or one that broadcasts to it."""
    choice = rng.integers(4)
    if choice == 0 or not shape:
        return shape if choice != 1 else ()
    if choice == 1:
        return ()
    if choice == 2:
        return shape[int(rng.integers(1, len(shape) + 1)) - 1 :] if len(shape) > 1 else shape
    return tuple(1 if rng.random() < 0.5 else n for n in shape)


def _draw(rng: np.random.Generator, dtype: np.dtype, shape: tuple) -> np.ndarray:
    return rng.uniform(-2, 2, shape).astype(dtype)


def generate(rng: np.random.Generator, first: list[Spec], max_steps: int, index: int) -> Program:
    """A random program: its first op ``first[index]`` (round robin, so that a short run
    still covers every op), then up to ``max_steps - 1`` random ones."""
    dtype = np.dtype(np.float64 if rng.random() < 0.6 else np.float32)
    for attempt in range(50):
        spec = first[(index + attempt) % len(first)]
        shape = spec.shapes[int(rng.integers(len(spec.shapes)))]
        p = spec.params(rng, shape, dtype)
        if p is not None:
            break
    else:
        raise RuntimeError("no op of --ops applies to its shapes")
    program = Program(dtype, _draw(rng, dtype, shape), _draw(rng, dtype, _y_shape(rng, shape)))
    program.steps.append((spec, p))
    f = program.function(K)
    steps = int(rng.integers(1, max_steps + 1))
    while len(program.steps) < steps:
        with np.errstate(all="ignore"):
            h = np.asarray(f(program.x, program.y))
        if h.dtype != dtype or not np.all(np.isfinite(h)) or (h.size and np.abs(h).max() > 1e4):
            break
        for _ in range(20):
            spec = SPECS[int(rng.integers(len(SPECS)))]
            p = spec.params(rng, h.shape, dtype)
            if p is not None:
                program.steps.append((spec, p))
                break
        else:
            break
        f = program.function(K)
    return program


# -- comparisons ------------------------------------------------------------------------
def compare(ours: Any, theirs: Any, dtype: np.dtype, kind: str) -> str | None:
    """None if ``ours`` matches ``theirs`` (pytrees of arrays), else what differs."""
    a_leaves, b_leaves = jax.tree_util.tree_leaves(_np_tree(ours)), jax.tree_util.tree_leaves(
        _np_tree(theirs)
    )
    if len(a_leaves) != len(b_leaves):
        return f"{len(a_leaves)} leaves vs {len(b_leaves)}"
    for i, (a, b) in enumerate(zip(a_leaves, b_leaves)):
        where = f"[{i}] " if len(a_leaves) > 1 else ""
        if a.shape != b.shape:
            return f"{where}shape {a.shape} vs jax {b.shape}"
        if a.dtype != b.dtype:
            return f"{where}dtype {a.dtype} vs jax {b.dtype}"
        if a.dtype.kind not in "fc":
            if not np.array_equal(a, b):
                return f"{where}values differ"
            continue
        nan_a, nan_b = np.isnan(a), np.isnan(b)
        if not np.array_equal(nan_a, nan_b):
            differ = nan_a != nan_b
            return (f"{where}nan at {np.argwhere(differ)[:3].tolist()}: ours {a[differ][:3]} "
                    f"jax {b[differ][:3]}")  # fmt: skip
        inf_a, inf_b = np.isinf(a), np.isinf(b)
        if not np.array_equal(inf_a, inf_b) or not np.array_equal(a[inf_a], b[inf_b]):
            return f"{where}inf pattern differs: ours {a.ravel()[:6]} jax {b.ravel()[:6]}"
        finite = np.isfinite(b)
        if not finite.any():
            continue
        tol = TOLERANCE[dtype][KIND.get(kind, "first")]
        scale = max(1.0, float(np.abs(b[finite]).max()))
        diff = np.abs(a[finite].astype(np.float64) - b[finite].astype(np.float64))
        bound = tol * scale + tol * np.abs(b[finite])
        if np.any(diff > bound):
            worst = int(np.argmax(diff - bound))
            return (f"{where}max |diff| {diff.max():.3g} (scale {scale:.3g}); ours "
                    f"{a[finite][worst]:.8g} jax {b[finite][worst]:.8g}")  # fmt: skip
    return None


def _np_tree(tree: Any) -> Any:
    return jax.tree_util.tree_map(lambda v: np.asarray(v), tree)


def _scalarize(f: Any, c: np.ndarray, M: Any) -> Any:
    return lambda x, y: M.np.sum(f(x, y) * c)


def checks(program: Program, only: set | None = None) -> dict[str, Any]:
    """Every comparison of ``program``: {check: None (match), "skip", or a message}."""
    kf, jf = program.function(K), program.function(J)
    x, y, dtype = program.x, program.y, program.dtype
    rng = np.random.default_rng(1)
    results: dict[str, Any] = {}

    def run(name: str, ours: Any, theirs: Any) -> None:
        if only is not None and name not in only:
            return
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                expected = theirs()
        except Exception:  # JAX refuses: nothing to compare
            results[name] = "skip"
            return
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                got = ours()
        except Exception as error:
            results[name] = f"kenaz raised {type(error).__name__}: {str(error)[:200]}"
            return
        results[name] = compare(got, expected, dtype, name)

    jit = jax.jit  # one XLA compilation per check, not one per op and shape
    with np.errstate(all="ignore"):
        value = np.asarray(jit(jf)(x, y))
    run("value", lambda: kf(x, y), lambda: jit(jf)(x, y))
    if value.dtype.kind != "f":
        return results
    c = rng.uniform(-1, 1, value.shape).astype(value.dtype)
    kg, jg = _scalarize(kf, c, K), _scalarize(jf, c, J)
    run("grad", lambda: kenaz.grad(kg, argnums=(0, 1))(x, y),
        lambda: jit(jax.grad(jg, argnums=(0, 1)))(x, y))  # fmt: skip
    tx, ty = _draw(rng, dtype, x.shape), _draw(rng, dtype, y.shape)
    run("jvp", lambda: kenaz.jvp(kf, (x, y), (tx, ty)),
        lambda: jit(lambda *a: jax.jvp(jf, a[:2], a[2:]))(x, y, tx, ty))  # fmt: skip
    run("vjp", lambda: kenaz.vjp(kf, x, y)[1](c),
        lambda: jit(lambda *a: jax.vjp(jf, *a[:2])[1](a[2]))(x, y, c))  # fmt: skip
    if x.size * max(value.size, 1) <= 200:
        run("jacfwd", lambda: kenaz.jacfwd(kf)(x, y), lambda: jit(jax.jacfwd(jf))(x, y))
        run("jacrev", lambda: kenaz.jacrev(kf)(x, y), lambda: jit(jax.jacrev(jf))(x, y))
    if x.size <= 12 and all(s.hessian for s, _ in program.steps):
        run("hessian", lambda: kenaz.hessian(kg)(x, y), lambda: jit(jax.hessian(jg))(x, y))
    xs = np.stack([x, (0.9 * x + 0.1).astype(dtype), -x])
    ys = np.stack([y, (1.1 * y - 0.2).astype(dtype), y[...]])
    run("vmap", lambda: kenaz.vmap(kf, in_axes=(0, None))(xs, y),
        lambda: jit(jax.vmap(jf, in_axes=(0, None)))(xs, y))  # fmt: skip
    run("vmap_both", lambda: kenaz.vmap(kf)(xs, ys), lambda: jit(jax.vmap(jf))(xs, ys))
    run("vmap_grad", lambda: kenaz.vmap(kenaz.grad(kg), in_axes=(0, None))(xs, y),
        lambda: jit(jax.vmap(jax.grad(jg), in_axes=(0, None)))(xs, y))  # fmt: skip
    run("jit_value", lambda: kenaz.jit(kf)(x, y), lambda: jit(jf)(x, y))
    run("jit_grad", lambda: kenaz.grad(kenaz.jit(kg), argnums=(0, 1))(x, y),
        lambda: jit(jax.grad(jg, argnums=(0, 1)))(x, y))  # fmt: skip
    if only is None or "int_input" in only:
        results["int_input"] = _refuses_integers(kg, x, y)
    return results


def _refuses_integers(kg: Any, x: np.ndarray, y: np.ndarray) -> str | None:
    """``grad`` of an integer input must raise, naming integers; never a silent zero."""
    xi = np.round(x).astype(np.int64)
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            kenaz.grad(kg)(xi, y)
    except (TypeError, ValueError) as error:
        text = str(error).lower()
        return None if "int" in text else f"unclear error: {error}"
    except Exception:
        return "skip"  # the program itself fails on integers (a float-only op)
    return "grad of an integer input returned a value (expected an error)"


# -- blame and the run --------------------------------------------------------------------
def blame(program: Program, failing: list[str]) -> str:
    """The first op of ``program`` that fails one of ``failing`` alone, on its own
    intermediate input (``chain:...`` if none does)."""
    if len(program.steps) == 1:
        return program.steps[0][0].name
    h = program.x
    for spec, p in program.steps:
        alone = Program(program.dtype, h, program.y, [(spec, p)])
        found = checks(alone, set(failing))
        if any(v not in (None, "skip") for v in found.values()):
            return spec.name
        with np.errstate(all="ignore"):
            h = np.asarray(Program(program.dtype, h, program.y, [(spec, p)]).function(K)(
                h, program.y))  # fmt: skip
        if h.dtype != program.dtype:
            break
    return "chain:" + ">".join(s.name for s, _ in program.steps)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--steps", type=int, default=3, help="most ops per program")
    parser.add_argument("--ops", default="", help="comma-separated first ops (default: all)")
    parser.add_argument("--program", type=int, default=None, help="rerun one program")
    parser.add_argument("--examples", type=int, default=2, help="repros shown per mismatch")
    options = parser.parse_args(argv)
    first = [BY_NAME[n] for n in options.ops.split(",") if n] or SPECS
    deadline = time.monotonic() + options.seconds
    mismatches: dict[tuple[str, str], list[str]] = collections.defaultdict(list)
    tried: collections.Counter = collections.Counter()
    skipped: collections.Counter = collections.Counter()
    index = options.program or 0
    programs = 0
    while True:
        if options.program is None and time.monotonic() > deadline:
            break
        rng = np.random.default_rng([options.seed, index])
        try:
            program = generate(rng, first, options.steps, index)
        except Exception as error:  # an op failing eagerly in kenaz while drawing
            mismatches[("generate", "kenaz raised")].append(f"seed {options.seed} program "
                                                           f"{index}: {error!r}")  # fmt: skip
            index += 1
            continue
        try:
            results = checks(program)
        except Exception:
            results = {"jax_value": "skip"}  # JAX itself cannot run the program
            if options.program is not None:
                traceback.print_exc()
        programs += 1
        for spec, _ in program.steps:
            tried[spec.name] += 1
        failing = [k for k, v in results.items() if v not in (None, "skip")]
        skipped.update(k for k, v in results.items() if v == "skip")
        if options.program is not None:
            print(program.describe())
            for k, v in results.items():
                print(f"  {k:10s} {'ok' if v is None else v}")
        if failing:
            culprit = blame(program, failing)
            for check in failing:
                mismatches[(culprit, check)].append(
                    f"--seed {options.seed} --program {index}  {program.describe()}  "
                    f"{results[check]}"
                )
        if options.program is not None:
            break
        index += 1
    report(programs, tried, skipped, mismatches, options.examples)
    by_op: dict[str, list] = collections.defaultdict(list)
    for (op, check), cases in mismatches.items():
        by_op[op].append((check, cases))
    return 1 if any(not is_known(op, found) for op, found in by_op.items()) else 0


def is_known(op: str, found: list) -> bool:
    """Whether every mismatch ``found`` for ``op`` is a known difference (``KNOWN``)."""
    if op not in KNOWN:
        return False
    piece = KNOWN[op][0]
    return all(piece in case for _, cases in found for case in cases)


def report(programs: int, tried: Any, skipped: Any, mismatches: dict, examples: int) -> None:
    """The summary: counts, then the mismatches grouped by op and check."""
    print(f"{programs} programs, {sum(tried.values())} op applications, {len(tried)} of "
          f"{len(SPECS)} ops exercised")  # fmt: skip
    never = sorted(set(BY_NAME) - set(tried))
    if never:
        print(f"ops never drawn: {', '.join(never)}")
    if skipped:
        print("checks JAX could not run (skipped): "
              + ", ".join(f"{k} {n}" for k, n in skipped.most_common()))  # fmt: skip
    if not mismatches:
        print("no mismatches")
        return
    by_op: dict[str, list] = collections.defaultdict(list)
    for (op, check), cases in mismatches.items():
        by_op[op].append((check, cases))
    print(f"mismatches in {len(by_op)} ops:")
    for op in sorted(by_op, key=lambda op: (is_known(op, by_op[op]), op)):
        note = f"  [known, {KNOWN[op][1]}]" if is_known(op, by_op[op]) else ""
        total = sum(len(c) for _, c in by_op[op])
        print(f"{op}: {total} ({', '.join(ch for ch, _ in by_op[op])}){note}")
        for check, cases in by_op[op]:
            for case in cases[:examples]:
                print(f"    {check}: {case}")


if __name__ == "__main__":
    sys.exit(main())
