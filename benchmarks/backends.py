"""What each backend costs (docs/backends.md): the numbers of issue 15's item 6.

    .venv/bin/python -m benchmarks.backends            # all three
    .venv/bin/python -m benchmarks.backends per-op     # one of: per-op, dask-graph, fit

What neutrality costs on NumPy's own path is measured against the tree before backends
with ``benchmarks/ab.py --cases small --instructions`` (see docs/backends.md).

- ``per-op``: the eager cost of a few ops through kenaz on NumPy arrays (the fast path)
  and on array-api-strict arrays (the namespace path), each next to the library's own
  call, so that kenaz's overhead on each path is the difference. CPU time
  (``time.process_time``), median of repeats.
- ``dask-graph``: the cost of *building* a gradient's graph on a chunked Dask array, per
  op of the function, against the same gradient computed eagerly on NumPy; and the
  ``compute`` that follows.
- ``fit``: ``kenaz.train.fit(..., client=...)`` on a LocalCluster of 1 and of 2 worker
  processes (one thread each) against local training, on an MLP whose per-step work is
  large enough to matter. Wall time (``time.perf_counter``): the work happens in other
  processes.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from functools import partial

import numpy as np


def _cpu_per_call(run: Callable[[], object], repeats: int = 7) -> float:
    """Median CPU seconds per call of ``run`` (each sample about 20 ms)."""
    start = time.process_time()
    run()
    number = max(1, int(0.02 / max(time.process_time() - start, 1e-7)))
    samples = []
    for _ in range(repeats):
        start = time.process_time()
        for _ in range(number):
            run()
        samples.append((time.process_time() - start) / number)
    return statistics.median(samples)


def per_op() -> None:
    import array_api_strict as xps

    import kenaz
    import kenaz.numpy as knp

    rng = np.random.default_rng(0)
    x, y = rng.normal(size=16), rng.normal(size=16)
    m, n = rng.normal(size=(4, 4)), rng.normal(size=(4, 4))
    sx, sy, sm, sn = (xps.asarray(v) for v in (x, y, m, n))
    rows = [
        ("sin(x)", lambda a, b, p, q: knp.sin(a), np.sin, xps.sin),
        ("x + y", lambda a, b, p, q: a + b, np.add, xps.add),
        ("x * y", lambda a, b, p, q: a * b, np.multiply, xps.multiply),
        ("sum(x)", lambda a, b, p, q: knp.sum(a), np.sum, xps.sum),
        ("m @ n", lambda a, b, p, q: p @ q, np.matmul, xps.matmul),
    ]
    tensors = [kenaz.Tensor(v) for v in (x, y, m, n)]
    strict_tensors = [kenaz.Tensor(v) for v in (sx, sy, sm, sn)]
    print("per-op eager cost, 16-element vectors and 4x4 matrices (us per call, CPU)")
    print(f"{'op':10s} {'NumPy':>8s} {'kenaz/NumPy':>12s} {'strict':>8s} {'kenaz/strict':>13s}")
    for name, through_kenaz, numpy_op, strict_op in rows:
        binary = name in ("x + y", "x * y")
        matrix = name == "m @ n"
        np_args = (m, n) if matrix else (x, y) if binary else (x,)
        st_args = (sm, sn) if matrix else (sx, sy) if binary else (sx,)
        numpy_time = _cpu_per_call(partial(numpy_op, *np_args))
        strict_time = _cpu_per_call(partial(strict_op, *st_args))
        kenaz_numpy = _cpu_per_call(partial(through_kenaz, *tensors))
        kenaz_strict = _cpu_per_call(partial(through_kenaz, *strict_tensors))
        print(
            f"{name:10s} {numpy_time * 1e6:8.2f} {kenaz_numpy * 1e6:12.2f} "
            f"{strict_time * 1e6:8.2f} {kenaz_strict * 1e6:13.2f}"
        )
    chain = lambda v: knp.sum(_sin_chain(knp, v, 300))
    grad_numpy = _cpu_per_call(lambda: kenaz.grad(chain)(x), repeats=5)
    grad_strict = _cpu_per_call(lambda: kenaz.grad(chain)(sx), repeats=5)
    print(
        f"grad of a chain of 300 sin: {grad_numpy / 300 * 1e6:.2f} us/op on NumPy, "
        f"{grad_strict / 300 * 1e6:.2f} us/op on array-api-strict"
    )


def _sin_chain(knp, v, steps: int):
    for _ in range(steps):
        v = knp.sin(v)
    return v


def dask_graph() -> None:
    import dask
    import dask.array as da

    import kenaz
    import kenaz.numpy as knp

    rng = np.random.default_rng(0)
    x = rng.normal(size=(4096, 64))
    w = rng.normal(size=(64, 64)) * 0.1
    steps = 50

    def loss(w, x):
        h = x
        for _ in range(steps):  # 4 ops per layer: matmul, tanh, mul, add
            h = knp.tanh(h @ w) * 0.5 + h
        return knp.mean(h * h)

    ops = 4 * steps + 3
    eager = _cpu_per_call(lambda: kenaz.grad(loss)(w, x), repeats=3)
    for chunks in (1024, 256):
        lazy_x = da.from_array(x, chunks=(chunks, 64))
        build = _cpu_per_call(lambda lx=lazy_x: kenaz.grad(loss)(w, lx), repeats=3)
        gradient = kenaz.grad(loss)(w, lazy_x)
        tasks = len(dict(gradient._value.__dask_graph__()))
        start = time.perf_counter()
        with dask.config.set(scheduler="threads", num_workers=1):
            computed = kenaz.materialize(gradient)
        compute = time.perf_counter() - start
        error = np.max(np.abs(computed.numpy() - kenaz.grad(loss)(w, x).numpy()))
        print(
            f"dask, {4096 // chunks} chunks: building the grad graph {build * 1e3:.1f} ms "
            f"({build / ops * 1e6:.0f} us per op of the function, {tasks} tasks); compute "
            f"{compute * 1e3:.0f} ms (1 thread); max |difference| vs NumPy {error:.1e}"
        )
    print(
        f"NumPy eager grad of the same function: {eager * 1e3:.1f} ms "
        f"({eager / ops * 1e6:.0f} us per op)"
    )


def fit_workers() -> None:
    from dask.distributed import Client, LocalCluster

    import kenaz.numpy as knp
    from kenaz import optim
    from kenaz.train import fit

    rng = np.random.default_rng(0)
    features, hidden, examples = 256, 512, 8192
    x = rng.normal(size=(examples, features))
    y = np.tanh(x[:, :8] @ rng.normal(size=(8, 4)))
    params = {
        "w1": rng.normal(size=(features, hidden)) / np.sqrt(features),
        "w2": rng.normal(size=(hidden, hidden)) / np.sqrt(hidden),
        "w3": rng.normal(size=(hidden, 4)) / np.sqrt(hidden),
    }

    def loss(p, x, y):
        h = knp.tanh(x @ p["w1"])
        h = knp.tanh(h @ p["w2"])
        return knp.mean((h @ p["w3"] - y) ** 2)

    settings = dict(epochs=1, batch_size=2048, progress=False)
    start = time.perf_counter()
    local = fit(loss, params, optim.adam(1e-3), (x, y), **settings)
    print(f"fit, local (this process): {time.perf_counter() - start:.2f} s per epoch of 4 steps")
    for workers in (1, 2):
        cluster = LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            host="127.0.0.1",
            dashboard_address=None,
            env={"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"},
        )
        client = Client(cluster)
        try:
            fit(loss, params, optim.adam(1e-3), (x[:4096], y[:4096]), client=client, **settings)
            times = []
            for _ in range(2):
                start = time.perf_counter()
                remote = fit(loss, params, optim.adam(1e-3), (x, y), client=client, **settings)
                times.append(time.perf_counter() - start)
            same = all(
                np.allclose(np.asarray(remote.params[k]), np.asarray(local.params[k]), rtol=1e-9)
                for k in params
            )
            print(
                f"fit, {workers} worker(s): {min(times):.2f} s per epoch (best of 2); "
                f"equal to local training: {same}"
            )
        finally:
            client.close()
            cluster.close()


if __name__ == "__main__":
    commands = {"per-op": per_op, "dask-graph": dask_graph}
    commands["fit"] = fit_workers
    chosen = sys.argv[1:] or list(commands)
    for name in chosen:
        commands[name]()
