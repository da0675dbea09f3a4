"""``jit(f)``: trace once per signature, then run one compiled NumPy function.

The first call with a given *signature* (the structure of the arguments, the
shape and dtype of each array, the Python type of each number, the values of
the static arguments) traces ``f`` into a :class:`~kenaz.compiler.program.Program`,
optimizes it (:mod:`kenaz.compiler.passes`) and compiles it into one generated
Python function on NumPy values (:mod:`kenaz.compiler.codegen`). Later calls with that
signature look the function up, run it, and wrap its results as tensors: no
Tensor, handler or tape in between.

Under a transformation (``grad``, ``vmap``, ``jvp``, ``debug``...), the
jitted function is one call op, ``jit[f]``, whose rules are derived from its
program (its jvp, vjp and batched programs, each traced, compiled and cached
per signature): see :mod:`kenaz.compiler.staged`.

Tracing semantics are JAX's; see :mod:`kenaz.compiler.program`: a concrete value of a
traced input cannot be read while tracing (make it static instead), Python
side effects run only while tracing, and closed-over arrays are constants.
"""

from __future__ import annotations

import functools
import itertools
import warnings
from _thread import RLock
from collections.abc import Callable, Sequence
from types import FunctionType
from typing import Any, Generic, NamedTuple, ParamSpec, TypeVar, overload

import numpy as np

from .. import tree
from ..backend import NUMPY_TYPES, is_backend_array
from ..effects import installed_stack
from ..tensor import Tensor, _make, _new
from .program import (
    Const,
    Program,
    Var,
    dynamic_arguments,
    is_traceable,
    static_argument_names,
    static_arguments,
    trace,
)
from .purity import CheckingTracer, first_difference
from .staged import Staged

P = ParamSpec("P")  # the function's parameters: jit keeps its signature
R = TypeVar("R")

__all__ = ["jit", "Jitted", "CacheInfo"]


class CacheInfo(NamedTuple):
    """``traces``: signatures traced; ``hits``: calls that reused one; ``size``: entries;
    ``checks``: purity checks run (a second trace on the second call of a signature)."""

    traces: int
    hits: int
    size: int
    checks: int = 0


