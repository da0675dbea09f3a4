"""``kenaz.scipy``: differentiable counterparts of parts of SciPy.

Needs SciPy (``pip install kenaz[scipy]``); plain ``kenaz`` does not import it.
Submodules: ``special``, ``stats``, ``linalg``, ``optimize``, ``signal``, ``integrate``.
"""

from __future__ import annotations

try:
    import scipy as _scipy  # noqa: F401
except ImportError:  # pragma: no cover - exercised only without SciPy
    raise ImportError(
        "kenaz.scipy needs SciPy; install it with `pip install kenaz[scipy]`"
    ) from None

from . import integrate, linalg, optimize, signal, special, stats  # noqa: E402

__all__ = ["integrate", "linalg", "optimize", "signal", "special", "stats"]
