"""Compare the parameters of kenaz.numpy's and kenaz.scipy's functions with NumPy's and SciPy's.

For every public function of a kenaz namespace that its NumPy or SciPy counterpart
also has (and that is kenaz's own: not NumPy's object passed through), each
parameter of the reference's ``inspect.signature`` is looked up in kenaz's:

- a positional-only parameter (a ufunc's ``x1``) needs a positional slot at its
  position (a parameter or ``*args``), whatever its name;
- any other parameter needs a parameter of the same name: ``**kwargs`` does not
  count (kenaz's functions with ``**kwargs`` refuse what they do not know), and
  a primitive (an ``Op``, called as ``op(*args, **params)``) takes keywords only
  through its wrapper.

A parameter that is missing must be listed in :data:`MISSING` with the reason.
``tests/numpy_api/test_signatures.py`` fails on any other missing parameter and on
any listed one that is no longer missing; ``scripts/numpy_coverage.py`` prints the
counts and the list into docs/numpy_coverage.md.
"""

from __future__ import annotations

import fnmatch
import inspect
import warnings
from typing import Any, NamedTuple

# Why a parameter is missing; keys are "namespace.function" patterns (fnmatch) and the
# parameters they cover. Reasons say what kenaz does instead.
MISSING: list[tuple[str, tuple[str, ...], str]] = [
    ("numpy.broadcast_*", ("subok",),
     "not yet: subok= (a Tensor has no subclasses to keep; the result is a Tensor)"),
    ("scipy.optimize.minimize", ("jac", "hess", "hessp"),
     "kenaz differentiates `fun` itself (`hessian=` chooses the second derivatives); "
     "user-supplied derivatives would bypass the ones it computes"),
]  # fmt: skip


class Result(NamedTuple):
    """What the comparison found: parameters compared, and the missing ones."""

    compared: int
    functions: int
    missing: list[tuple[str, str]]  # (namespace.function, parameter)


def _pairs() -> list[tuple[str, Any, Any]]:
    """(title, reference module, kenaz module) for every namespace compared."""
    import numpy as np
    import scipy.integrate
    import scipy.linalg
    import scipy.optimize
    import scipy.signal
    import scipy.special

    import kenaz.numpy as knp
    import kenaz.scipy as ks

    return [
        ("numpy", np, knp),
        ("numpy.linalg", np.linalg, knp.linalg),
        ("numpy.fft", np.fft, knp.fft),
        ("numpy.random", np.random, knp.random),
        ("scipy.special", scipy.special, ks.special),
        ("scipy.linalg", scipy.linalg, ks.linalg),
        ("scipy.optimize", scipy.optimize, ks.optimize),
        ("scipy.signal", scipy.signal, ks.signal),
        ("scipy.integrate", scipy.integrate, ks.integrate),
    ]


def _parameters(function: Any) -> list[inspect.Parameter] | None:
    try:
        return list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):  # a builtin without a signature
        return None


def _accepts(ours: list[inspect.Parameter], position: int, theirs: inspect.Parameter) -> bool:
    kinds = inspect.Parameter
    if theirs.kind is kinds.POSITIONAL_ONLY:
        positional = [p for p in ours if p.kind in (kinds.POSITIONAL_ONLY,
                                                    kinds.POSITIONAL_OR_KEYWORD)]  # fmt: skip
        return position < len(positional) or any(p.kind is kinds.VAR_POSITIONAL for p in ours)
    return any(p.name == theirs.name and p.kind is not kinds.POSITIONAL_ONLY for p in ours)


def _is_ours(value: Any, reference: Any) -> bool:
    from kenaz import Op

    if value is reference or not callable(value) or inspect.isclass(value):
        return False
    if inspect.ismodule(value) or inspect.isclass(reference) or not callable(reference):
        return False
    marker = getattr(value, "__kenaz_numpy__", None)  # NumPy's own, on values, pass-through
    return marker is None or isinstance(value, Op)


def _functions() -> list[tuple[str, Any, Any]]:
    """(qualified name, ours, reference) for every function compared."""
    found = []
    for title, reference_module, kenaz_module in _pairs():
        for name in sorted(dir(kenaz_module)):
            if name.startswith("_"):
                continue
            with warnings.catch_warnings():  # deprecated aliases warn when touched
                warnings.simplefilter("ignore")
                ours = getattr(kenaz_module, name, None)
                theirs = getattr(reference_module, name, None)
            if theirs is not None and _is_ours(ours, theirs):
                found.append((f"{title}.{name}", ours, theirs))
    found += _distributions()
    return found


