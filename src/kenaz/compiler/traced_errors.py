"""Where a traced tensor was asked for its value, and the error that says so.

Reading the value of a tracer raises :func:`traced_value_error`, a
:class:`~kenaz.errors.ConcretizationError` naming how it was asked (``bool()``,
``float()``...) and the user's line that asked. Some callers ask and catch it
at once (a value only if there is one: ``kenaz.backend.value_of``, once per
``grad`` under ``jit``), so the error finds both in one walk up the stack, each
file's place resolved once, and writes its text only when it is read.
:func:`user_frame` also names the line of a purity check's changed constant.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from ..errors import ConcretizationError
from .ir import Var

__all__ = ["traced_value_error", "asked_where", "user_frame"]

# The kenaz package (this module sits in kenaz/compiler/): frames in it are not the user's.
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_NUMPY_DIR = os.path.dirname(os.path.abspath(np.__file__))

# What each way of asking for a value is called in the error.
_ASKED_BY = {
    "__bool__": "bool() (an `if`, `while`, `and`, `or` or `not` on it)",
    "__float__": "float()",
    "__int__": "int()",
    "__complex__": "complex()",
    "__index__": "its use as an int (an index, a shape, a range)",
    "numpy": ".numpy()",
    "__array__": "numpy.asarray() (a NumPy function called on it)",
    "item": ".item()",
    "tolist": ".tolist()",
    "_plain_argument": "its use as a shape or a fill value",
}


def traced_value_error(name: str, var: Var, frame: Any) -> ConcretizationError:
    """The error for asking ``var``'s tracer in the trace of ``name`` for its value (``frame``
    asked): where it was asked is found now (the frames move on), the text when it is read."""
    asked_by, where = asked_where(frame)
    return ConcretizationError.written_when_read(
        lambda: _traced_value_message(name, var, asked_by, where)
    )


def _traced_value_message(name: str, var: Var, asked_by: str, where: str) -> str:
    return (
        f"kenaz.jit: {name!r} asked for the concrete value of a traced tensor "
        f"({var.type_name}) through {asked_by}{where}. While a function is traced its "
        "inputs stand for every value of their shape and dtype, so Python cannot branch "
        "on them or read them. Fixes: make that argument static (kenaz.jit(f, "
        "static_argnums=...) or static_argnames), express the choice with "
        "kenaz.numpy.where, or do not jit this function."
    )


def asked_where(frame: Any) -> tuple[str, str]:
    """How the value was asked for (the innermost kenaz frame that names it: ``__bool__``...)
    and where (:func:`user_frame`), in one walk up from ``frame``."""
    asked_by = None
    in_kenaz = True  # still in the kenaz frames the asker is among
    while frame is not None:
        code = frame.f_code
        kind = _file_kinds.get(code.co_filename)
        if kind is None:
            kind = _file_kind(code.co_filename)
        if in_kenaz:
            if kind == _KENAZ:
                asked_by = asked_by or _ASKED_BY.get(code.co_name)
            else:
                in_kenaz = False
        if kind == _USER:
            where = f" at {code.co_filename}:{frame.f_lineno} (in {code.co_name})"
            return asked_by or "reading its value", where
        frame = frame.f_back
    return asked_by or "reading its value", ""


# File name -> where it is: kenaz, NumPy or the user's. Both errors above are built where
# they are raised and some are caught at once (``kenaz.backend.value_of`` asks a tracer for
# its value once per ``grad`` under ``jit``), so each file's path is resolved once.
_USER, _NUMPY, _KENAZ = 0, 1, 2
_file_kinds: dict[str, int] = {}


def _file_kind(filename: str) -> int:
    path = os.path.abspath(filename)
    kind = (
        _KENAZ
        if path.startswith(_PACKAGE_DIR)
        else _NUMPY
        if path.startswith(_NUMPY_DIR)
        else _USER
    )
    _file_kinds[filename] = kind
    return kind


def user_frame(frame: Any) -> str:
    """`` at file.py:12 in loss``: the innermost frame outside kenaz and NumPy."""
    while frame is not None:
        code = frame.f_code
        kind = _file_kinds.get(code.co_filename)
        if kind is None:
            kind = _file_kind(code.co_filename)
        if kind == _USER:
            return f" at {code.co_filename}:{frame.f_lineno} (in {code.co_name})"
        frame = frame.f_back
    return ""
