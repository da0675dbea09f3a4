"""The sweep's machinery: every floating-point argument of every public function.

For each function (``samples.calls``) and each of its floating-point
arguments, positional or keyword, the directional derivative of a fixed
random projection of the output along a fixed random direction is computed
three ways (jvp, grad, central finite differences in float64) and must
agree, or the call must refuse (a kenaz error: never a silent zero).
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from _sweep_samples import calls

import kenaz
import kenaz.numpy as knp
from kenaz import tree
from kenaz.convert import TrackedConversionError
from kenaz.errors import KenazError

MODULES = {
    "numpy": "kenaz.numpy",
    "numpy.linalg": "kenaz.numpy.linalg",
    "numpy.fft": "kenaz.numpy.fft",
    "scipy.special": "kenaz.scipy.special",
    "scipy.linalg": "kenaz.scipy.linalg",
    "scipy.signal": "kenaz.scipy.signal",
    "nn": "kenaz.nn",
    **{f"scipy.stats.{d}": f"kenaz.scipy.stats.{d}" for d in (
        "beta", "chi2", "dirichlet", "gamma", "multivariate_normal", "norm", "poisson", "t")},
}  # fmt: skip

# (function, argument) pairs whose argument is legitimately piecewise constant: the
# derivative with respect to it is zero (or refused) by definition. Keep it short.
PIECEWISE_CONSTANT: dict[tuple[str, str], str] = {
    ("numpy.stop_gradient", "#0"): "zero derivative by definition (its purpose)",
    ("scipy.special.gammasgn", "x"): "the sign of gamma: constant between its poles",
}

# Functions returning (output, state) whose state is not differentiated by design.
FIRST_OUTPUT_ONLY = {"nn.batch_norm": "running statistics are buffers, as in PyTorch"}

# Refusals a function may give (a kenaz error naming what cannot be differentiated).
REFUSALS = (TrackedConversionError, NotImplementedError, KenazError)


def public_functions() -> Iterator[tuple[str, Callable]]:
    """``("numpy.sin", kenaz.numpy.sin)``, ... for every public callable of the namespaces."""
    for prefix, module_name in MODULES.items():
        module = importlib.import_module(module_name)
        for name in sorted(dir(module)):
            value = getattr(module, name)
            if name.startswith("_") or inspect.ismodule(value) or isinstance(value, type):
                continue
            if callable(value):
                yield f"{prefix}.{name}", value


@dataclass(frozen=True)
class Pair:
    """One (function, argument) pair of the sweep, with the call it is taken from."""

    function: str
    argument: str  # a parameter name, or "#i" for the i-th positional argument
    call: int  # index into calls(function)
    path: tuple = ()  # (position or keyword, then list index or dict key)

    @property
    def id(self) -> str:
        return f"{self.function}:{self.argument}:{self.call}"


def _is_float(value: Any) -> bool:
    if isinstance(value, float):
        return True
    return isinstance(value, np.ndarray) and value.dtype.kind == "f"


def _parameter_names(f: Callable, count: int) -> list[str]:
    try:
        params = list(inspect.signature(f).parameters.values())
    except (TypeError, ValueError):
        return [f"#{i}" for i in range(count)]
    names = []
    for i in range(count):
        if i < len(params) and params[i].kind in (
            params[i].POSITIONAL_ONLY,
            params[i].POSITIONAL_OR_KEYWORD,
        ):
            names.append(params[i].name)
        else:
            names.append(f"#{i}")
    return names


def _float_paths(value: Any, path: tuple) -> Iterator[tuple]:
    """Paths to the float leaves of an argument: itself, or items of a list/tuple/dict."""
    if _is_float(value):
        yield path
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            if _is_float(item):
                yield (*path, i)
    elif isinstance(value, dict):
        for key, item in value.items():
            if _is_float(item):
                yield (*path, key)


def _label(names: list[str], path: tuple) -> str:
    head = names[path[0]] if isinstance(path[0], int) else path[0]
    return head + "".join(f"[{p!r}]" for p in path[1:])


def pairs_of(name: str, f: Callable) -> list[Pair]:
    """The (function, argument) pairs of ``f``: one per float argument of each sample call."""
    found = []
    for index, (args, kwargs) in enumerate(calls(name, f)):
        names = _parameter_names(f, len(args))
        for position, value in enumerate(args):
            for path in _float_paths(value, (position,)):
                found.append(Pair(name, _label(names, path), index, path))
        for key, value in kwargs.items():
            for path in _float_paths(value, (key,)):
                found.append(Pair(name, _label(names, path), index, path))
    return found


def _replaced(container: Any, path: tuple, v: Any) -> Any:
    if not path:
        return v
    if isinstance(container, dict):
        return {**container, path[0]: _replaced(container[path[0]], path[1:], v)}
    items = list(container)
    items[path[0]] = _replaced(items[path[0]], path[1:], v)
    return type(container)(items) if isinstance(container, tuple) else items


def _at(container: Any, path: tuple) -> Any:
    for p in path:
        container = container[p]
    return container


def all_pairs() -> list[Pair]:
    return [p for name, f in public_functions() for p in pairs_of(name, f)]


def function_named(name: str) -> Callable:
    prefix, _, short = name.rpartition(".")
    return getattr(importlib.import_module(MODULES[prefix]), short)


def scalar_function(pair: Pair) -> tuple[Callable[[Any], Any], np.ndarray]:
    """``s(v)``: the function's output projected to a real scalar, as a function of the
    swept argument ``v`` (the other arguments fixed); and the point ``v``."""
    f = function_named(pair.function)
    args, kwargs = calls(pair.function, f)[pair.call]
    head, rest = pair.path[0], pair.path[1:]
    if isinstance(head, str):
        point = _at(kwargs[head], rest)

        def call(v: Any) -> Any:
            return f(*args, **{**kwargs, head: _replaced(kwargs[head], rest, v)})
    else:
        point = _at(args[head], rest)

        def call(v: Any) -> Any:
            return f(*_replaced(args, (head, *rest), v), **kwargs)

    weights: dict[int, np.ndarray] = {}

    def s(v: Any) -> Any:
        total = knp.asarray(0.0)
        out = call(v)
        if pair.function in FIRST_OUTPUT_ONLY:
            out = out[0]
        for i, leaf in enumerate(tree.leaves(out)):
            leaf = knp.asarray(leaf)
            if leaf.dtype.kind not in "fc":
                continue
            if i not in weights:
                weights[i] = np.random.default_rng(i + 7).uniform(0.5, 1.5, leaf.shape)
            w = weights[i]
            total = total + knp.sum(knp.real(leaf) * w) + 0.7 * knp.sum(knp.imag(leaf) * w)
        return total

    return s, np.asarray(point, dtype=np.float64)


def direction(point: np.ndarray) -> np.ndarray:
    """A random direction; symmetric for a symmetric matrix (covariances: only the
    symmetric part of their derivative is defined)."""
    u = np.random.default_rng(3).uniform(-1.0, 1.0, point.shape)
    if point.ndim == 2 and point.shape[0] == point.shape[1] and np.allclose(point, point.T):
        u = (u + u.T) / 2
    return u


def finite_difference(s: Callable, point: np.ndarray, u: np.ndarray, eps: float = 1e-6) -> float:
    up = float(s(knp.asarray(point + eps * u)))
    down = float(s(knp.asarray(point - eps * u)))
    return (up - down) / (2 * eps)


def derivatives(s: Callable, point: np.ndarray, u: np.ndarray) -> tuple[float, float]:
    """The directional derivative of ``s`` at ``point`` along ``u``: by jvp, and by grad."""
    by_jvp = float(kenaz.jvp(s, (knp.asarray(point),), (knp.asarray(u),))[1])
    gradient = np.asarray(kenaz.grad(s)(knp.asarray(point)))
    return by_jvp, float(np.sum(gradient * u))


def agree(actual: float, expected: float, scale: float) -> bool:
    return abs(actual - expected) <= 1e-5 * max(1.0, abs(expected), scale)
