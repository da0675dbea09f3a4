"""Indexing: ``x[index]`` (gather) and ``x.at[index].set/add/...`` (scatter).

An index is split into a static *spec* (ints, slices, ``None``, ``...``, with
a placeholder where an index array goes) and the index arrays themselves,
which are passed as arguments, so that ``vmap`` can batch them. Boolean
masks become the integer arrays of their ``nonzero()``, as in NumPy.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..effects import Op
from ..tensor import Tensor


class _ArraySlot:
    """Placeholder in an index spec for the next index-array argument."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<array>"


ARRAY = _ArraySlot()


def split_index(index: Any) -> tuple[tuple[Any, ...], list[Any]]:
    """Split a NumPy-style index into ``(spec, arrays)``."""
    if not isinstance(index, tuple):
        index = (index,)
    spec: list[Any] = []
    arrays: list[Any] = []
    for item in index:
        if item is None or item is Ellipsis or isinstance(item, slice):
            spec.append(item)
        elif isinstance(item, (bool, np.bool_)):
            raise TypeError("kenaz indexing: a Python bool is not a valid index; use a mask array")
        elif isinstance(item, (int, np.integer)):
            spec.append(int(item))
        else:
            if not isinstance(item, Tensor):
                item = np.asarray(item)
                if item.dtype == object or item.dtype.kind not in "biu":
                    if item.size == 0:
                        item = item.astype(np.intp)
                    else:
                        raise IndexError(
                            f"kenaz indexing: index arrays must be integer or boolean, "
                            f"got dtype {item.dtype}"
                        )
            if item.dtype == np.bool_:
                for part in np.nonzero(np.asarray(item)):
                    spec.append(ARRAY)
                    arrays.append(part)
                continue
            if item.dtype.kind not in "iu":
                raise IndexError(
                    f"kenaz indexing: index arrays must be integer or boolean, got dtype {item.dtype}"
                )
            spec.append(ARRAY)
            arrays.append(item)
    return tuple(spec), arrays


def join_index(spec: tuple[Any, ...], arrays) -> tuple[Any, ...]:
    """Rebuild a NumPy index from ``spec`` and the NumPy values of its index arrays."""
    it = iter(arrays)
    return tuple(next(it) if item is ARRAY else item for item in spec)


def _zeros_like(x: Tensor) -> Tensor:
    return Tensor(np.zeros(x.shape, dtype=x.dtype))


# -- gather ----------------------------------------------------------------------------
def _gather_impl(x, *arrays, spec):
    return x[join_index(spec, arrays)]


def _gather_vjp(ans, x, *arrays, spec):
    x_shape, x_dtype = x.shape, x.dtype

    def pullback(g):
        zeros = Tensor(np.zeros(x_shape, dtype=x_dtype))
        return _scatter["add"](zeros, g, *arrays, spec=spec)

    return pullback


gather = Op(
    "gather",
    _gather_impl,
    jvp=[lambda t, ans, x, *arrays, spec: gather(t, *arrays, spec=spec)],
    vjp=[_gather_vjp],
)


def getitem(x, index) -> Tensor:
    """``x[index]`` with NumPy's basic and advanced indexing."""
    spec, arrays = split_index(index)
    return gather(x, *arrays, spec=spec)


# -- scatter -----------------------------------------------------------------------------
def _scatter_impl(mode: str):
    accumulate = {"add": np.add, "multiply": np.multiply, "min": np.minimum, "max": np.maximum}

    def impl(x, values, *arrays, spec):
        out = np.array(x, copy=True)
        index = join_index(spec, arrays)
        values = np.asarray(values).astype(out.dtype, copy=False)
        if mode == "set":
            out[index] = values
        elif not arrays:  # basic indexing selects each element once
            out[index] = accumulate[mode](out[index], values)
        else:
            accumulate[mode].at(out, index, values)
        return out

    return impl


