"""A/B of the conversion rule's cost on eager calls (in-process, interleaved, process_time).

``knp.sin(x)`` and ``x + y`` (primitives: perform is unchanged, so both columns
run the same code and show the noise floor); ``knp.mean(x)`` wrapped by
``kenaz.convert.accepts_nested_lists`` against its unwrapped function.

    .venv/bin/python benchmarks/convert_ab.py
"""

import time

import numpy as np

import kenaz.numpy as knp

x, y = knp.asarray(np.random.rand(8)), knp.asarray(np.random.rand(8))
mean_wrapped, mean_plain = knp.mean, knp.mean.__wrapped__
sin = knp.sin
cases = {
    "knp.sin(x)": (lambda: sin(x), lambda: sin(x)),
    "x + y": (lambda: x + y, lambda: x + y),
    "knp.mean(x) wrapped vs unwrapped": (lambda: mean_wrapped(x), lambda: mean_plain(x)),
}


def run(f, n=20000):
    start = time.process_time()
    for _ in range(n):
        f()
    return (time.process_time() - start) / n * 1e6


for name, (a, b) in cases.items():
    ta, tb = [], []
    for _ in range(7):
        ta.append(run(a))
        tb.append(run(b))
    print(f"{name}: {min(ta):.3f} us vs {min(tb):.3f} us  ratio {min(ta) / min(tb):.3f}")
