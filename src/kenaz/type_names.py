"""How every tool that prints programs writes a tensor's type: ``float64[3,2]``.

``debug``, ``graph`` and ``make_program`` (with its ``Tracer`` reprs and
errors) all print types through :func:`type_name`, so one op reads the same in
each. The dtype is NumPy's own name (``float64``, ``int32``, ``bool``,
``complex128``): exact for every dtype and what ``np.dtype(...)`` reads back,
where a private abbreviation (``f64``) needs a table and loses string and
datetime dtypes. The shape has no spaces, so a type is one token in a program
line (``v2:float64[1,2] = matmul(v1, v0)``) and fits a graph node's label.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["type_name"]


def type_name(dtype: Any, shape: tuple[int, ...]) -> str:
    """A tensor's type as the printers write it: NumPy's dtype name, then the shape.

    Parameters
    ----------
    dtype : dtype-like
        The element type (anything ``numpy.dtype`` accepts).
    shape : tuple of int
        The shape; ``()`` for a scalar.

    Returns
    -------
    str
        ``"float64[3,2]"``; a scalar is ``"float64[]"``.

    Examples
    --------
    >>> type_name(np.float32, (2, 3))
    'float32[2,3]'
    >>> type_name("bool", ())
    'bool[]'
    """
    return f"{np.dtype(dtype)}[{','.join(str(n) for n in shape)}]"
