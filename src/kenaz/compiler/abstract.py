"""Abstract evaluation: the shapes and dtypes of an op's results, without its arithmetic.

Tracing (:mod:`kenaz.compiler.program`) needs only the type of each result to
record an equation. :func:`result_types` finds it by the op's kind:

- **Elementwise ops** (those batched by :func:`kenaz.ops.batching.elementwise`,
  which states that they broadcast): the shape is the broadcast of the
  operands' shapes; the dtype is that of the op's own implementation run on
  0-d operands of the same dtypes (Python numbers stay Python numbers, so
  NEP 50's weak promotion is the same), remembered per op, operand dtypes
  and parameters. Under NumPy 2 a result's dtype depends on the operands'
  dtypes only, never on their shapes or values.
- **Reductions** over ``axis``/``keepdims`` (sum, prod, max, min, logsumexp,
  argmax...): the shape drops (or keeps as 1) the reduced axes; the dtype is
  the implementation's on an operand of one element per axis.
- **matmul** and **einsum** (without ``...``): the shape from the operands'
  sizes; the dtype from one-element operands.
- **Shape and indexing ops** (reshape, transpose, slicing, gather,
  concatenate...): the implementation itself, run on *zero-strided* stand-ins
  (every element aliases one zero, so they cost nothing to allocate); these
  ops move or view memory and do no arithmetic.

Every other op (decompositions, FFTs, sorting, solvers, user-defined ops
without the elementwise batching rule) returns ``None``: the tracer runs it
on the real values. So does any op with an empty operand (nothing to save),
and any op whose rule raises: the real run then raises the op's own error,
so errors read as before.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..effects import Op
from ..ops import axes as _axes
from ..ops import batching as _batching
from ..ops import indexing as _indexing
from ..ops import linalg as _linalg
from ..ops import shape as _shape
from .ir import Const, Var

__all__ = [
    "result_types",
    "rule_of",
    "rules_seen",
    "types_seen",
    "remember_types",
    "broadcast_shapes",
    "zero_strided",
]

Types = list[tuple[tuple[int, ...], np.dtype]]
_ndarray = np.ndarray
_generic = np.generic
_MEMO_LIMIT = 4096  # remembered dtypes (and shapes of shape ops): cleared when full

# op -> its rule; filled lazily for elementwise ops (a user's op is classified at first sight).
_dtypes: dict[Any, Any] = {}
_elementwise_types: dict[tuple, Types] = {}  # (op, shape, dtype... [, params]) -> result types
_shaped: dict[Any, Any] = {}
_reduced: dict[tuple, Types] = {}  # (op, shape, dtype, weak, *params) -> a reduction's types
_products: dict[tuple, Types] = {}  # (op, shape, dtype, weak, shape, dtype, weak) -> matmul's
# op -> its rule (or None), for every op seen: the tracer reads it at once (a call less per op).
rules_seen: dict[Op, Any] = {}
# The result types of the ops the tracer meets most, by their operands' types, which the
# tracer looks up before asking any rule (`remember_types` fills it):
#   (op, shape, dtype, weak, *params.items())   one variable, parameters or none;
#   (op, shape, dtype, weak, shape, dtype, weak)   two operands, variables or NumPy arrays (a
#                                                  constant's weak is None), no parameters.
types_seen: dict[tuple, Types] = {}


def result_types(op: Op, inputs: Sequence[Var | Const], params: dict[str, Any]) -> Types | None:
    """The ``(shape, dtype)`` of each result of ``op`` on ``inputs``, or ``None`` if it must
    run on real values (see the module doc). May raise: the caller then runs it for real."""
    rule = rule_of(op)
    return None if rule is None else rule(op, inputs, params)


def rule_of(op: Op) -> Callable[..., Types] | None:
    """The rule giving ``op``'s result types (``None``: ``op`` runs on real values)."""
    try:
        return rules_seen[op]
    except KeyError:
        pass
    rule = _RULES.get(op)
    if rule is None:
        batch = op.batch
        if batch is _elementwise_batch:
            rule = _elementwise
        elif batch is _reduction_batch or batch is _index_reduction_batch:
            rule = _reduction
    if op.is_call:
        # A call op is made per function (custom_root's, checkpoint's): remembering it here
        # would keep its function alive, and with it whatever that closes over (a finished
        # trace's tracers and handler). Its rule is None and cheap to find again.
        return rule
    if len(rules_seen) >= _MEMO_LIMIT:  # ops made on the fly (a user's, in a loop)
        rules_seen.clear()
    rules_seen[op] = rule
    return rule


