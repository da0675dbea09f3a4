"""The assembled ``kenaz.numpy`` namespace, for the modules it is assembled from.

A few composites call functions of the namespace they are part of (``fft``'s
shifts call ``roll``, ``linalg.cross`` calls ``cross``, the composed families
call ``asarray``, ``sort``, ``take_along_axis``...), and ``kenaz.numpy``
imports their modules while it is being assembled. Instead of importing their
own package inside functions (an import loop in the design), they read it
here: ``kenaz/numpy/__init__.py`` registers itself (:func:`register`) once it
is complete, and :func:`assembled` returns it. Nothing here imports kenaz.
"""

from __future__ import annotations

from types import ModuleType

__all__ = ["assembled", "register"]

_assembled: list[ModuleType] = []


def register(namespace: ModuleType) -> None:
    """Record ``namespace`` (``kenaz.numpy``, when its assembly is done).

    Parameters
    ----------
    namespace : module
        The assembled ``kenaz.numpy``.
    """
    _assembled[:] = [namespace]


def assembled() -> ModuleType:
    """``kenaz.numpy``, as registered; a composite calls this when it runs, not when it loads.

    Raises
    ------
    RuntimeError
        If called before ``kenaz.numpy`` has finished loading (a module-level use).
    """
    if not _assembled:
        raise RuntimeError(
            "kenaz.numpy: a composite read the namespace before kenaz.numpy finished "
            "loading; read it inside the function, when it runs"
        )
    return _assembled[0]
