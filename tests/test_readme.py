"""The README's tour runs as written (so a newcomer's first copy-paste works)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

README = Path(__file__).resolve().parents[1] / "README.md"


def test_the_tour_runs_and_computes_what_its_comments_say(capsys):
    tour = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)[0]
    namespace: dict = {}
    exec(compile(tour, str(README), "exec"), namespace)
    assert float(namespace["kenaz"].grad(namespace["f"])(5.0)) == 13.0
    np.testing.assert_allclose(namespace["d4"](0.5), np.sin(0.5), rtol=1e-12)
    assert namespace["per_example"][0].shape == (256, 3, 1)
    assert "[vjp: backward]" in capsys.readouterr().out