class Jitted(Generic[P, R]):
    """A function compiled per signature; see :func:`jit`. Typed as the function it
    compiles: its parameters, its result."""

    def __init__(
        self,
        fun: Callable,
        static_argnums: Sequence[int],
        static_argnames: Sequence[str],
        optimize: bool,
        check_purity: bool = True,
        fuse: bool | None = None,
    ) -> None:
        self._fields(fun, static_argnums, static_argnames, optimize, check_purity, fuse)
        # `functools.update_wrapper(self, fun)`: for a plain function (nothing in its __dict__
        # to copy but the `__wrapped__` of a function that wraps another, as a vmap, grad or
        # jacrev of one does: update_wrapper sets it to `fun` after copying it) its names are
        # stored here after the fields, which then stay in the object's compact layout (the
        # general order cost a third of a small trace+compile).
        if type(fun) is FunctionType and _WRAPPER_NAMES and _plain_dict(fun.__dict__):
            self.__module__ = fun.__module__
            self.__name__ = fun.__name__
            self.__qualname__ = fun.__qualname__
            self.__doc__ = fun.__doc__
            self.__annotations__ = fun.__annotations__
            self.__wrapped__ = fun
        else:
            functools.update_wrapper(self, fun)
            self.__name__ = getattr(fun, "__name__", type(fun).__name__)
            # (the function's __dict__ may have held names of these fields: a jitted function's)
            self._fields(fun, static_argnums, static_argnames, optimize, check_purity, fuse)

    def _fields(
        self,
        fun: Callable,
        static_argnums: Sequence[int],
        static_argnames: Sequence[str],
        optimize: bool,
        check_purity: bool,
        fuse: bool | None,
    ) -> None:
        self.fun = fun
        self.static_argnums = tuple(static_argnums)
        self.static_argnames = tuple(static_argnames)
        self.optimize = optimize
        self.check_purity = check_purity
        self.fuse = fuse
        self.impure: str | None = None  # why the function runs eagerly, once found impure
        self._checks = 0
        self._cache: dict[Any, _Entry] = {}
        # Re-entrant: a traced function may call itself. (`_thread.RLock`, which
        # `threading.RLock` returns, without that function's call.)
        self._lock = RLock()
        self._traces = 0
        self._hits = itertools.count()  # `next` on it is atomic: exact from many threads
        # The last plain call's (signature, entry): see `_plain_signature`. Only a checked
        # entry goes here, so the purity check still runs on the slow path.
        self._last: tuple[list, _Entry] | None = None
        self._static = bool(self.static_argnums or self.static_argnames)

    # -- the call ---------------------------------------------------------------------------
    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        if self.impure is not None:
            return self.fun(*args, **kwargs)
        last = self._last
        if last is not None and not installed_stack():
            # The fast path: the same plain signature as the last call, told by one pass
            # over the arguments and one list comparison (no optree, no key to hash).
            signature: list = []
            values: list = []
            if (
                _plain_signature(args, signature, values)
                if not kwargs and not self._static
                else self._call_signature(args, kwargs, signature, values)
            ) and signature == last[0]:
                next(self._hits)
                return last[1].run(values)
        key, static, leaves, in_tree, other = self._key(args, kwargs)
        # (An empty cache, a new jitted function's, is not asked: hashing the key costs.)
        entry = self._cache.get(key) if self._cache else None
        if entry is None:
            entry = self._trace(key, args, kwargs, static, (leaves, in_tree), other)
        else:
            next(self._hits)
            if not entry.checked:
                entry, values = self._check(entry, args, kwargs, static)
                if entry is None:  # impure, found by another thread meanwhile
                    return self.fun(*args, **kwargs)
                if values is not None:  # the check's trace computed this call's results
                    return entry.result([_make(v) for v in values])
            elif not installed_stack():
                signature, plain = [], []
                if self._call_signature(args, kwargs, signature, plain):
                    self._last = (signature, entry)
                    return entry.run(plain)
        outs = entry.staged([x for x in leaves if is_traceable(x)])
        return entry.result(outs)

    def _key(self, args: tuple, kwargs: dict) -> tuple[Any, dict | None, list, Any, bool]:
        """A call's key in the cache of traces; its static arguments (``None`` if none); its
        dynamic leaves and their structure; whether a leaf is another library's array."""
        if self._static:
            static = static_arguments(args, kwargs, self.static_argnums, self.static_argnames)
            leaves, in_tree = tree.flatten(dynamic_arguments(args, kwargs, static))
            static = static or None
        else:
            static = None
            leaves, in_tree = tree.flatten((args, kwargs))
        keys = []
        other = False
        for x in leaves:  # `_leaf_key`, its common case inlined
            if type(x) is Tensor and type(x._value) is np.ndarray:
                value = x._value
                keys.append((value.shape, value.dtype))
            else:
                found = _leaf_key(x)
                if type(found) is tuple and found[:1] == ("backend",):
                    other = True
                keys.append(found)
        return (in_tree, _static_key(static), tuple(keys)), static, leaves, in_tree, other

    def _call_signature(self, args: tuple, kwargs: dict, signature: list, values: list) -> bool:
        """:func:`_plain_signature` of a whole call: the positional arguments, then the
        keyword ones (by sorted name, as ``tree.flatten`` orders a dict's leaves), each
        static argument as its type and value (no value to pass: the program has it)."""
        if self.static_argnums:
            count = len(args)
            static = {i + count if i < 0 else i for i in self.static_argnums}
            for i, a in enumerate(args):
                if i in static:
                    signature += (_STATIC, type(a), a)
                elif not _plain_signature((a,), signature, values):
                    return False
        elif not _plain_signature(args, signature, values):
            return False
        if kwargs:
            names = sorted(kwargs)
            signature += (_KEYWORDS, tuple(names))
            for name in names:
                value = kwargs[name]
                if name in self.static_argnames:
                    signature += (_STATIC, type(value), value)
                elif not _plain_signature((value,), signature, values):
                    return False
        return True

    def _check(
        self, entry: _Entry, args: tuple, kwargs: dict, static: dict | None
    ) -> tuple[_Entry | None, list[Any] | None]:
        """The second call of a signature: trace again and compare the programs.

        Returns the entry to run this call with: the cached one if the programs are the
        same; if not, one for the new program (so that this call computes what the
        function computes now, with the values it drew during this trace), after which
        the function runs eagerly. ``None`` if it was found impure meanwhile. Second:
        this call's tensor results, when the trace computed them and no transformation
        needs to see the call (else ``None``: run the entry).
        """
        with self._lock:
            if self.impure is not None:
                return None, None
            if entry.checked:
                return entry, None
            tracing = CheckingTracer(self.__name__)
            fun = tracing.watching(self.fun)
            program = trace(fun, args, kwargs, static, self.__name__, tracing)
            self._checks += 1
            difference = first_difference(entry.program, program, tracing.where)
            entry.checked = True
            if difference is None:
                entry.program = None  # no longer needed: free its constants
                if installed_stack() or program.captured or not tracing.computed:
                    # (a trace that ran no op has no value at hand: the compiled program
                    # computes the results faster than the trace's own ops, one by one)
                    return entry, None
                return entry, tracing.results()
            self.impure = difference
            self._last = None
        warnings.warn(
            f"kenaz.jit({self.__name__}): the function is not pure: traced again at its "
            f"second call, {difference}. Compiling it would freeze that value, so "
            f"{self.__name__} runs eagerly from now on (same results, no compilation). Pass "
            "what changes as an argument (e.g. a numpy.random.Generator's draws) to compile "
            "it, or jit(f, check_purity=False) to freeze the first value on purpose.",
            RuntimeWarning,
            stacklevel=3,
        )
        return _Entry(program, self.optimize, self.fuse, entry.staged.neutral), None

    def _trace(
        self,
        key: Any,
        args: tuple,
        kwargs: dict,
        static: dict | None,
        flat: tuple[list, Any],
        other: bool,
    ) -> _Entry:
        """Trace a new signature (``flat``: its dynamic leaves and their structure; ``other``:
        some are another library's arrays)."""
        with self._lock:
            entry = self._cache.get(key) if self._cache else None
            if entry is not None:  # another thread traced it meanwhile: a hit after all
                next(self._hits)
                return entry
            program = trace(self.fun, args, kwargs, static, self.__name__, flat=flat)
            entry = _Entry(program, self.optimize, self.fuse, other)
            if not self.check_purity:
                entry.checked, entry.program = True, None
            self._traces += 1
            self._cache[key] = entry
            return entry

    # -- inspection ---------------------------------------------------------------------------
    def program(self, *args: Any, **kwargs: Any) -> Program:
        """The optimized program that calls with these arguments run (traced if new)."""
        staged = self._entry(args, kwargs).staged
        staged.compile()
        return staged.optimized  # type: ignore[return-value]

    def source(self, *args: Any, **kwargs: Any) -> str:
        """The generated Python source that calls with these arguments run."""
        return self._entry(args, kwargs).staged.source()

    def _entry(self, args: tuple, kwargs: dict) -> _Entry:
        key, static, leaves, in_tree, other = self._key(args, kwargs)
        found = self._cache.get(key) if self._cache else None
        return found or self._trace(key, args, kwargs, static, (leaves, in_tree), other)

    def cache_info(self) -> CacheInfo:
        """How many signatures were traced, how many calls reused one, how many are cached."""
        return CacheInfo(
            self._traces, self._hits.__reduce__()[1][0], len(self._cache), self._checks
        )

    def clear_cache(self) -> None:
        """Forget every traced signature (the next call traces again)."""
        with self._lock:
            self._cache.clear()
            self._last = None

    def __repr__(self) -> str:
        return f"<kenaz.jit of {self.__name__}>"

    def __get__(self, instance: Any, owner: Any = None) -> Any:  # works as a method
        return self if instance is None else functools.partial(self, instance)


