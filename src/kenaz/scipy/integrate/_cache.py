"""Traced right-hand sides kept between solves, never replayed stale.

Tracing ``func`` at every solve costs more than a small solve itself. A
solve whose ``func`` reads the same Python state as an earlier one, with
arguments of the same structure, shapes and dtypes, reuses that solve's
:class:`~._system.System` (its compiled code and the derived systems of its
derivatives). What ``func`` reads is *snapshotted*: its code, the values in
its closure, its defaults, the globals its code names (and, for a module or
class it names, the attributes its code names, through packages and
submodules: ``pkg.sub.RATE``), a bound method's instance, a partial's
arguments, recursively, with arrays and plain tensors by value; a function
it calls in another module is snapshotted the same way, with that module's
globals. So a changed closed-over value, global or attribute changes the key
and ``func`` is traced again. A name the code holds as a string constant
counts as named (``operator.attrgetter("rate")``). Code that reads state by
a name computed as it runs (``globals()``, ``getattr``, ``vars``, ``eval``)
gives no key: such a ``func`` is traced at every solve.

Nothing that a transformation tracks is ever part of a cached program: a
snapshot that meets a tracked tensor (or a ``vmap`` view) gives no key, and
a trace that captured one (a tensor read without being given) is not kept,
so every solve that closes over such a tensor traces ``func`` and lifts it
into a parameter (DESIGN.md, section 11). State a snapshot cannot see
(``numpy.random``, the clock, an object without a ``__dict__``) is caught as
``jit`` catches it: the second solve of a key traces again and compares the
two programs; if they differ, that key is traced at every solve from then on.
"""

from __future__ import annotations

import threading
import types
from collections import OrderedDict
from functools import partial
from typing import Any

import numpy as np

from ...tensor import Tensor

__all__ = ["snapshot", "lookup", "store", "VOLATILE"]

_LIBRARIES = ("kenaz", "numpy", "scipy", "builtins", "math", "functools", "operator", "jax")
_MAX_NODES = 2000
_MAX_ENTRIES = 64
_SMALL_ARRAY = 4096  # arrays up to this many entries are keyed by value


class _NoKey(Exception):
    """``func`` reads something that cannot (or must not) be snapshotted."""


def _library(obj: Any) -> bool:
    module = getattr(obj, "__module__", None) or getattr(obj, "__name__", "")
    return isinstance(module, str) and module.split(".")[0] in _LIBRARIES


# Names whose use reads state by a name known only when the code runs: a snapshot of the
# names the code holds cannot cover it (``globals()[name]``, ``getattr(module, name)``).
_DYNAMIC_READS = frozenset(
    {"globals", "vars", "locals", "eval", "exec", "getattr", "__getattribute__", "__dict__",
     "__import__", "import_module"}
)  # fmt: skip