def _distributions() -> list[tuple[str, Any, Any]]:
    """scipy.stats: each method kenaz has, against SciPy's (whose methods take ``*args``:
    the reference parameters are then ``x``, the distribution's shapes, ``loc``, ``scale``)."""
    import scipy.stats

    import kenaz.scipy.stats as kst

    found = []
    for name in sorted(dir(kst)):
        module = getattr(kst, name)
        theirs = getattr(scipy.stats, name, None)
        if name.startswith("_") or not inspect.ismodule(module) or theirs is None:
            continue
        for method in getattr(module, "__all__", []):
            reference = getattr(theirs, method)
            parameters = _parameters(reference)
            if parameters and any(p.kind is p.VAR_POSITIONAL for p in parameters):
                discrete = isinstance(theirs, scipy.stats.rv_discrete)
                shapes = [s.strip() for s in (theirs.shapes or "").split(",") if s.strip()]
                first = "q" if method in ("ppf", "isf") else "k" if discrete else "x"
                names = [first, *shapes, "loc"] + ([] if discrete else ["scale"])
                reference = _Reference(names)
            found.append((f"scipy.stats.{name}.{method}", getattr(module, method), reference))
    return found


class _Reference:
    """A signature made of named parameters (SciPy's distributions take ``*args``)."""

    def __init__(self, names: list[str]) -> None:
        kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
        self.__signature__ = inspect.Signature([inspect.Parameter(n, kind) for n in names])

    def __call__(self) -> None:  # pragma: no cover - a signature holder only
        raise NotImplementedError


def compare() -> Result:
    """Compare every function; the missing parameters, listed or not."""
    compared, functions, missing = 0, 0, []
    for qualified, ours, theirs in _functions():
        reference = _parameters(theirs)
        mine = _parameters(ours)
        if reference is None or mine is None:
            continue
        functions += 1
        for position, parameter in enumerate(reference):
            if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
                continue
            compared += 1
            if not _accepts(mine, position, parameter):
                missing.append((qualified, parameter.name))
    return Result(compared, functions, missing)


def reason(qualified: str, parameter: str) -> str | None:
    """The listed reason a parameter is missing, or None."""
    for pattern, parameters, why in MISSING:
        if fnmatch.fnmatchcase(qualified, pattern) and parameter in parameters:
            return why
    return None


def unlisted(result: Result) -> list[str]:
    """Missing parameters with no reason listed: the test's failures."""
    return [f"{q}({p})" for q, p in result.missing if reason(q, p) is None]


def stale(result: Result) -> list[str]:
    """Listed patterns that no missing parameter matches any more."""
    missing = set(result.missing)
    return [
        f"{pattern}{parameters}"
        for pattern, parameters, _ in MISSING
        if not any(fnmatch.fnmatchcase(q, pattern) and p in parameters for q, p in missing)
    ]


def render(result: Result) -> list[str]:
    """Markdown lines for docs/numpy_coverage.md: counts, then the missing ones by reason."""
    by_reason: dict[str, list[str]] = {}
    for qualified, parameter in result.missing:
        by_reason.setdefault(reason(qualified, parameter) or "NOT LISTED", []).append(
            f"`{qualified}({parameter})`"
        )
    lines = [
        "## Signatures",
        "",
        "`scripts/signatures.py` compares, with `inspect.signature`, the parameters of every",
        "function of `kenaz.numpy` (and its `linalg`, `fft`, `random`) and `kenaz.scipy`",
        "(`special`, `linalg`, `optimize`, `signal`, `integrate`, the `stats` distributions)",
        "with NumPy's and SciPy's (`tests/numpy_api/test_signatures.py` fails on a missing one",
        "not listed here with its reason).",
        "",
        f"**{result.compared}** parameters of **{result.functions}** functions compared; "
        f"**{len(result.missing)}** missing, each listed with its reason:",
    ]
    for why, names in by_reason.items():
        lines += ["", f"- {why} ({len(names)}): " + ", ".join(names)]
    return lines
