"""How ``kenaz.numpy`` is assembled: its composites registered where they are defined,
and the assembled namespace, for the modules it is assembled from.

**Composites.** A function of the namespace that is neither a primitive nor a
primitive's front end is a *composite*: it may read an array argument through
NumPy (``np.shape(a)``, ``a * 2.0``) before converting it, which a list holding
tensors would not survive. Each is marked where it is defined, with
:func:`composite` (``@_composite``), which wraps it once with the retry for
such lists (``kenaz.convert.accepts_nested_lists``). Every module then binds
its finished functions, and ``kenaz/numpy/__init__.py`` imports them: each
name is written once, by one pass. Primitives and their front ends (``kenaz.ops``,
``_signatures``) stack their own list arguments and are not marked.

**The assembled namespace.** A few composites call functions of the namespace
they are part of (``fft``'s shifts call ``roll``, ``linalg.cross`` calls
``cross``, the composed families call ``asarray``, ``sort``,
``take_along_axis``...), and ``kenaz.numpy`` imports their modules while it is
being assembled. Instead of importing their own package inside functions (an
import loop in the design), they read it here: ``kenaz/numpy/__init__.py``
registers itself (:func:`register`) once it is complete, and :func:`assembled`
returns it.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any, TypeVar

from ..convert import accepts_nested_lists
from ._ufunc_keywords import with_ufunc_keywords

__all__ = ["assembled", "register", "composite", "composite_of"]

Function = TypeVar("Function", bound=Callable[..., Any])

_assembled: list[ModuleType] = []


def composite_of(namespace: str) -> Callable[[Function], Function]:
    """The :func:`composite` decorator of the namespace ``namespace`` (``"kenaz.numpy.fft"``),
    whose name a refused conversion's error gives the function."""

    def mark(f: Function) -> Function:
        marked = accepts_nested_lists(f, namespace)
        if namespace == "kenaz.numpy":  # a NumPy ufunc's name: its keywords (out=, where=...)
            marked = with_ufunc_keywords(marked, f.__name__)
        return marked  # type: ignore[no-any-return]

    return mark


composite = composite_of("kenaz.numpy")
"""Mark a composite of ``kenaz.numpy`` where it is defined: wrapped once with the retry
for lists of tensors (``kenaz.convert.accepts_nested_lists``)."""


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