def _code_names(code: types.CodeType) -> set[str]:
    """The names ``code`` (and the functions defined in it) reads: globals, attributes, and
    identifiers held as string constants (``attrgetter("rate")``, ``config["rate"]``)."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _code_names(const)
        elif isinstance(const, str) and const.isidentifier():
            names.add(const)
    return names


class _Snapshot:
    def __init__(self) -> None:
        self.nodes = 0
        self.seen: dict[int, int] = {}

    def of(self, obj: Any, names: set[str] | None = None) -> Any:
        self.nodes += 1
        if self.nodes > _MAX_NODES:
            raise _NoKey("too much state")
        kind = type(obj)
        if obj is None or kind in (bool, int, float, complex, str, bytes):
            return (kind, obj)
        if kind in (tuple, list):
            return (kind, tuple(self.of(x, names) for x in obj))
        if kind is dict:
            return (dict, tuple((self._hashable(k), self.of(v, names)) for k, v in obj.items()))
        if isinstance(obj, np.ndarray):
            if obj.size > _SMALL_ARRAY or obj.dtype.kind == "O":
                raise _NoKey("a large or object array")
            return ("array", obj.shape, obj.dtype.str, obj.tobytes())
        if isinstance(obj, np.generic):
            return ("scalar", obj.dtype.str, obj.tobytes())
        if isinstance(obj, Tensor):
            if type(obj) is not Tensor or obj._trace:
                raise _NoKey("a tensor a transformation tracks")
            return ("tensor", self.of(obj._value))
        if kind is types.ModuleType:
            if _library(obj) or not names:
                return ("module", obj.__name__)
            # A user's module: the attributes the code names (`config.scale`), and in turn
            # those of a submodule or class it holds (`pkg.sub.rate`, `config.Options.rate`).
            found = tuple(
                (n, self.of(getattr(obj, n), names)) for n in sorted(names) if hasattr(obj, n)
            )
            return ("module", obj.__name__, found)
        if kind is types.MethodType:
            return ("method", self.of(obj.__func__), self.of(obj.__self__))
        if kind is partial:
            return ("partial", self.of(obj.func), self.of(obj.args), self.of(obj.keywords))
        if kind is types.FunctionType:
            return self._function(obj)
        if isinstance(obj, type) and not _library(obj):  # a user's class: what the code names
            found = tuple(
                (n, self.of(getattr(obj, n), names)) for n in sorted(names or ()) if hasattr(obj, n)
            )
            return ("class", obj, found)
        if _library(type(obj)) or _library(obj):
            return ("static", self._hashable(obj))  # library classes, functions and objects
        state = getattr(obj, "__dict__", None)
        if state is None:
            raise _NoKey(f"a {kind.__name__} without __dict__")
        call = kind.__dict__.get("__call__")  # a callable object's own method
        caller = self.of(call) if isinstance(call, types.FunctionType) else None
        return ("object", kind, caller, self.of(state, names))

    def _function(self, fn: types.FunctionType) -> Any:
        if _library(fn):
            return ("static", fn)
        if id(fn) in self.seen:  # recursion
            return ("seen", self.seen[id(fn)])
        self.seen[id(fn)] = len(self.seen)
        code = fn.__code__
        names = _code_names(code)
        dynamic = names & _DYNAMIC_READS
        if dynamic:
            raise _NoKey(f"{fn.__qualname__} reads state by computed names ({min(dynamic)})")
        cells = tuple(self.of(c.cell_contents, names) for c in fn.__closure__ or ())
        defaults = self.of(fn.__defaults__, names), self.of(fn.__kwdefaults__, names)
        module = fn.__globals__
        read = tuple(
            (n, self.of(module[n], names)) for n in sorted(names) if n in module
        )  # the globals the code names (attribute names that are not globals are skipped)
        return ("function", code, cells, defaults, read)

    @staticmethod
    def _hashable(obj: Any) -> Any:
        try:
            hash(obj)
        except TypeError:
            raise _NoKey(f"an unhashable {type(obj).__name__}") from None
        return obj


def snapshot(func: Any, static: Any) -> Any:
    """A key for ``func`` and the non-tensor arguments ``static``, or ``None`` if either
    reads something that cannot (or must not) be snapshotted."""
    try:
        taker = _Snapshot()
        return taker.of(func), taker.of(static)
    except (_NoKey, RecursionError, AttributeError, ValueError):
        return None


VOLATILE: Any = object()  # a key whose two traces differed: traced at every solve

_cache: OrderedDict[Any, Any] = OrderedDict()
_lock = threading.Lock()


def lookup(key: Any) -> Any:
    """The entry stored under ``key`` (or :data:`VOLATILE`, or ``None``)."""
    with _lock:
        found = _cache.get(key)
        if found is not None:
            _cache.move_to_end(key)
        return found


def store(key: Any, entry: Any) -> None:
    """Keep ``entry`` under ``key`` (the least recently used entries go first)."""
    with _lock:
        _cache[key] = entry
        _cache.move_to_end(key)
        while len(_cache) > _MAX_ENTRIES:
            _cache.popitem(last=False)
