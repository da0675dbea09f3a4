"""``Tensor.dtype`` reads NumPy's dtype in C until kenaz meets a library with dtypes of its
own (array-api-strict's), and maps them from then on, whichever way they arrive.

Each case runs in a fresh process: the switch is process-wide and one-way.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

pytest.importorskip("array_api_strict")

SETUP = "import numpy as np, kenaz, kenaz.numpy as knp, array_api_strict as xs\n"

# How a strict array can first reach kenaz, each followed by a dtype read that must be NumPy's.
FIRST_CONTACT = {
    "Tensor()": "t = kenaz.Tensor(xs.asarray([1.0, 2.0]))",
    "a unary op on a raw array": "t = knp.sin(xs.asarray([1.0, 2.0]))",
    "a binary op on a raw array": "t = knp.add(xs.asarray([1.0, 2.0]), 1.0)",
    "a reduction on a raw array": "t = knp.sum(xs.asarray([1.0, 2.0]))",
    "default_backend": "with kenaz.default_backend(xs):\n    t = knp.zeros(3)",
    "grad": "t = kenaz.grad(lambda x: knp.sum(x * x))(xs.asarray([1.0, 2.0]))",
}


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", SETUP + code], capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize("contact", sorted(FIRST_CONTACT))
def test_strict_dtypes_map_to_numpy_from_the_first_contact(contact):
    code = FIRST_CONTACT[contact] + (
        "\nassert isinstance(t.dtype, np.dtype) and t.dtype == np.float64, repr(t.dtype)"
        "\nassert type(t._value).__module__.startswith('array_api_strict'), type(t._value)"
    )
    result = _run(code)
    assert result.returncode == 0, result.stderr[-2000:]


def test_numpy_alone_keeps_the_c_getter():
    # Importing a strict library, or using NumPy, CuPy-like or Dask dtypes, changes nothing.
    result = _run(
        "from operator import attrgetter\n"
        "t = kenaz.grad(lambda x: knp.sum(knp.sin(x)))(np.ones(3))\n"
        "assert type(kenaz.Tensor.dtype.fget) is attrgetter, kenaz.Tensor.dtype.fget\n"
        "kenaz.Tensor(xs.asarray([1.0]))\n"
        "assert type(kenaz.Tensor.dtype.fget) is not attrgetter\n"
    )
    assert result.returncode == 0, result.stderr[-2000:]
