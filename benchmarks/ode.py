"""ODE solves: ``kenaz.scipy.integrate.odeint`` against SciPy and JAX, forward and grad.

Two cases, each with 21 output times:

- Lotka-Volterra (2 states, non-stiff): SciPy's odeint with a NumPy
  right-hand side, kenaz's odeint (same solver, right-hand side compiled),
  and, when installed, JAX's jitted ``jax.experimental.ode.odeint``
  (Dormand-Prince);
- Robertson's chemical kinetics (3 states, stiff): the same, JAX's row says
  how its explicit solver fares.

``grad`` is of the sum of the solution in the rate constants and ``y0``. Both
systems are small, so kenaz's reverse mode takes one forward-sensitivity solve
(``dy/d(y0, params)`` along ``y``) and contracts it; a larger system takes the
adjoint's backward solve (``kenaz.scipy.integrate._solve._by_sensitivities``).
Targets: kenaz's forward <= 1.5x SciPy's; kenaz's grad <= 5x kenaz's forward.

Run: ``.venv/bin/python benchmarks/ode.py`` (``.venv-bench`` has JAX).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(ROOT))

from benchmarks.harness.threads import pin_to_one_thread  # noqa: E402

pin_to_one_thread()  # before NumPy or JAX is imported

import numpy as np  # noqa: E402
import scipy.integrate  # noqa: E402

import kenaz  # noqa: E402
import kenaz.numpy as knp  # noqa: E402
from benchmarks import _timing  # noqa: E402
from benchmarks.harness.peers import load_peers  # noqa: E402
from kenaz.scipy.integrate import odeint  # noqa: E402


def lotka_volterra(y, t, a, b, c, d):
    prey, predator = y[0], y[1]
    return knp.stack([a * prey - b * prey * predator, d * prey * predator - c * predator])


def lotka_volterra_numpy(y, t, a, b, c, d):
    prey, predator = y
    return np.array([a * prey - b * prey * predator, d * prey * predator - c * predator])


def robertson(y, t, k1, k2, k3):
    return knp.stack(
        [
            -k1 * y[0] + k2 * y[1] * y[2],
            k1 * y[0] - k2 * y[1] * y[2] - k3 * y[1] ** 2,
            k3 * y[1] ** 2,
        ]
    )


def robertson_numpy(y, t, k1, k2, k3):
    return np.array(
        [
            -k1 * y[0] + k2 * y[1] * y[2],
            k1 * y[0] - k2 * y[1] * y[2] - k3 * y[1] ** 2,
            k3 * y[1] ** 2,
        ]
    )


CASES = {
    "Lotka-Volterra (2 states, 21 outputs)": (
        lotka_volterra,
        lotka_volterra_numpy,
        np.array([1.0, 1.0]),
        np.linspace(0.0, 5.0, 21),
        (2.0 / 3.0, 4.0 / 3.0, 1.0, 1.0),
    ),
    "Robertson (3 states, stiff, 21 outputs)": (
        robertson,
        robertson_numpy,
        np.array([1.0, 0.0, 0.0]),
        np.concatenate([[0.0], np.logspace(-4, 3, 20)]),
        (0.04, 1.0e4, 3.0e7),
    ),
}


def jax_contenders(jax, numpy_rhs_source, y0, t, params) -> dict:
    """JAX's jitted odeint (forward) and jitted grad, as for kenaz."""
    import jax.numpy as jnp
    from jax.experimental.ode import odeint as jax_odeint

    def rhs(y, s, *p):
        return jnp.stack(list(numpy_rhs_source(y, s, *p, stack=jnp.stack)))

    def forward(y0, *p):
        # A step limit: its explicit method on a stiff system would otherwise run on and on.
        return jax_odeint(rhs, y0, jnp.asarray(t), *p, mxstep=20000)

    def loss(y0, *p):
        return jnp.sum(forward(y0, *p))

    forward_jit = jax.jit(forward)
    grad_jit = jax.jit(jax.grad(loss, argnums=tuple(range(1 + len(params)))))
    jy0, jp = jnp.asarray(y0), [jnp.asarray(p) for p in params]

    def run_forward():
        return forward_jit(jy0, *jp).block_until_ready()

    run_forward.solution = run_forward  # type: ignore[attr-defined]
    return {
        "jax jit odeint (dopri5)": run_forward,
        "jax jit grad": lambda: [g.block_until_ready() for g in grad_jit(jy0, *jp)],
    }


