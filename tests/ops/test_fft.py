"""check_op for the Fourier-transform primitives of kenaz.ops.fft."""

from __future__ import annotations

import numpy as np

from kenaz.ops import fft

from .cases import OpCase, make_check_op_test

_rng = np.random.default_rng(8)
_real = _rng.uniform(-1, 1, size=(3, 4))
_complex = _rng.uniform(-1, 1, size=(3, 4)) + 1j * _rng.uniform(-1, 1, size=(3, 4))
_half = _rng.uniform(-1, 1, size=(3, 3)) + 1j * _rng.uniform(-1, 1, size=(3, 3))

CASES = [
    OpCase("fftn", fft.fftn, (_complex,), {"axes": (1,), "norm": "backward", "inverse": False}),
    OpCase("fftn-real", fft.fftn, (_real,), {"axes": (0, 1), "norm": "ortho", "inverse": False}),
    OpCase("ifftn", fft.fftn, (_complex,), {"axes": (0,), "norm": "forward", "inverse": True}),
    OpCase("rfftn", fft.rfftn, (_real,), {"axes": (0, 1), "norm": "backward"}),
    OpCase("irfftn-even", fft.irfftn, (_half,), dict(axes=(1,), norm="backward", lengths=(4,))),
    OpCase("irfftn-odd", fft.irfftn, (_half,), dict(axes=(0, 1), norm="ortho", lengths=(3, 5))),
]

test_check_op = make_check_op_test(CASES)
