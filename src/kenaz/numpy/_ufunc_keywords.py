"""NumPy's ufunc keywords on kenaz.numpy's elementwise functions.

Every function of ``kenaz.numpy`` that stands for a NumPy ufunc (``sin``, ``add``,
``less``, ``log2``, ``divmod``...) takes NumPy's keywords ``out``, ``where``,
``casting``, ``order``, ``dtype``, ``subok`` and ``signature``:

- ``dtype`` (or ``signature``) chooses NumPy's loop (``ufunc.resolve_dtypes``, with
  ``casting`` checked as NumPy checks it): the inputs are cast to its types and the
  result to its output type, differentiably;
- ``out`` receives the result, cast to its dtype (``casting`` checked) and broadcast
  to its shape, and is returned. Outside transformations that is NumPy itself
  writing into the array's memory. Under a transformation the result is computed
  with kenaz ops and written into ``out``, which takes over its derivative records
  (``_out.into_out``: later uses of ``out`` see the new values and their
  derivative; what cannot carry one raises, naming the op and the fix);
- ``where`` keeps ``out``'s values where the mask is False, as NumPy does. It needs
  ``out``: without it NumPy leaves those entries uninitialized, and kenaz raises
  (JAX's ``jnp`` ufuncs refuse ``where`` altogether). The derivative there is zero,
  also where the function's own derivative is not finite (``log`` of a negative
  entry): the inputs pass the mask on their way in (``where(mask, x,
  stop_gradient(x))``), so no ``0 * inf`` reaches them. Entries the mask excludes
  are computed and discarded, with NumPy's floating-point warnings silenced for them;
- ``order`` (memory layout) and ``subok`` (subclasses) do not change values: checked
  as NumPy checks them, and the result is a Tensor.

A primitive (an ``Op``) gets this through its ``keywords`` hook, which ``perform``
consults only for calls that pass parameters: the call without keywords costs
nothing more. A composite is wrapped by a function that tests for keywords first.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from ..convert import as_tensor
from ..effects import Op, handlers_installed
from ..mutation import in_place_target, plain
from ..ops import elementwise as ew
from ..ops import shape
from ..tensor import Tensor
from ._out import into_out

__all__ = [
    "GufuncKeywords", "UfuncKeywords", "apply", "gufunc_signature", "masked_operands",
    "positional_outputs", "result_dtype", "ufunc_signature", "with_ufunc_keywords",
]  # fmt: skip

_DEFAULTS: dict[str, Any] = {
    "out": None,
    "where": True,
    "casting": "same_kind",
    "order": "K",
    "dtype": None,
    "subok": True,
    "signature": None,
}
_CASTINGS = ("no", "equiv", "safe", "same_kind", "unsafe")
_ORDERS = ("K", "A", "C", "F")


class UfuncKeywords:
    """Runs a call of the kenaz function ``function`` (standing for NumPy's ``ufunc``)
    that passes ufunc keywords; an ``Op``'s ``keywords`` hook (see the module)."""

    __slots__ = ("function", "ufunc", "name", "nin")

    def __init__(self, function: Callable[..., Any], ufunc: np.ufunc, name: str) -> None:
        self.function = function
        self.ufunc = ufunc
        self.name = name
        # The number of array inputs: ``perform`` hands a call with more arguments (its
        # outputs given positionally, ``add(x, y, out)``) to this hook.
        self.nin = ufunc.nin

    def __call__(self, op: Op, args: tuple, params: Mapping[str, Any]) -> Any:
        return self.run(args, params)

    @property
    def signature(self) -> inspect.Signature:
        """NumPy's signature of the ufunc: what ``inspect.signature`` shows for the op."""
        return ufunc_signature(self.ufunc.nin)

    def run(self, args: tuple, keywords: Mapping[str, Any]) -> Any:
        """``function(*args)`` with NumPy's ufunc ``keywords``."""
        ufunc, name = self.ufunc, self.name
        args, keywords = positional_outputs(ufunc, name, args, keywords)
        options = _options(ufunc, name, args, keywords, _DEFAULTS)
        outs = _outputs(options["out"], ufunc.nout, name)
        if options["where"] is not True and all(o is None for o in outs):
            raise TypeError(
                f"kenaz.numpy.{name}: where= needs out=, which holds the values kept where the "
                "mask is False (NumPy leaves them uninitialized; JAX refuses where=). Pass "
                f"out=, or write kenaz.numpy.where(mask, kenaz.numpy.{name}(...), fill)"
            )
        if not handlers_installed() and _numpy_values(args):
            return _numpy_call(ufunc, name, args, keywords, outs)
        return self._functional(args, options, outs)

    def _functional(self, args: tuple, options: dict[str, Any], outs: tuple) -> Any:
        """The call made of kenaz ops (a transformation runs): differentiable."""
        ufunc, name = self.ufunc, self.name
        operands = list(args)
        loop = _loop_dtypes(ufunc, operands, options)
        if loop is not None:
            operands = [_cast(x, dtype) for x, dtype in zip(operands, loop[: ufunc.nin])]
        mask = options["where"]
        if mask is True:
            results = self.function(*operands)
        else:
            operands = masked_operands(operands, mask)
            with np.errstate(all="ignore"):  # the excluded entries, computed and discarded
                results = self.function(*operands)
        results = results if isinstance(results, tuple) else (results,)
        if loop is not None:
            results = tuple(_cast(r, dtype) for r, dtype in zip(results, loop[ufunc.nin :]))
        written = {"casting": options["casting"], "mask": None if mask is True else mask}
        given = [into_out(o, r, name, broadcast=True, **written) for r, o in zip(results, outs)]
        return given[0] if ufunc.nout == 1 else tuple(given)


def positional_outputs(
    ufunc: np.ufunc, name: str, args: tuple, keywords: Mapping[str, Any]
) -> tuple[tuple, Mapping[str, Any]]:
    """``(arrays, keywords)`` of a call that may give its outputs positionally, as NumPy
    takes them: ``add(x, y, out)`` is ``add(x, y, out=out)``, ``divmod(x, y, q, r)`` is
    ``divmod(x, y, out=(q, r))``. Only the ``nin`` inputs are left in ``arrays``."""
    nin, nout = ufunc.nin, ufunc.nout
    if len(args) <= nin:
        return args, keywords
    if len(args) > nin + nout:
        raise TypeError(
            f"kenaz.numpy.{name}: takes {nin} input(s) and at most {nout} output(s) "
            f"positionally, got {len(args)} arguments"
        )
    if keywords.get("out") is not None:
        raise TypeError(
            f"kenaz.numpy.{name}: cannot specify 'out' as both a positional and keyword "
            "argument (pass it once, as out=...)"
        )
    given = args[nin:]
    outs = given[0] if nout == 1 else given + (None,) * (nout - len(given))
    return args[:nin], {**keywords, "out": outs}


def masked_operands(operands: list, mask: Any) -> list:
    """The operands with the mask on their way in: where it is False, an entry it keeps,
    without derivative (``where(mask, x, stop_gradient(x[kept]))``). So the derivative
    there is zero, never ``0 * inf``, and the discarded entries are computed at a point
    of the function's domain (no spurious warnings, forward or backward). A mask that
    keeps nothing, or is not concrete (batched by ``vmap``), takes ``x`` itself there."""
    tensors = [x for x in operands if isinstance(x, Tensor)]
    concrete = not isinstance(mask, Tensor) or type(mask) is Tensor
    kept = np.empty(0, np.intp)
    if concrete:
        full = np.broadcast_shapes(np.shape(plain(mask)), *(x.shape for x in tensors))
        kept = np.flatnonzero(np.broadcast_to(np.asarray(plain(mask), dtype=bool), full))
    masked = []
    for x in operands:
        if not isinstance(x, Tensor):
            masked.append(x)
            continue
        fill = x
        if kept.size:
            position = np.unravel_index(kept[0], full)[len(full) - x.ndim :]
            fill = x[tuple(0 if n == 1 else p for p, n in zip(position, x.shape))]
        masked.append(ew.where(mask, x, ew.stop_gradient(fill)))
    return masked


def _options(
    ufunc: np.ufunc, name: str, args: tuple, keywords: Mapping[str, Any], defaults: dict
) -> dict[str, Any]:
    """The call's keywords over ``defaults``, checked: known names, one array per input."""
    unknown = [k for k in keywords if k not in defaults]
    if unknown:
        raise TypeError(f"kenaz.numpy.{name}() got an unexpected keyword argument {unknown[0]!r}")
    if len(args) != ufunc.nin:
        raise TypeError(
            f"kenaz.numpy.{name}: takes {ufunc.nin} array argument(s), got {len(args)} "
            "(pass out= by keyword)"
        )
    options = {**defaults, **keywords}
    _check_options(options, name)
    return options


def _check_options(options: dict[str, Any], name: str) -> None:
    """NumPy's checks of ``casting``, ``order``, ``dtype`` with ``signature``."""
    if options["casting"] not in _CASTINGS:
        raise ValueError(f"kenaz.numpy.{name}: casting must be one of {', '.join(_CASTINGS)} "
                         f"(got {options['casting']!r})")  # fmt: skip
    order = options["order"]
    if order is not None and (not isinstance(order, str) or order.upper() not in _ORDERS):
        raise ValueError(f"kenaz.numpy.{name}: order must be one of 'C', 'F', 'A', or 'K' "
                         f"(got {order!r})")  # fmt: skip
    if options["dtype"] is not None and options["signature"] is not None:
        raise TypeError(f"kenaz.numpy.{name}: cannot specify both 'signature' and 'dtype'")


def _outputs(out: Any, nout: int, name: str) -> tuple:
    """``out`` as a tuple of ``nout`` entries (None where no array is given)."""
    if out is None:
        return (None,) * nout
    if not isinstance(out, tuple):
        if nout > 1:
            raise TypeError(f"kenaz.numpy.{name}: 'out' must be a tuple of {nout} arrays")
        out = (out,)
    if len(out) != nout:
        raise ValueError(f"kenaz.numpy.{name}: 'out' tuple must have exactly {nout} entries")
    for o in out:
        if o is not None and not isinstance(o, (Tensor, np.ndarray)):
            raise TypeError(f"kenaz.numpy.{name}: out= must be a Tensor or an ndarray, got "
                            f"{type(o).__name__}")  # fmt: skip
    return out


def _numpy_values(args: tuple) -> bool:
    """Whether every Tensor argument holds a NumPy value (NumPy's ufunc can run on them)."""
    return all(not isinstance(a, Tensor) or isinstance(a._value, (np.ndarray, np.generic))
               for a in args)  # fmt: skip


def _numpy_call(ufunc: np.ufunc, name: str, args: tuple, keywords: Mapping, outs: tuple) -> Any:
    """No transformation runs: NumPy's ufunc itself, writing into ``out``'s memory."""
    keywords = dict(keywords)
    if "out" in keywords:
        keywords["out"] = tuple(
            in_place_target(o, name) if isinstance(o, Tensor) else o for o in outs
        )
    try:
        result = ufunc(*plain(args), **plain(keywords))
    except ValueError as error:  # NumPy's message names no function (a shape of out=)
        raise ValueError(f"kenaz.numpy.{name}: {error}") from None
    results = result if isinstance(result, tuple) else (result,)
    given = [Tensor(r) if o is None else o for r, o in zip(results, outs)]
    return given[0] if ufunc.nout == 1 else tuple(given)


def _dtype_of(x: Any) -> Any:
    """What ``ufunc.resolve_dtypes`` takes for an operand (Python numbers stay weak)."""
    if isinstance(x, (Tensor, np.ndarray, np.generic)):
        return x.dtype
    if isinstance(x, bool):
        return np.dtype(bool)
    if isinstance(x, (int, float, complex)):
        return type(x)
    return as_tensor(x).dtype


def result_dtype(ufunc: np.ufunc, *operands: Any) -> np.dtype:
    """The dtype NumPy's ``ufunc`` gives for ``operands`` (one output), Python numbers
    weak as NEP 50 has them: for composites that compute in steps whose constants or
    ``where`` would otherwise decide it (``hypot(x32, 4.0)`` is float32)."""
    dtypes = tuple(_dtype_of(x) for x in operands) + (None,) * ufunc.nout
    return ufunc.resolve_dtypes(dtypes)[ufunc.nin]


def _loop_dtypes(ufunc: np.ufunc, operands: list, options: dict) -> tuple | None:
    """NumPy's loop (input and output dtypes) for ``dtype``/``signature``, or None."""
    dtype, signature = options["dtype"], options["signature"]
    if dtype is None and signature is None:
        return None
    if signature is None:
        signature = (None,) * ufunc.nin + (np.dtype(dtype),) * ufunc.nout
    dtypes = tuple(_dtype_of(x) for x in operands) + (None,) * ufunc.nout
    # NumPy's own error where no loop fits (it names the ufunc, the types and the rule).
    return ufunc.resolve_dtypes(dtypes, signature=signature, casting=options["casting"])


def _cast(x: Any, dtype: np.dtype) -> Tensor:
    if isinstance(x, Tensor):
        return x if x.dtype == dtype else ew.astype(x, dtype)
    return as_tensor(x, dtype)


def ufunc_signature(nin: int) -> inspect.Signature:
    """NumPy's ufunc signature for ``nin`` inputs: ``out`` positional or by keyword."""
    kinds = inspect.Parameter
    arrays = [inspect.Parameter(f"x{i + 1}" if nin > 1 else "x", kinds.POSITIONAL_ONLY)
              for i in range(nin)]  # fmt: skip
    keywords = [inspect.Parameter("out", kinds.POSITIONAL_OR_KEYWORD, default=None)] + [
        inspect.Parameter(k, kinds.KEYWORD_ONLY, default=v)
        for k, v in _DEFAULTS.items() if k != "out"
    ]  # fmt: skip
    return inspect.Signature(arrays + keywords)


def _dress(call: Callable, function: Callable, name: str, signature: inspect.Signature) -> None:
    """Give the wrapper ``call`` of ``function`` its name, docs and NumPy's ``signature``,
    marked as taking the ufunc keywords."""
    call.__name__ = call.__qualname__ = name
    call.__module__ = getattr(function, "__module__", __name__)
    call.__doc__ = function.__doc__
    call.__wrapped__ = function  # type: ignore[attr-defined]
    call.__kenaz_ufunc_keywords__ = True  # type: ignore[attr-defined]
    call.__signature__ = signature  # type: ignore[attr-defined]


def _wrap_composite(function: Callable[..., Any], ufunc: np.ufunc, name: str) -> Callable:
    """``function`` taking the ufunc keywords; a call without them runs it directly."""
    keywords = UfuncKeywords(function, ufunc, name)

    nin = ufunc.nin

    def call(*args: Any, **params: Any) -> Any:
        if not params and len(args) == nin:
            return function(*args)
        return keywords.run(args, params)

    _dress(call, function, name, ufunc_signature(ufunc.nin))
    call.__dict__.update({k: v for k, v in vars(function).items() if k.startswith("__kenaz")})
    return call


# -- generalized ufuncs (matmul, vecdot, matvec, vecmat): no where=, and axes= -------------
_GUFUNC_DEFAULTS: dict[str, Any] = {
    "out": None, "axes": None, "axis": None, "keepdims": False,
    **{k: v for k, v in _DEFAULTS.items() if k not in ("out", "where")},
}  # fmt: skip


class GufuncKeywords(UfuncKeywords):
    """Runs a call of a kenaz function standing for a generalized ufunc with NumPy's
    keywords: those of a ufunc but ``where``, and ``axes``, ``axis``, ``keepdims`` (the
    core dimensions are moved to the end, where the kenaz function takes them)."""

    __slots__ = ()

    def run(self, args: tuple, keywords: Mapping[str, Any]) -> Any:
        ufunc, name = self.ufunc, self.name
        args, keywords = positional_outputs(ufunc, name, args, keywords)
        options = _options(ufunc, name, args, keywords, _GUFUNC_DEFAULTS)
        outs = _outputs(options["out"], ufunc.nout, name)
        if not handlers_installed() and _numpy_values(args):
            return _numpy_call(ufunc, name, args, keywords, outs)
        operands = list(args)
        loop = _loop_dtypes(ufunc, operands, options)
        if loop is not None:
            operands = [_cast(x, dtype) for x, dtype in zip(operands, loop[: ufunc.nin])]
        operands = [x if isinstance(x, Tensor) else as_tensor(x) for x in operands]
        moves = _core_axes(ufunc, operands, options, name)
        if moves is not None:
            inputs, output = moves
            operands = [shape.moveaxis(x, a, tuple(range(-len(a), 0))) if a else x
                        for x, a in zip(operands, inputs)]  # fmt: skip
        result = self.function(*operands)
        if moves is not None:
            result = _placed(result, moves[0], output, options["keepdims"])
        if loop is not None:
            result = _cast(result, loop[-1])
        return into_out(outs[0], result, name, casting=options["casting"], broadcast=True)


def _core_dims(ufunc: np.ufunc) -> list[list[str]]:
    """The core dimensions of each operand, inputs then outputs (``"(n?,k),(k,m?)->..."``)."""
    inputs, outputs = ufunc.signature.split("->")
    parts = (inputs + "," + outputs).replace("),(", ")|(").replace("),", ")|")
    return [[d for d in part.strip("()").split(",") if d] for part in parts.split("|")]


def _core_axes(ufunc: np.ufunc, operands: list, options: dict, name: str) -> Any:
    """(input core axes, output core axes) for ``axes``/``axis``/``keepdims``, or None; with
    NumPy's checks (a run of the ufunc on zero-strided arrays of the operands' shapes)."""
    axes, axis, keepdims = options["axes"], options["axis"], options["keepdims"]
    if axes is None and axis is None and not keepdims:
        return None
    dummies = [np.broadcast_to(np.zeros((), x.dtype), x.shape) for x in operands]
    given = {k: v for k, v in (("axes", axes), ("axis", axis), ("keepdims", keepdims)) if v}
    ufunc(*dummies, **given)  # NumPy's own error for a wrong combination
    cores = _core_dims(ufunc)
    counts = [min(len(core), x.ndim) for core, x in zip(cores, operands)]  # matmul of vectors
    if axes is None:
        single = axis if axis is not None else -1
        axes = [(single,) if n else () for n in counts]
        axes.append((single,) if cores[-1] else ())
    entries = [tuple(a) if isinstance(a, (tuple, list)) else (a,) for a in axes]
    inputs = entries[: ufunc.nin]
    output = entries[ufunc.nin] if len(entries) > ufunc.nin else None
    return inputs, output


def _placed(result: Tensor, inputs: list, output: Any, keepdims: bool) -> Tensor:
    """The result's core axes moved from the end to ``output`` (or, with ``keepdims``, the
    reduced core axis put back where the inputs had it)."""
    if keepdims:
        position = inputs[0][0]
        if position < 0:
            position += result.ndim + 1
        return shape.expand_dims(result, position)
    if not output:
        return result
    return shape.moveaxis(result, tuple(range(-len(output), 0)), output)


def gufunc_signature(ufunc: np.ufunc) -> inspect.Signature:
    """NumPy's signature of the generalized ufunc ``ufunc``: ``out`` positional or by
    keyword."""
    kinds = inspect.Parameter
    arrays = [inspect.Parameter(f"x{i + 1}", kinds.POSITIONAL_ONLY) for i in range(ufunc.nin)]
    keywords = [inspect.Parameter("out", kinds.POSITIONAL_OR_KEYWORD, default=None)] + [
        inspect.Parameter(k, kinds.KEYWORD_ONLY, default=v)
        for k, v in _GUFUNC_DEFAULTS.items() if k != "out"
    ]  # fmt: skip
    return inspect.Signature(arrays + keywords)


def _wrap_gufunc(function: Callable[..., Any], ufunc: np.ufunc, name: str) -> Callable:
    """``function`` taking a generalized ufunc's keywords; a call without them (or with only
    the parameters ``function`` takes itself, vecdot's ``axis``) runs it directly."""
    keywords = GufuncKeywords(function, ufunc, name)
    own = set(inspect.signature(function).parameters) - {"out"}

    nin = ufunc.nin

    def call(*args: Any, **params: Any) -> Any:
        if len(args) == nin and (not params or params.keys() <= own):
            return function(*args, **params)
        return keywords.run(args, params)

    _dress(call, function, name, gufunc_signature(ufunc))
    return call


def with_ufunc_keywords(function: Callable[..., Any], name: str) -> Callable[..., Any]:
    """``function`` (the composite ``kenaz.numpy.<name>``) with NumPy's ufunc keywords when
    ``numpy.<name>`` is a ufunc or a generalized ufunc; else ``function`` itself. Applied
    where a composite is marked (``_namespace.composite``)."""
    ufunc = getattr(np, name, None)
    if not isinstance(ufunc, np.ufunc):
        return function
    if ufunc.signature is not None:
        return _wrap_gufunc(function, ufunc, name)
    return _wrap_composite(function, ufunc, name)


def apply(namespace: dict[str, Any]) -> None:
    """Give every function of ``namespace`` (``kenaz.numpy``'s globals) whose NumPy name is
    a ufunc NumPy's ufunc keywords: the hook of a primitive (the Op itself changes), and a
    wrapper of a composite that was not marked with ``_namespace.composite`` (those got it
    there): the ``stacks_own_lists`` composites of ``__init__``, ``matmul``, ``vecdot``."""
    wrapped: dict[int, Callable] = {}  # aliases (abs, absolute) get the same wrapper
    for name, value in list(namespace.items()):
        ufunc = getattr(np, name, None)
        if name.startswith("_") or not isinstance(ufunc, np.ufunc) or not callable(value):
            continue
        if isinstance(value, np.ufunc):
            continue  # NumPy's own (isnat): it has the keywords already
        if ufunc.signature is not None:  # a generalized ufunc: matmul, vecdot...
            if not getattr(value, "__kenaz_ufunc_keywords__", False):
                namespace[name] = _wrap_gufunc(value, ufunc, name)
            continue
        if isinstance(value, Op):
            if value.keywords is None:
                value.keywords = UfuncKeywords(value, ufunc, ufunc.__name__)
            continue
        if getattr(value, "__kenaz_ufunc_keywords__", False):
            continue  # wrapped where it was marked a composite (with_ufunc_keywords)
        if id(value) not in wrapped:
            wrapped[id(value)] = _wrap_composite(value, ufunc, name)
        namespace[name] = wrapped[id(value)]
