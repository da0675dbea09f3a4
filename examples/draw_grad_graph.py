"""Draw the graph of ``grad`` of a 2-layer MLP's loss (docs/grad_mlp_graph.png).

Run: ``.venv/bin/python examples/draw_grad_graph.py [output.png]``
(needs Graphviz's ``dot`` program; without it, the DOT text is printed).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

import kenaz
import kenaz.numpy as knp


def mlp_loss(params, x, y):
    w1, b1, w2, b2 = params
    hidden = knp.tanh(x @ w1 + b1)
    prediction = hidden @ w2 + b2
    return knp.mean((prediction - y) ** 2)


def main() -> None:
    rng = np.random.default_rng(0)
    params = (
        knp.array(rng.normal(size=(3, 8))),
        knp.zeros(8),
        knp.array(rng.normal(size=(8, 1))),
        knp.zeros(1),
    )
    x, y = knp.array(rng.normal(size=(16, 3))), knp.array(rng.normal(size=(16, 1)))
    picture = kenaz.graph(kenaz.grad(mlp_loss), name="grad(mlp_loss)")(params, x, y)
    print(picture)
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("docs/grad_mlp_graph.png")
    try:
        picture.render(target)
        print(f"wrote {target}")
    except RuntimeError as error:  # no Graphviz: show the text instead
        print(error)
        print(picture.to_dot())


if __name__ == "__main__":
    main()
