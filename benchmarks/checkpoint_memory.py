"""Peak memory and time of a gradient with and without ``kenaz.checkpoint``.

The network: 64 layers ``h = tanh(h @ W + b)``, 256 wide, on a batch of
inputs; the gradient of ``sum(h)`` with respect to every ``W`` and ``b``.
Peak memory is measured with ``tracemalloc`` (which sees NumPy's buffers),
from just before the gradient call; it includes the gradient itself
(64 x 256 x 256 float64 = 32 MiB), which no checkpointing can save.

Three strategies:
- ``none``: every residual of every layer is kept until the backward pass;
- ``each layer``: ``checkpoint`` around every layer. A tanh layer's only
  residual is its input, which a checkpoint keeps too, so this saves little:
  checkpointing pays off when a checkpointed block has more intermediates
  than inputs;
- ``segments of 8``: ``checkpoint`` around blocks of 8 layers (sqrt(64)); the
  tape keeps 8 block inputs, and the backward pass of one block recomputes
  its 8 layers: about 16 activations alive instead of 64.

Run: ``.venv/bin/python benchmarks/checkpoint_memory.py [--batch 2048]``
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402
from collections.abc import Callable  # noqa: E402

import numpy as np  # noqa: E402

import kenaz  # noqa: E402
import kenaz.numpy as knp  # noqa: E402

LAYERS, WIDTH = 64, 256


def layer(w, b, h):
    return knp.tanh(h @ w + b)


def block(params, h):
    for w, b in params:
        h = layer(w, b, h)
    return h


checkpointed_layer = kenaz.checkpoint(layer)
checkpointed_block = kenaz.checkpoint(block)


def loss_plain(params, x):
    return knp.sum(block(params, x))


def loss_each_layer(params, x):
    h = x
    for w, b in params:
        h = checkpointed_layer(w, b, h)
    return knp.sum(h)


def loss_segments(params, x, size: int = 8):
    h = x
    for start in range(0, len(params), size):
        h = checkpointed_block(params[start : start + size], h)
    return knp.sum(h)


def peak_memory(fn: Callable[[], object]) -> int:
    """Peak bytes allocated while ``fn`` runs (the result stays alive until the end)."""
    tracemalloc.start()
    tracemalloc.reset_peak()
    try:
        result = fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    del result
    return peak


def best_time(fn: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=2048)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    rng = np.random.default_rng(0)
    params = [
        (
            knp.array(rng.normal(scale=1.0 / np.sqrt(WIDTH), size=(WIDTH, WIDTH))),
            knp.array(rng.normal(scale=0.1, size=WIDTH)),
        )
        for _ in range(LAYERS)
    ]
    x = knp.array(rng.normal(size=(args.batch, WIDTH)))
    activation_mib = args.batch * WIDTH * 8 / 2**20
    print(
        f"gradient of a {LAYERS}-layer, {WIDTH}-wide tanh network, batch {args.batch} "
        f"(one activation = {activation_mib:.1f} MiB, the gradient = "
        f"{LAYERS * (WIDTH * WIDTH + WIDTH) * 8 / 2**20:.1f} MiB)"
    )

    strategies = {
        "none": loss_plain,
        "each layer": loss_each_layer,
        "segments of 8": loss_segments,
    }
    reference = None
    peaks: dict[str, int] = {}
    for name, loss in strategies.items():
        gradient = kenaz.grad(loss)
        result = gradient(params, x)
        flat = np.concatenate([np.ravel(leaf) for leaf in kenaz.tree.leaves(result)])
        if reference is None:
            reference = flat
        assert np.allclose(flat, reference), f"{name}: the gradient differs"
        del result
        peaks[name] = peak_memory(lambda gradient=gradient: gradient(params, x))
    # Interleaved, best of `repeats`: a busy machine slows all strategies alike.
    times = {name: float("inf") for name in strategies}
    for _ in range(args.repeats):
        for name, loss in strategies.items():
            seconds = best_time(lambda loss=loss: kenaz.grad(loss)(params, x), 1)
            times[name] = min(times[name], seconds)
    rows = [(name, peaks[name], times[name]) for name in strategies]

    base_peak, base_time = rows[0][1], rows[0][2]
    print(f"{'strategy':<15}{'peak MiB':>10}{'less memory':>13}{'time s':>9}{'time ratio':>12}")
    for name, peak, seconds in rows:
        print(
            f"{name:<15}{peak / 2**20:>10.1f}{base_peak / peak:>12.2f}x"
            f"{seconds:>9.3f}{seconds / base_time:>11.2f}x"
        )


if __name__ == "__main__":
    main()