class _Entry:
    """One signature: its staged program, and how to rebuild the result's structure.

    ``checked``: the purity check ran (or is off); until then ``program`` keeps the
    traced program to compare with.
    """

    __slots__ = ("staged", "outputs", "out_tree", "checked", "program", "lone")

    def __init__(
        self, program: Program, optimize: bool, fuse: bool | None = None, neutral: bool = False
    ) -> None:
        self.checked = False
        self.program: Program | None = program
        self.staged = Staged(program, optimize, fuse, neutral)
        self.outputs = program.outputs  # Var/Const for tensor leaves, else the static leaf
        self.out_tree = program.out_tree
        # The result is one tensor (no structure to rebuild).
        self.lone = (
            self.out_tree.is_leaf()
            and len(self.outputs) == 1
            and isinstance(self.outputs[0], (Var, Const))
        )

    def result(self, tensors: list[Tensor]) -> Any:
        if len(tensors) == len(self.outputs):
            return tree.unflatten(self.out_tree, tensors)
        return tree.unflatten(self.out_tree, _with_static_leaves(self.outputs, tensors))

    def run(self, values: list) -> Any:
        """The result on the input leaves' plain values, with no handler installed.

        :meth:`Staged.__call__` and :meth:`result`, inlined: this is every steady call.
        """
        staged = self.staged
        compiled = staged.compiled or staged.compile()
        if staged.extra:
            values += [t._value for t in staged.extra]
        outs = compiled(*values)
        if self.lone:
            value = outs[0]
            if type(value) is Tensor:
                return value
            tensor = _new(Tensor)  # `_make`, inlined
            tensor._value = value
            tensor._trace = None
            return tensor
        return self.result([_make(v) if type(v) is not Tensor else v for v in outs])