def _gathered_cotangent(values: Any, pick):
    """Pullback for ``values``: ``pick(g)`` (the cotangent at the index) summed to its shape."""
    from . import reduction

    v_shape, v_dtype = values.shape, values.dtype  # only a tracked Tensor gets a pullback

    def pullback(g):
        return reduction.sum_to(pick(g), v_shape, v_dtype)

    return pullback


def _rules_set():
    jvp = [
        lambda t, ans, x, v, *a, spec: _scatter["set"](t, 0, *a, spec=spec),
        lambda t, ans, x, v, *a, spec: _scatter["set"](_zeros_like(ans), t, *a, spec=spec),
    ]
    vjp = [
        lambda ans, x, v, *a, spec: lambda g: _scatter["set"](g, 0, *a, spec=spec),
        lambda ans, x, v, *a, spec: _gathered_cotangent(v, lambda g: gather(g, *a, spec=spec)),
    ]
    return jvp, vjp


def _rules_add():
    jvp = [
        lambda t, ans, x, v, *a, spec: t,
        lambda t, ans, x, v, *a, spec: _scatter["add"](_zeros_like(ans), t, *a, spec=spec),
    ]
    vjp = [
        lambda ans, x, v, *a, spec: lambda g: g,
        lambda ans, x, v, *a, spec: _gathered_cotangent(v, lambda g: gather(g, *a, spec=spec)),
    ]
    return jvp, vjp


def _rules_multiply():
    # Assumes each position is selected once, as JAX's rule does.
    jvp = [
        lambda t, ans, x, v, *a, spec: _scatter["multiply"](t, v, *a, spec=spec),
        lambda t, ans, x, v, *a, spec: _scatter["add"](
            _zeros_like(ans), gather(x, *a, spec=spec) * t, *a, spec=spec
        ),
    ]
    vjp = [
        lambda ans, x, v, *a, spec: lambda g: _scatter["multiply"](g, v, *a, spec=spec),
        lambda ans, x, v, *a, spec: _gathered_cotangent(
            v, lambda g: gather(g, *a, spec=spec) * gather(x, *a, spec=spec)
        ),
    ]
    return jvp, vjp


def _rules_chooser():
    # The derivative goes to whichever of x and the value ended up in the output
    # (to both on a tie).
    def x_weight(ans, x):
        return (ans == x).astype(ans.dtype)

    def v_weight(ans, v, a, spec):
        return (gather(ans, *a, spec=spec) == v).astype(ans.dtype)

    jvp = [
        lambda t, ans, x, v, *a, spec: t * x_weight(ans, x),
        lambda t, ans, x, v, *a, spec: _scatter["add"](
            _zeros_like(ans), t * v_weight(ans, v, a, spec), *a, spec=spec
        ),
    ]
    vjp = [
        lambda ans, x, v, *a, spec: lambda g: g * x_weight(ans, x),
        lambda ans, x, v, *a, spec: _gathered_cotangent(
            v, lambda g: gather(g, *a, spec=spec) * v_weight(ans, v, a, spec)
        ),
    ]
    return jvp, vjp


_RULES = {
    "set": _rules_set,
    "add": _rules_add,
    "multiply": _rules_multiply,
    "min": _rules_chooser,
    "max": _rules_chooser,
}
_scatter: dict[str, Op] = {}
for _mode, _rules in _RULES.items():
    _jvp, _vjp = _rules()
    _scatter[_mode] = Op(f"scatter_{_mode}", _scatter_impl(_mode), jvp=_jvp, vjp=_vjp)


def scatter(x, index, values, mode: str) -> Tensor:
    """A copy of ``x`` with ``values`` combined into ``x[index]`` by ``mode``
    (``"set"``, ``"add"``, ``"multiply"``, ``"min"`` or ``"max"``)."""
    if mode not in _scatter:
        raise ValueError(f"kenaz scatter: unknown mode {mode!r}; use one of {sorted(_scatter)}")
    spec, arrays = split_index(index)
    return _scatter[mode](x, values, *arrays, spec=spec)
