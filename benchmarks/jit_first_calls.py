"""What jit's purity check costs: the first three calls of a fresh ``jit(value_and_grad)``
of W3 (the 784-512-512-10 MLP loss), with and without ``check_purity``.

Call 1 traces and compiles; call 2 traces again and compares the programs (the
check); call 3 runs the compiled program. Medians of fresh jitted functions, in CPU
time of this process (the machine may be shared; BLAS on one thread)::

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=src python -m benchmarks.jit_first_calls [--repeats 7]
"""

from __future__ import annotations

import argparse
import statistics
import time

from .workloads import w3_mlp_loss


def first_calls(check_purity: bool, repeats: int) -> list[float]:
    """Median seconds of calls 1, 2 and 3 of fresh jitted functions."""
    import kenaz
    import kenaz.numpy as knp

    params, x, one_hot = w3_mlp_loss.make_inputs("full")
    args = (tuple(knp.asarray(p) for p in params), knp.asarray(x), knp.asarray(one_hot))

    def loss(params, x, one_hot):
        logsumexp = lambda z: knp.logsumexp(z, axis=1, keepdims=True)
        return w3_mlp_loss.mlp_loss(knp.tanh, logsumexp, knp.sum, params, x, one_hot)

    times: list[list[float]] = [[], [], []]
    for _ in range(repeats):
        jitted = kenaz.jit(kenaz.value_and_grad(loss), check_purity=check_purity)
        for k in range(3):
            started = time.process_time()
            jitted(*args)
            times[k].append(time.process_time() - started)
    return [statistics.median(t) for t in times]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    repeats = parser.parse_args().repeats
    rows = {flag: first_calls(flag, repeats) for flag in (False, True)}
    print(f"W3 jit(value_and_grad), medians of {repeats} fresh functions, milliseconds of CPU time")
    print(f"{'check_purity':>13} {'call 1':>8} {'call 2':>8} {'call 3':>8}")
    for flag, times in rows.items():
        print(f"{flag!s:>13} " + " ".join(f"{1e3 * t:8.2f}" for t in times))
    extra = rows[True][1] - rows[False][1]
    print(
        f"the check adds {1e3 * extra:.2f} ms to call 2 "
        f"({extra / rows[False][0]:.0%} of call 1, once per signature)"
    )


if __name__ == "__main__":
    main()