# What `functools.update_wrapper` copies is what `Jitted.__init__` copies itself for a plain
# function (else it calls update_wrapper).
_WRAPPER_NAMES = functools.WRAPPER_ASSIGNMENTS == (
    "__module__",
    "__name__",
    "__qualname__",
    "__doc__",
    "__annotations__",
) and functools.WRAPPER_UPDATES == ("__dict__",)


def _plain_dict(names: dict) -> bool:
    """Whether a function's ``__dict__`` holds nothing ``functools.update_wrapper`` would
    copy but ``__wrapped__`` (which it then sets to the function itself)."""
    return not names or (len(names) == 1 and "__wrapped__" in names)


_SCALARS = frozenset({bool, int, float, complex})
_ARRAYS = NUMPY_TYPES - _SCALARS  # ndarray and NumPy's scalar types: a shape and a dtype


_KEYWORDS = object()  # a signature's token: the keyword arguments' names and values follow
_STATIC = object()  # a signature's token: a static argument's type and value follow


def _plain_signature(items: tuple | list, signature: list, values: list) -> bool:
    """Append the signature and the values of the argument leaves in ``items``.

    ``False`` if one needs the general path (``tree.flatten`` and ``_leaf_key``): any
    pytree node but a tuple, a list, a dict or ``None`` (a named tuple, a subclass), a
    tensor subclass, another library's array, a leaf that is not traced (a string).
    Otherwise two calls with equal signatures have the same key in ``Jitted._cache``.
    The tokens: the shape then the dtype per array or tensor, the type per number,
    the type then the length per tuple or list, ``dict`` then the sorted keys per dict
    (its values follow in that order, as ``tree.flatten`` gives them), ``None`` for
    ``None`` (an empty subtree). Two signatures compared token by token stay in step:
    where one has a shape (a tuple), a type, a length (an int) or keys (a tuple after
    ``dict``), an equal token is of the same kind, so both parse into the same
    structure (and a dtype, which equals some types, such as ``float``, is only ever
    compared with a dtype).
    """
    for x in items:
        kind = type(x)
        if kind is Tensor:
            value = x._value
            if type(value) not in _ARRAYS:
                return False
            signature.append(value.shape)
            signature.append(value.dtype)
            values.append(value)
        elif kind in _ARRAYS:
            signature.append(x.shape)
            signature.append(x.dtype)
            values.append(x)
        elif kind in _SCALARS:
            signature.append(kind)
            values.append(x)
        elif kind is tuple or kind is list:
            signature.append(kind)
            signature.append(len(x))
            if not _plain_signature(x, signature, values):
                return False
        elif kind is dict:
            try:
                keys = sorted(x)
            except TypeError:  # keys of mixed types: optree's own order
                return False
            signature.append(dict)
            signature.append(tuple(keys))
            if not _plain_signature(_values_of(x, keys), signature, values):
                return False
        elif x is None:
            signature.append(None)
        else:
            return False
    return True


# (Comprehensions as functions: one in a function's body makes the names it reads cells, made
# at every call of that function, also where the comprehension does not run.)
def _with_static_leaves(outputs: list[Any], tensors: list[Tensor]) -> list[Any]:
    """The result's leaves: ``tensors`` in order where ``outputs`` has a tensor, else its leaf."""
    found = iter(tensors)
    return [next(found) if isinstance(o, (Var, Const)) else o for o in outputs]


def _values_of(mapping: dict, keys: list) -> list:
    return [mapping[k] for k in keys]


def _leaf_key(x: Any) -> Any:
    """The part of the signature one argument leaf contributes."""
    if isinstance(x, Tensor):
        # A plain tensor's value is at hand (a vmap view's or a tracer's is not: theirs
        # were checked where they were made).
        if type(x) is Tensor and type(x._value) not in NUMPY_TYPES and is_backend_array(x._value):
            return _backend_key(x._value)
        return (x.shape, x.dtype)
    if isinstance(x, (np.ndarray, np.generic)):
        return (x.shape, x.dtype)
    kind = type(x)
    if kind in (bool, int, float, complex):
        return kind
    if is_backend_array(x):
        return _backend_key(x)
    try:
        hash(x)
    except TypeError:
        raise TypeError(
            f"kenaz.jit: an argument leaf of type {kind.__name__} is neither a tensor, an array, "
            "a number nor hashable; pass it as a static argument (static_argnums) only if it "
            "is hashable, or make it a pytree of arrays"
        ) from None
    return ("static", kind, x)


def _backend_key(value: Any) -> tuple:
    """Another library's array: its programs call that library (its type is in the key)."""
    return ("backend", type(value), tuple(value.shape), str(value.dtype))


