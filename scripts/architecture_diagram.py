"""Draw docs/architecture.svg: the layers of src/kenaz, and the life of one op under grad(vmap(f)).

    .venv/bin/python scripts/architecture_diagram.py

Needs matplotlib (the ``plot`` extra).
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch  # noqa: E402

OUT = Path(__file__).resolve().parent.parent / "docs" / "architecture.svg"

LAYERS = [  # lowest first: (name, modules)
    ("errors, tree", "errors.py  tree.py"),
    ("tensor", "tensor.py: Tensor, its per-level records"),
    ("effects", "effects.py: Op, perform, Handler, the handler stack"),
    (
        "ops",
        "ops/: axes < shape < batching < elementwise < reduction < indexing\n"
        "      < linalg < the rest;  call.py: Call, the op that runs a function",
    ),
    (
        "transformations",
        "reverse.py  forward.py  vectorize.py  custom_jvp_rule.py\n"
        "custom_vjp_rule.py  rematerialize.py  jacobians.py  debugging.py ...",
    ),
    ("namespaces", "numpy/ (binds Tensor's operators)  scipy/"),
    ("testing", "testing/: check_grads, check_op"),
    ("nn, optim, train", "nn/  optim.py  train.py  data.py  io.py"),
]


def box(ax, x, y, w, h, title, body, color):
    ax.add_patch(
        FancyBboxPatch(
            (x, y), w, h, boxstyle="round,pad=0.02,rounding_size=0.08",
            facecolor=color, edgecolor="#333333", linewidth=1.0,
        )
    )  # fmt: skip
    ax.text(x + 0.12, y + h - 0.14, title, fontsize=10, weight="bold", va="top")
    ax.text(x + 0.12, y + h - 0.42, body, fontsize=7.5, va="top", family="monospace")


def arrow(ax, start, end, text="", color="#333333", offset=(0.05, 0.0)):
    ax.add_patch(
        FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=10, color=color, lw=1.0)
    )
    if text:
        mid = ((start[0] + end[0]) / 2 + offset[0], (start[1] + end[1]) / 2 + offset[1])
        ax.text(*mid, text, fontsize=7, color=color, va="center")


def main() -> None:
    fig, ax = plt.subplots(figsize=(14, 8.8))
    ax.set_xlim(0, 14)
    ax.set_ylim(0, 8.8)
    ax.axis("off")

    # Left: the layers, lowest at the bottom; imports point down.
    ax.text(0.2, 8.5, "Layers: each imports only its own and those below", fontsize=11,
            weight="bold")  # fmt: skip
    height, gap = 0.82, 0.12
    for i, (name, body) in enumerate(LAYERS):
        y = 0.2 + i * (height + gap)
        box(ax, 0.2, y, 6.2, height, f"{i}. {name}", body, "#e8f0fe" if i % 2 else "#f5f5f5")
        if i:
            arrow(ax, (3.3, y + 0.02), (3.3, y - gap - 0.02))

    # Right: one op, x * 2.0 inside f, under grad(vmap(f)).
    ax.text(7.4, 8.5, "Life of one op: y = x * 2.0 in f, under grad(vmap(f))", fontsize=11,
            weight="bold")  # fmt: skip
    steps = [
        ("perform(multiply, x_view, 2.0)",
         "the effect: stack = (grad's R, vmap's B); B is innermost",
         "#f5f5f5"),
        ("B = BatchHandler.handle (stack set to (R,))",
         "x_view is B's view: take its batch and batch axis;\n"
         "multiply.batch = batching.elementwise performs\nmultiply(x_batch, 2.0) one level out",
         "#fff4e0"),
        ("R = ReverseHandler.handle (stack set to ())",
         "perform_args outward: no handler left, so NumPy runs;\n"
         "x_batch is tracked (node n): tape gets\n(node m, [(n, pullback: g -> g * 2.0)])",
         "#e6f4ea"),
        ("back in B",
         "wrap the batched result as a view (batch axis 0):\nf sees y of the per-example shape",
         "#fff4e0"),
        ("grad's backward pass (R uninstalled)",
         "walk the tape from the end: cotangent of m -> pullback -> n;\n"
         "its ops are performed with the handlers outside grad", "#e6f4ea"),
    ]  # fmt: skip
    y = 8.2
    for i, (title, body, color) in enumerate(steps):
        h = 0.5 + 0.22 * body.count("\n") + 0.3
        box(ax, 7.4, y - h, 6.2, h, f"{i + 1}. {title}", body, color)
        if i < len(steps) - 1:
            arrow(ax, (10.5, y - h - 0.02), (10.5, y - h - 0.28))
        y -= h + 0.3
    fig.savefig(OUT, format="svg", bbox_inches="tight")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
