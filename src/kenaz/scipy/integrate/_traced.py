"""A solver's diagnostics under ``jit``: never a value frozen from the trace.

A solve traced by ``jit`` runs on the trace's values (the solve op has no
abstract rule), and the compiled program runs the solve op again at every
call. Its tensor result is recomputed then; anything else the solver reports
(``odeint``'s ``infodict``, ``solve_ivp``'s ``nfev``, ``quad``'s error
estimate, the steps an adaptive solver chose) is a Python value of the
trace, which a program would replay unchanged for new inputs: a stale value
(DESIGN.md, section 11). So while ``jit`` traces a solve whose inputs it
tracks (:func:`traced`):

- a value-dependent result the caller asked for (``full_output``, output
  times chosen by the solver, events) raises
  :class:`~kenaz.errors.ConcretizationError` at once, naming the fix, as
  JAX raises for a value a program cannot hold;
- one that is always returned (``quad``'s ``abserr``, ``solve_ivp``'s
  counts) is an :class:`Unavailable` that raises the same error when used,
  so that the tensors beside it still compile.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NoReturn

from ...compiler.program import Tracer
from ...errors import ConcretizationError
from ...vectorize import BatchedTensor

__all__ = ["traced", "refuse", "Unavailable"]


def traced(values: Iterable[Any]) -> bool:
    """Whether a value of ``values`` is being traced by ``jit`` (a tracer, or a ``vmap``
    view, ``grad`` or ``jvp`` tensor over one): a solve of them is a program's op."""
    for x in values:
        while type(x) is BatchedTensor:
            x = x._batched
        if isinstance(x, Tracer):
            return True
    return False


def refuse(who: str, what: str, fix: str) -> ConcretizationError:
    """The error for ``what`` (a value-dependent result of ``who``) asked for under ``jit``."""
    return ConcretizationError(
        f"kenaz.scipy.integrate.{who}: {what} is not available under jit: it depends on the "
        "input values, and the compiled program would replay the value of its trace for "
        f"new inputs. {fix}"
    )


class Unavailable:
    """A solver's value-dependent diagnostic, asked for while ``jit`` traced the solve.

    It has no value: using it (a number, a comparison, an index, arithmetic)
    raises :class:`~kenaz.errors.ConcretizationError` naming the fix;
    printing shows what it stands for. Two stand for the same thing when they
    name it alike (``jit``'s purity check compares them).
    """

    __slots__ = ("who", "what", "fix")

    def __init__(self, who: str, what: str, fix: str) -> None:
        self.who, self.what, self.fix = who, what, fix

    def _refuse(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise refuse(self.who, self.what, self.fix)

    __float__ = __int__ = __index__ = __complex__ = __bool__ = _refuse
    __array__ = __len__ = __iter__ = __getitem__ = __contains__ = _refuse
    __lt__ = __le__ = __gt__ = __ge__ = _refuse
    __neg__ = __pos__ = __abs__ = __round__ = _refuse
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _refuse
    __truediv__ = __rtruediv__ = __floordiv__ = __rfloordiv__ = __pow__ = __rpow__ = _refuse

    def __eq__(self, other: object) -> bool:
        if type(other) is Unavailable:
            return (self.who, self.what) == (other.who, other.what)
        self._refuse()

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash((Unavailable, self.who, self.what))

    def __repr__(self) -> str:
        return f"<{self.what} of {self.who}: not available under jit>"

    def __format__(self, spec: str) -> str:
        if spec:
            self._refuse()
        return repr(self)