def _static_key(static: dict | None) -> Any:
    if not static:
        return None
    try:
        items = tuple(sorted(static.items(), key=lambda item: str(item[0])))
        hash(items)
    except TypeError:
        raise TypeError(
            "kenaz.jit: static arguments must be hashable (they key the cache of traces); got "
            + ", ".join(f"{k!r}: {type(v).__name__}" for k, v in static.items())
        ) from None
    return items


@overload
def jit(
    fun: Callable[P, R],
    *,
    static_argnums: int | Sequence[int] = (),
    static_argnames: str | Sequence[str] = (),
    optimize: bool = True,
    check_purity: bool = True,
    fuse: bool | None = None,
) -> Jitted[P, R]: ...
@overload
def jit(
    fun: None = None,
    *,
    static_argnums: int | Sequence[int] = (),
    static_argnames: str | Sequence[str] = (),
    optimize: bool = True,
    check_purity: bool = True,
    fuse: bool | None = None,
) -> Callable[[Callable[P, R]], Jitted[P, R]]: ...
def jit(
    fun: Callable | None = None,
    *,
    static_argnums: int | Sequence[int] = (),
    static_argnames: str | Sequence[str] = (),
    optimize: bool = True,
    check_purity: bool = True,
    fuse: bool | None = None,
) -> Any:
    """Compile ``fun``: trace it once per signature, then run plain NumPy code.

    Parameters
    ----------
    fun : callable
        A function of pytrees of tensors, arrays and numbers, written with
        ``kenaz.numpy``. Transformations inside it (``grad``, ``vmap``,
        ``hessian``, custom rules, ``checkpoint``) are traced through, so
        ``jit(grad(f))`` compiles the forward and the backward pass together.
    static_argnums, static_argnames : optional
        Arguments that are not traced but passed as they are: Python values
        that shapes or control flow depend on. Each new value traces again,
        so they must be hashable.
    optimize : bool, optional
        Run the program optimizations (dead code, common subexpressions,
        identity ops, in-place buffers). On by default.
    check_purity : bool, optional
        On the second call of each signature, trace once more and compare
        the two programs, constants included. If they differ (the function
        draws from ``numpy.random``, reads a global that changed...), warn
        once, naming the first constant that changed and the line that made
        it, and run the function eagerly from then on. ``False`` skips the
        check: values that change are then frozen at their first trace.
    fuse : bool or None, optional
        With the extra ``kenaz[jit]`` (numba): compile runs of elementwise
        ops into one loop each (:mod:`kenaz.compiler.fusion`). ``None``
        (default): a signature starts on NumPy code and is fused at its 20th
        call if the fused code is faster on that call's arguments; ``True``:
        fused from the first call; ``False``: never. Without numba, NumPy
        code always.

    Returns
    -------
    Jitted
        Called like ``fun``. ``.program(*args)`` shows the optimized program,
        ``.source(*args)`` the generated Python, ``.cache_info()`` counts
        traces and cache hits.

    Notes
    -----
    The signature of a call is the structure of its arguments, the shape and
    dtype of each array or tensor, the Python type of each number, and the
    values of the static arguments: a new one traces again. While tracing,
    inputs have no value: ``bool``, ``float``, ``if`` on them or ``.numpy()``
    raise :class:`~kenaz.errors.ConcretizationError`. Python side effects
    (``print``, appending to a list, NumPy's global random generator) happen
    only while tracing, and arrays the function closes over are baked in with
    the value they had then, as in JAX; a value that changes between calls is
    caught by the purity check (``check_purity``), not frozen. Under a
    transformation a call is one call op, ``jit[name]`` (``debug`` shows one
    op), whose forward, reverse and batching rules are derived from its program
    and compiled in turn (see docs/jit.md), so it is differentiated, batched or
    debugged like the original.

    Examples
    --------
    >>> import kenaz
    >>> import kenaz.numpy as knp
    >>> @kenaz.jit
    ... def f(x):
    ...     return knp.sum(knp.sin(x) ** 2)
    >>> float(f(knp.zeros(3)))
    0.0
    >>> g = kenaz.jit(kenaz.grad(f))
    >>> g(knp.zeros(3))
    Tensor([0., 0., 0.])
    >>> f.cache_info().traces, g.cache_info().traces
    (1, 1)
    """
    nums, names = static_argument_names(static_argnums, static_argnames)
    if fun is None:
        return lambda f: Jitted(f, nums, names, optimize, check_purity, fuse)
    return Jitted(fun, nums, names, optimize, check_purity, fuse)