def remember_types(key: tuple, rule: Callable[..., Types], types: Types, operands: int) -> None:
    """Remember ``types``, given by ``rule``, under ``key`` in :data:`types_seen` where that
    key determines them: the rules whose results depend on the operands' shapes and dtypes
    (and weak types) and the parameters alone. A shape op's two operands are not (an index
    array's values may make the shape), nor is any other rule (a user's op runs for real)."""
    if rule is _elementwise or rule is _matmul or (operands == 1 and rule in _TYPED_BY_ONE):
        _remember(types_seen, key, types)


# -- stand-ins ----------------------------------------------------------------------------------
_zero_bytes: dict[np.dtype, bytes] = {}


def zero_strided(shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """A read-only array of ``shape`` and ``dtype`` whose elements all alias one zero."""
    buffer = _zero_bytes.get(dtype)
    if buffer is None:
        buffer = _zero_bytes[dtype] = bytes(dtype.itemsize)
    return _ndarray(shape, dtype, buffer, 0, (0,) * len(shape))


def _small(atom: Var | Const, ndim: int | None = None) -> Any:
    """A one-element stand-in of ``atom``'s dtype (``ndim`` axes of size 1, default 0-d); a
    Python number stays itself (weak in NEP 50); a constant that is not a number is kept."""
    if type(atom) is Var:
        if atom.weak is not None:
            return atom.weak(0)
        return np.zeros((1,) * (ndim or 0), atom.dtype)
    value = atom.value
    if type(value) is _ndarray:
        return np.zeros((1,) * (ndim or 0), value.dtype)
    return value


def _dtype_of(value: Any) -> np.dtype:
    if type(value) is _ndarray or isinstance(value, _generic):
        return value.dtype
    return np.result_type(value)


def _run_quietly(op: Op, args: Sequence[Any], params: dict[str, Any]) -> Any:
    """``op``'s implementation on stand-ins, with NumPy's warnings off (a stand-in's zeros
    divide by zero where the real values may not; real warnings come from real runs)."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return op.impl(*args, **params)


def _dtypes_of(op: Op, result: Any) -> list[np.dtype]:
    return [_dtype_of(r) for r in result] if op.multiple_results else [_dtype_of(result)]


def _params_key(params: dict[str, Any]) -> Any:
    """A hashable key for ``params`` (raises ``TypeError`` if a value is not hashable)."""
    if not params:
        return ()
    key = tuple(params.items())
    hash(key)
    return key


def _remember(memo: dict[Any, Any], key: Any, value: Any) -> Any:
    if len(memo) >= _MEMO_LIMIT:
        memo.clear()
    memo[key] = value
    return value


def _atom_shape(atom: Var | Const) -> tuple[int, ...]:
    if type(atom) is Var:
        return atom.shape
    value = atom.value
    if type(value) is _ndarray or isinstance(value, _generic):
        return value.shape
    if type(value) in (float, int, bool, complex):
        return ()
    raise TypeError("not an array operand")  # a list, a backend array: run it for real


def _atom_key(atom: Var | Const) -> Any:
    """What the dtype of an elementwise result may depend on, for one operand."""
    if type(atom) is Var:
        return atom.dtype if atom.weak is None else atom.weak
    value = atom.value
    kind = type(value)
    if kind is float or kind is complex:
        return kind
    if kind is int or kind is bool:
        return (kind, value)  # NEP 50 checks that a Python int fits the array's dtype
    return value.dtype  # an array or a NumPy scalar (_atom_shape checked which)


# -- elementwise ops --------------------------------------------------------------------------
def _elementwise(op: Op, inputs: Sequence[Var | Const], params: dict[str, Any]) -> Types:
    # The key: per operand its shape, then what the result's dtype may depend on. The
    # result types are remembered per key (a program repeats a few of them), so a repeat
    # costs one pass over the operands and one look-up: no broadcast, no dtype rule.
    if not params:  # unary (`sin`) or binary (`x * y`, `x * 2.0`): the same key, at once
        if len(inputs) == 1:
            a = inputs[0]
            if type(a) is Var:
                found = _elementwise_types.get(
                    (op, a.shape, a.dtype if a.weak is None else a.weak)
                )
                if found is not None:
                    return found
        elif len(inputs) == 2:
            a, b = inputs
            if type(a) is Var:
                if type(b) is Var:
                    key: Any = (
                        op,
                        a.shape,
                        a.dtype if a.weak is None else a.weak,
                        b.shape,
                        b.dtype if b.weak is None else b.weak,
                    )
                elif type(b.value) is float:
                    key = (op, a.shape, a.dtype if a.weak is None else a.weak, (), float)
                else:
                    key = None
                if key is not None:
                    found = _elementwise_types.get(key)
                    if found is not None:
                        return found
    keys: list[Any] = [op]
    for a in inputs:
        if type(a) is Var:
            keys.append(a.shape)
            keys.append(a.dtype if a.weak is None else a.weak)
        else:
            value = a.value
            kind = type(value)
            if kind is float or kind is complex:
                keys.append(())
                keys.append(kind)
            elif kind is int or kind is bool:
                keys.append(())
                keys.append((kind, value))  # NEP 50 checks that a Python int fits the dtype
            elif kind is _ndarray or isinstance(value, _generic):
                keys.append(value.shape)
                keys.append(value.dtype)
            else:
                raise TypeError("not an array operand")  # a list, a backend array: run it
    if params:
        keys.append(_params_key(params))
    key = tuple(keys)
    found = _elementwise_types.get(key)
    if found is not None:
        return found
    end = 1 + 2 * len(inputs)
    shapes = keys[1:end:2]
    shape = broadcast_shapes(shapes) if len(set(shapes)) > 1 else shapes[0]
    if 0 in shape:
        raise ValueError("an empty result: run it (it costs nothing)")
    # The dtypes depend on the operands' dtypes only (not their shapes): remembered apart,
    # so new shapes of known dtypes need no run on stand-ins.
    dtype_key = (op, *keys[2:end:2], *keys[end:])
    dtypes = _dtypes.get(dtype_key)
    if dtypes is None:
        result = _run_quietly(op, [_small(a) for a in inputs], params)
        dtypes = _remember(_dtypes, dtype_key, _dtypes_of(op, result))
    return _remember(_elementwise_types, key, _typed(shape, dtypes))


def _typed(shape: tuple[int, ...], dtypes: list[np.dtype]) -> Types:
    # (A function: a comprehension in `_elementwise` would make `shape` a cell of it.)
    return [(shape, dtype) for dtype in dtypes]


def broadcast_shapes(shapes: Sequence[tuple[int, ...]]) -> tuple[int, ...]:
    """NumPy's broadcast of ``shapes`` (``numpy.broadcast_shapes`` without its overhead)."""
    ndim = max(map(len, shapes))
    out = [1] * ndim
    for s in shapes:
        offset = ndim - len(s)
        for i, n in enumerate(s):
            m = out[offset + i]
            if n != m:
                if m == 1:
                    out[offset + i] = n
                elif n != 1:
                    raise ValueError(f"shapes {shapes} do not broadcast")
    return tuple(out)


# -- reductions -------------------------------------------------------------------------------
def _reduction(op: Op, inputs: Sequence[Var | Const], params: dict[str, Any]) -> Types:
    (x,) = inputs
    if type(x) is not Var:
        return _reduced_types(op, x, params)
    # Of a variable: remembered by its type and the parameters (a program repeats a few).
    try:
        key: Any = (op, x.shape, x.dtype, x.weak, *params.items())
        found = _reduced.get(key)
    except TypeError:  # an unhashable parameter (`axis=[0, 1]`)
        return _reduced_types(op, x, params)
    if found is None:
        found = _remember(_reduced, key, _reduced_types(op, x, params))
    return found


def _reduced_types(op: Op, x: Var | Const, params: dict[str, Any]) -> Types:
    shape = _atom_shape(x)
    if 0 in shape:
        raise ValueError("an empty operand: run it")
    axis, keepdims = params["axis"], params["keepdims"]
    ndim = len(shape)
    if axis is None:
        reduced = set(range(ndim))
    elif type(axis) is int:
        reduced = {axis % ndim if ndim else axis}
    else:
        reduced = {a % ndim for a in axis}
    if keepdims:
        out = tuple(1 if i in reduced else n for i, n in enumerate(shape))
    else:
        out = tuple(n for i, n in enumerate(shape) if i not in reduced)
    key = (op, _atom_key(x), ndim, _params_key(params))
    dtypes = _dtypes.get(key)
    if dtypes is None:
        result = _run_quietly(op, [_small(x, ndim)], params)
        first = result[0] if op.multiple_results else result
        if np.shape(first) != (1,) * len(out):
            raise ValueError("the rule does not fit this reduction: run it")
        dtypes = _remember(_dtypes, key, _dtypes_of(op, result))
    return [(out, dtype) for dtype in dtypes]


# -- products -------------------------------------------------------------------------------
def _matmul(op: Op, inputs: Sequence[Var | Const], params: dict[str, Any]) -> Types:
    x, y = inputs
    # Remembered by the operands' types where both are variables or arrays (an array
    # constant's result is a variable's of its shape and dtype).
    key: Any = None
    if type(x) is Var:
        if type(y) is Var:
            key = (op, x.shape, x.dtype, x.weak, y.shape, y.dtype, y.weak)
        elif type(y.value) is _ndarray:
            key = (op, x.shape, x.dtype, x.weak, y.value.shape, y.value.dtype, None)
    elif type(y) is Var and type(x.value) is _ndarray:
        key = (op, x.value.shape, x.value.dtype, None, y.shape, y.dtype, y.weak)
    if key is None or params:  # (matmul has none; an op sharing the rule might)
        return _product_types(op, x, y, params)
    found = _products.get(key)
    if found is None:
        found = _remember(_products, key, _product_types(op, x, y, params))
    return found


def _product_types(op: Op, x: Var | Const, y: Var | Const, params: dict[str, Any]) -> Types:
    xs, ys = _atom_shape(x), _atom_shape(y)
    if not xs or not ys or 0 in xs or 0 in ys:
        raise ValueError("a scalar or an empty operand: run it (it raises or costs nothing)")
    if xs[-1] != ys[-2 if len(ys) > 1 else -1]:
        raise ValueError("the sizes do not match: run it for its error")
    batch = xs[:-2] if xs[:-2] == ys[:-2] else broadcast_shapes([xs[:-2], ys[:-2]])
    shape = batch + xs[-2:-1] + ys[-1:] if len(ys) > 1 else batch + xs[-2:-1]
    key = (op, _atom_key(x), _atom_key(y), len(xs), len(ys))
    dtypes = _dtypes.get(key)
    if dtypes is None:
        result = _run_quietly(op, [_small(x, len(xs)), _small(y, len(ys))], params)
        dtypes = _remember(_dtypes, key, _dtypes_of(op, result))
    return [(shape, dtypes[0])]


def _einsum(op: Op, inputs: Sequence[Var | Const], params: dict[str, Any]) -> Types:
    spec = params["spec"]
    if "..." in spec or "->" not in spec:
        raise ValueError("an implicit or ellipsis einsum: run it")
    left, right = spec.replace(" ", "").split("->")
    subscripts = left.split(",")
    sizes: dict[str, int] = {}
    shapes = [_atom_shape(a) for a in inputs]
    for letters, shape in zip(subscripts, shapes, strict=True):
        if len(letters) != len(shape) or 0 in shape:
            raise ValueError("run it for its error")
        for letter, n in zip(letters, shape, strict=True):
            if sizes.setdefault(letter, n) != n:
                raise ValueError("the sizes of a letter differ: run it for its error")
    shape = tuple(sizes[letter] for letter in right)
    key = (op, tuple([_atom_key(a) for a in inputs]), spec)
    dtypes = _dtypes.get(key)
    if dtypes is None:
        stand_ins = [_small(a, len(s)) for a, s in zip(inputs, shapes, strict=True)]
        result = _run_quietly(op, stand_ins, params)
        dtypes = _remember(_dtypes, key, _dtypes_of(op, result))
    return [(shape, dtypes[0])]


# -- shape and indexing ops: their own implementation on zero-strided stand-ins -----------------
def _on_stand_ins(op: Op, inputs: Sequence[Var | Const], params: dict[str, Any]) -> Types:
    args = []
    for a in inputs:
        if type(a) is Var:
            if 0 in a.shape:
                raise ValueError("an empty operand: run it")
            args.append(a.weak(0) if a.weak is not None else zero_strided(a.shape, a.dtype))
        else:
            args.append(a.value)
    result = _run_quietly(op, args, params)
    results = result if op.multiple_results else (result,)
    return [(tuple(np.shape(r)), _dtype_of(r)) for r in results]


def _shape_op_key(op: Op, inputs: Sequence[Var | Const], params: dict[str, Any]) -> Any:
    parts = []
    for a in inputs:
        if type(a) is Var:
            parts.append((a.shape, a.dtype, a.weak))
        else:
            value = a.value
            if type(value) is _ndarray:
                return None  # an index array: its values are the key (not remembered)
            parts.append((type(value), value))
    key = (op, tuple(parts), _params_key(params))
    hash(key)
    return key


def _shape_op(op: Op, inputs: Sequence[Var | Const], params: dict[str, Any]) -> Types:
    if len(inputs) == 1 and type(inputs[0]) is Var:  # one variable: `_shape_op_key`, inlined
        a = inputs[0]
        try:
            found = _shaped.get(
                (op, ((a.shape, a.dtype, a.weak),), tuple(params.items()) if params else ())
            )
        except TypeError:  # an unhashable parameter: the general path says so
            found = None
        if found is not None:
            return found
    try:
        key = _shape_op_key(op, inputs, params)
    except TypeError:  # an unhashable index or parameter
        key = None
    if key is not None:
        found = _shaped.get(key)
        if found is not None:
            return found
    types = _on_stand_ins(op, inputs, params)
    if key is not None:
        _remember(_shaped, key, types)
    return types


_elementwise_batch: Callable = _batching.elementwise
_reduction_batch: Callable = _axes.reduction
_index_reduction_batch: Callable = _batching.index_reduction

# Rules of one variable that its type and the parameters determine (besides the two above).
_TYPED_BY_ONE = frozenset({_reduction, _shape_op})

_RULES: dict[Op, Callable[..., Types]] = {
    _linalg._matmul: _matmul,
    _linalg._einsum: _einsum,
    **{
        op: _shape_op
        for op in (
            _shape._reshape,
            _shape._transpose,
            _shape._squeeze,
            _shape._expand_dims,
            _shape._broadcast_to,
            _shape._flip,
            _shape._concatenate,
            _shape._pad,
            _shape._repeat,
            _shape._tile,
            _indexing.basic_index,
            _indexing.gather,
        )
    },
}
