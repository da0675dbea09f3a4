"""Binds Tensor's operators and methods to the primitives they perform.

``kenaz.tensor`` defines the operators (``x + y`` performs ``add``) and the
ndarray methods (``x.sum()``), but it sits below the effects and the
primitives, which import it, so it cannot import them. This module, above
them all, sets the module-level names those operators read, once, when
``kenaz.numpy`` is imported (``import kenaz`` does it first thing).
"""

from __future__ import annotations

from types import ModuleType

from .. import mutation as _mutation
from .. import ndarray_methods as _ndarray_methods
from .. import tensor as _tensor
from ..convert import check_convertible, check_number, tracked_by_running
from ..effects import perform_args
from ..operators import binary_operator, matmul_operator
from ..ops import elementwise as _ew
from ..ops import indexing as _indexing
from ..ops import linalg as _linalg
from ..ops import shape as _shape
from . import _dispatch, _signatures

_OPERATOR_PRIMITIVES = {
    _ew: (
        "absolute", "add", "alias", "astype", "bitwise_and", "bitwise_or", "bitwise_xor",
        "conjugate", "divide", "equal", "floor_divide", "greater", "greater_equal", "imag",
        "invert", "less", "less_equal", "multiply", "negative", "not_equal", "power", "real",
        "remainder", "square", "subtract",
    ),
    _indexing: ("getitem", "scatter"),
    _linalg: ("dot", "matmul"),
    _shape: ("ravel", "reshape", "squeeze", "swapaxes", "transpose"),
}  # fmt: skip

# Tensor's binary operators: (operator, reflected operator or None, primitive).
_BINARY_OPERATORS = (
    ("__add__", "__radd__", _ew.add),
    ("__sub__", "__rsub__", _ew.subtract),
    ("__mul__", "__rmul__", _ew.multiply),
    ("__truediv__", "__rtruediv__", _ew.divide),
    ("__floordiv__", "__rfloordiv__", _ew.floor_divide),
    ("__mod__", "__rmod__", _ew.remainder),
    ("__and__", "__rand__", _ew.bitwise_and),
    ("__or__", "__ror__", _ew.bitwise_or),
    ("__xor__", "__rxor__", _ew.bitwise_xor),
    ("__eq__", None, _ew.equal),
    ("__ne__", None, _ew.not_equal),
    ("__lt__", None, _ew.less),
    ("__le__", None, _ew.less_equal),
    ("__gt__", None, _ew.greater),
    ("__ge__", None, _ew.greater_equal),
)


def bind(knp: ModuleType) -> None:
    """Set ``kenaz.tensor``'s names for the primitives, and ``Tensor.__getitem__``.

    ``knp`` is ``kenaz.numpy`` itself (it calls this while loading: the methods
    it backs, ``x.argsort()`` and the like, read it only when called).
    """
    for names in (vars(_tensor), vars(_ndarray_methods)):
        names["perform_args"] = perform_args
        names["_numpy_api"] = _signatures
        names["_knp"] = knp
        names["_mutation"] = _mutation
        names["_copy"] = _ew.copy
        names["_wrap"] = _tensor._make
        names["check_convertible"] = check_convertible
        names["check_number"] = check_number
        names["tracked_by_running"] = tracked_by_running
        names["array_ufunc"] = _dispatch.array_ufunc
        names["array_function"] = _dispatch.array_function
        for module, primitives in _OPERATOR_PRIMITIVES.items():
            for name in primitives:
                names[name] = getattr(module, name)
    # `x[index]` is `getitem(x, index)` for a Tensor `x`, with no wrapper frame (a third of
    # a basic index's time).
    _tensor.Tensor.__getitem__ = _indexing.tensor_getitem  # type: ignore[method-assign]
    # The operators perform their primitive with perform's eager path inlined (see
    # `kenaz.operators.binary_operator`).
    for name, reflected_name, op in _BINARY_OPERATORS:
        setattr(_tensor.Tensor, name, binary_operator(name, op))
        if reflected_name:
            setattr(_tensor.Tensor, reflected_name, binary_operator(reflected_name, op, True))
    _tensor.Tensor.__matmul__ = matmul_operator(_linalg.matmul)  # type: ignore[method-assign]
