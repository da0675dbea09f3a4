"""``kenaz.numpy.random``: NumPy's random functions, returning constant Tensors.

Every function of ``numpy.random`` is available under its name; array results
come back as Tensors (constants: nothing is differentiated through sampling),
and Tensor arguments are read as their values. Under ``kenaz.default_backend(xp)``
the draws (NumPy's: the Array API standard has no random functions) are moved to
``xp``. ``shuffle`` works in place in NumPy, which Tensors do not allow: use
``permutation``.

Examples
--------
>>> import kenaz.numpy as knp
>>> knp.random.seed(0)
>>> knp.random.normal(size=2).shape
(2,)
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as _np

from ..backend import asarray_on, current_default
from ..mutation import in_place_target as _in_place_target
from ..tensor import Tensor


def _plain(x: Any) -> Any:
    return _np.asarray(x) if isinstance(x, Tensor) else x


def _constant(result: Any) -> Any:
    if isinstance(result, _np.ndarray):
        xp = current_default()  # the standard has no random functions: NumPy's draws, moved
        return Tensor(result if xp is _np else asarray_on(xp, result))
    if isinstance(result, tuple):
        return tuple(_constant(r) for r in result)
    return result


def _wrap(function: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(function)
    def call(*args: Any, **kwargs: Any) -> Any:
        args = tuple(_plain(a) for a in args)
        kwargs = {k: _plain(v) for k, v in kwargs.items()}
        return _constant(function(*args, **kwargs))

    return call


def shuffle(x: Any) -> None:
    """Shuffle ``x`` in place along its first axis (a Tensor no transformation tracks, or
    an array), as NumPy's; under a transformation use ``x = permutation(x)``."""
    if isinstance(x, Tensor):
        _np.random.shuffle(_in_place_target(x, "random.shuffle"))
        return
    _np.random.shuffle(x)


def __getattr__(name: str) -> Any:
    found = getattr(_np.random, name)
    if isinstance(found, type) or not callable(found):
        return found  # Generator, RandomState, BitGenerator classes, ...
    return _wrap(found)