def _lv_terms(y, s, a, b, c, d, stack):
    return (a * y[0] - b * y[0] * y[1], d * y[0] * y[1] - c * y[1])


def _robertson_terms(y, s, k1, k2, k3, stack):
    return (
        -k1 * y[0] + k2 * y[1] * y[2],
        k1 * y[0] - k2 * y[1] * y[2] - k3 * y[1] ** 2,
        k3 * y[1] ** 2,
    )


JAX_TERMS = {
    "Lotka-Volterra (2 states, 21 outputs)": _lv_terms,
    "Robertson (3 states, stiff, 21 outputs)": _robertson_terms,
}


def run_case(title: str, peers) -> dict:
    func, numpy_func, y0, t, params = CASES[title]

    def kenaz_forward():
        return odeint(func, y0, t, params)

    def loss(y0, *p):
        return knp.sum(odeint(func, y0, t, p))

    kenaz_grad = kenaz.grad(loss, argnums=tuple(range(1 + len(params))))
    ours = kenaz_forward().numpy()
    theirs = scipy.integrate.odeint(numpy_func, y0, t, params)
    np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-9)

    jitted_forward = kenaz.jit(lambda y0, *p: odeint(func, y0, t, p))
    jitted_grad = kenaz.jit(kenaz_grad)
    np.testing.assert_allclose(jitted_forward(y0, *params).numpy(), theirs, rtol=1e-6, atol=1e-9)
    for got, want in zip(jitted_grad(y0, *params), kenaz_grad(y0, *params), strict=True):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=1e-9)
    runs = {
        "scipy odeint, numpy rhs": lambda: scipy.integrate.odeint(numpy_func, y0, t, params),
        "kenaz odeint": kenaz_forward,
        "kenaz grad": lambda: kenaz_grad(y0, *params),
        "kenaz jit(odeint)": lambda: jitted_forward(y0, *params),
        "kenaz jit(grad)": lambda: jitted_grad(y0, *params),
    }
    note = ""
    if peers.jax is not None:
        try:
            contenders = jax_contenders(peers.jax, JAX_TERMS[title], y0, t, params)
            for run in contenders.values():
                run()  # compile, and see that it runs at all
            jax_solution = np.asarray(contenders["jax jit odeint (dopri5)"].solution())
            if np.allclose(jax_solution, theirs, rtol=1e-5, atol=1e-8):
                runs.update(contenders)
            else:
                error = np.nanmax(np.abs(jax_solution - theirs))
                note = f"  jax: its solution is off SciPy's by {error:.2g} (20000 steps): not timed"
        except Exception as error:  # noqa: BLE001 - report, do not fail the table
            note = f"  jax: {type(error).__name__}: {str(error).splitlines()[0][:100]}"
    else:
        note = f"  jax: {peers.why_missing('jax')}"
    medians = _timing.interleaved_medians(runs, rounds=9, sample_seconds=0.1)
    _timing.report(title, medians, "scipy odeint, numpy rhs")
    forward_ratio = medians["kenaz odeint"] / medians["scipy odeint, numpy rhs"]
    grad_ratio = medians["kenaz grad"] / medians["kenaz odeint"]
    jit_forward_ratio = medians["kenaz jit(odeint)"] / medians["scipy odeint, numpy rhs"]
    jit_grad_ratio = medians["kenaz jit(grad)"] / medians["kenaz jit(odeint)"]
    print(
        f"  kenaz forward / scipy: {forward_ratio:.2f}x (target <= 1.5x);"
        f" kenaz grad / kenaz forward: {grad_ratio:.2f}x (target <= 5x)\n"
        f"  jitted: forward / scipy {jit_forward_ratio:.2f}x; grad / forward {jit_grad_ratio:.2f}x"
    )
    if "jax jit grad" in medians:
        jax_forward, jax_grad = medians["jax jit odeint (dopri5)"], medians["jax jit grad"]
        print(
            f"  kenaz / jax: forward {medians['kenaz odeint'] / jax_forward:.1f}x"
            f" (jitted {medians['kenaz jit(odeint)'] / jax_forward:.1f}x),"
            f" grad {medians['kenaz grad'] / jax_grad:.1f}x"
            f" (jitted {medians['kenaz jit(grad)'] / jax_grad:.1f}x)"
        )
    if note:
        print(note)
    return medians


def main() -> None:
    peers = load_peers(("jax",))
    for title in CASES:
        run_case(title, peers)


if __name__ == "__main__":
    main()
