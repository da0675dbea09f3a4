"""What the transformations check of what they are given, and the errors that say so.

``argnums``, ``has_aux`` pairs, the dtypes of differentiated inputs, tangents
against their primals, and ``grad``'s output: each check next to its error
message, shared by ``grad``/``vjp`` (:mod:`kenaz.reverse`), ``jvp``/
``linearize`` (:mod:`kenaz.forward`) and the Jacobians; and ``vmap``'s
(:mod:`kenaz.vectorize`) axes and the errors of its batched values.

Integer and boolean values have no derivative, and a zero would look like
one. So every transformation refuses an integer input unless
``allow_int=True``, and then its derivative (gradient, cotangent, Jacobian
block, the tangent of an integer output) is a :data:`float0` array: JAX's
marker, a NumPy array of the right shape whose elements hold no data, which
arithmetic refuses (NumPy has no loop for it) and ``Tensor`` will not wrap.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import optree

from . import tree
from .backend import numpy_dtype
from .convert import leaf_tensor
from .errors import ConcretizationError, EscapedTracerError, ShapeError, broadcast_error
from .tensor import Tensor
from .tree import NAMESPACE

__all__ = [
    "float0",
    "float0_zeros",
    "is_float0",
    "derivative_leaf",
    "check_integer_cotangent",
    "normalize_argnums",
    "select",
    "split_aux",
    "leaf_dtype",
    "check_inputs",
    "input_tensors",
    "input_leaves",
    "check_complex_inputs",
    "check_tangent",
    "flatten_pair",
    "grad_output_error",
    "grad_complex_error",
    "check_vmap_arguments",
    "argument_name",
    "axes_prefix",
    "output_name",
    "out_axis",
    "batched_value_error",
    "per_example_shape_error",
]


float0 = np.dtype([("float0", np.void, 0)])
"""The dtype of the derivative of an integer or boolean value (JAX's ``float0``).

A structured dtype of no bytes: an array of it has a shape and no values, and
NumPy has no arithmetic for it, so it cannot pass for a zero. ``grad``, ``vjp``
and the Jacobians return one for an integer input under ``allow_int=True``;
``jvp`` and ``linearize`` for an integer output. ``numpy.zeros(shape,
kenaz.float0)`` is the tangent (cotangent) to give for an integer input (output).
"""


def float0_zeros(shape: tuple[int, ...]) -> np.ndarray:
    """The derivative of an integer or boolean value of shape ``shape``: a :data:`float0` array.

    Examples
    --------
    >>> import kenaz
    >>> kenaz.grad(lambda x, n: x * n, argnums=1, allow_int=True)(2.0, 3).dtype == kenaz.float0
    True
    """
    return np.zeros(shape, dtype=float0)


def is_float0(x: Any) -> bool:
    """Whether ``x`` is a :data:`float0` array (the derivative of an integer value)."""
    # A Tensor first: an isinstance that fails on one reads its `__class__` property.
    return not isinstance(x, Tensor) and isinstance(x, np.ndarray) and x.dtype == float0


def derivative_leaf(x: Any, where: str) -> Any:
    """A leaf of a transformation's inputs or outputs as a tensor (``leaf_tensor``); a
    float0 array, the derivative of an integer from an inner transformation, stays as it is."""
    return x if is_float0(x) else leaf_tensor(x, where)


def check_tangent(
    primal: Tensor, tangent: Tensor, where: str, what: str = "tangent", of: str = "a primal"
) -> Tensor:
    """``tangent`` checked against ``primal`` (same shape; a complex one only for a
    complex primal) and cast to the primal's dtype."""
    if tangent.shape != primal.shape:
        raise ValueError(
            f"kenaz.{where}: a {what} of shape {tangent.shape} was given for {of} of shape "
            f"{primal.shape}; they must match"
        )
    if tangent.dtype != primal.dtype:
        if tangent.dtype.kind not in "fciub":
            raise TypeError(f"kenaz.{where}: {what} dtype {tangent.dtype} is not numeric")
        if tangent.dtype.kind == "c" and primal.dtype.kind != "c":
            raise TypeError(
                f"kenaz.{where}: a complex {what} ({tangent.dtype}) was given for {of} of real "
                f"dtype {primal.dtype}; pass a real {what}, or make the primal complex"
            )
        if primal.dtype.kind in "fc":
            tangent = tangent.astype(primal.dtype)
    return tangent


def split_aux(result: Any, where: str) -> tuple[Any, Any]:
    if not (isinstance(result, (tuple, list)) and len(result) == 2):
        raise TypeError(
            f"kenaz.{where}: with has_aux=True the function must return a pair (output, aux), "
            f"got {type(result).__name__}"
        )
    return result[0], result[1]


def normalize_argnums(argnums: int | Sequence[int], nargs: int, where: str) -> tuple[int, ...]:
    if type(argnums) is int and 0 <= argnums < nargs:  # the common case (argnums=0): valid
        return (argnums,)
    if isinstance(argnums, (int, np.integer)):
        nums: tuple[Any, ...] = (argnums,)
    elif isinstance(argnums, (tuple, list)):
        nums = tuple(argnums)
    else:
        raise TypeError(
            f"kenaz.{where}: argnums must be an int or a tuple of ints, got {argnums!r}"
        )
    if not nums:
        raise ValueError(f"kenaz.{where}: argnums is empty; name at least one argument")
    for n in nums:
        if not isinstance(n, (int, np.integer)) or not -nargs <= n < nargs:
            raise ValueError(
                f"kenaz.{where}: argnums={argnums!r} is out of range for a call with "
                f"{nargs} positional argument{'s' if nargs != 1 else ''}"
            )
    normalized = tuple(int(n) % nargs for n in nums)
    if len(set(normalized)) != len(normalized):
        raise ValueError(
            f"kenaz.{where}: argnums={argnums!r} names the same argument twice; name each once"
        )
    return normalized


def select(f: Callable, args: tuple, kwargs: dict, nums: tuple[int, ...]) -> tuple[Callable, tuple]:
    """``f`` as a function of the arguments at positions ``nums`` only (``f`` itself when
    those are all the arguments, in order), and those arguments."""
    if not kwargs and nums == tuple(range(len(args))):
        return f, args

    def f_of_selected(*selected: Any) -> Any:
        full = list(args)
        for n, value in zip(nums, selected):
            full[n] = value
        return f(*full, **kwargs)

    return f_of_selected, tuple(args[n] for n in nums)


def leaf_dtype(leaf: Any) -> np.dtype:
    """The NumPy dtype of an input leaf, without converting it (that would compute Dask's)."""
    if isinstance(leaf, Tensor):
        return leaf.dtype
    if hasattr(leaf, "dtype"):  # a NumPy value, or a backend's array
        return numpy_dtype(leaf.dtype)
    return np.asarray(leaf).dtype


def check_inputs(args: Sequence[Any], allow_int: bool, where: str) -> None:
    """Refuse integer and boolean leaves of the ``(position, argument)`` pairs ``args``
    unless ``allow_int`` (a float0 leaf, itself an integer's derivative, counts as one)."""
    if allow_int:
        return
    for position, arg in args:
        for leaf in [arg] if isinstance(arg, Tensor) else tree.leaves(arg):
            dtype = leaf_dtype(leaf)
            if dtype.kind not in "fc":
                # The fix for what the user passed: a Python number has no `.astype`.
                fix = (
                    f"pass a float ({float(leaf)!r} for {leaf!r})"
                    if type(leaf) in (int, bool)
                    else "convert it with `.astype(float)`"
                )
                raise TypeError(
                    f"kenaz.{where}: argument {position} has dtype {dtype}, but only float and "
                    f"complex inputs can be differentiated; {fix}, or pass allow_int=True to "
                    "hold integer inputs constant (their derivatives are then kenaz.float0 "
                    "arrays, which arithmetic refuses)"
                )


def input_tensors(
    primals: tuple, allow_int: bool, where: str, positions: Sequence[int] | None = None
) -> tuple[list[Any], Any]:
    """The leaves of the arguments ``primals`` as tensors, and their structure: the way in
    of a transformation's inputs.

    Each leaf is converted once, by the one way in (``kenaz.convert.as_tensor``, through
    :func:`derivative_leaf`), and its dtype read off the tensor: an integer or boolean
    one is refused unless ``allow_int`` (:func:`check_inputs`' error, naming the
    argument by its position, ``positions[i]`` for ``primals[i]``).
    """
    flat, treedef = tree.flatten(primals)
    return input_leaves(flat, primals, allow_int, where, positions), treedef


def input_leaves(
    flat: list[Any],
    primals: tuple,
    allow_int: bool,
    where: str,
    positions: Sequence[int] | None = None,
) -> list[Any]:
    """The leaves ``flat`` of the arguments ``primals`` as tensors (:func:`input_tensors`,
    for a caller that flattened them itself)."""
    try:
        leaves = [x if isinstance(x, Tensor) else derivative_leaf(x, where) for x in flat]
    except TypeError:  # no array: the dtype error first, if there is one
        check_inputs(list(zip(positions or range(len(primals)), primals)), allow_int, where)
        raise
    if not allow_int:
        for leaf in leaves:
            if leaf.dtype.kind not in "fc":
                pairs = list(zip(positions or range(len(primals)), primals))
                check_inputs(pairs, allow_int, where)  # raises, naming the argument
    return leaves


def check_integer_cotangent(
    output: Any, cotangent: Any, allow_int: bool, where: str, what: str = "cotangent"
) -> None:
    """A cotangent (tangent) given for an integer, boolean or float0 ``output``.

    It carries no derivative, so only a :data:`float0` array of the output's
    shape is accepted, as in JAX; with ``allow_int`` any numeric one is, and
    ignored. A float one is refused otherwise: it would be silently dropped.
    """
    shape = np.shape(cotangent)
    if shape != tuple(output.shape):
        raise ValueError(
            f"kenaz.{where}: a {what} of shape {shape} was given for an output of shape "
            f"{tuple(output.shape)}; they must match"
        )
    if is_float0(cotangent) or allow_int:
        return
    raise TypeError(
        f"kenaz.{where}: a {what} of dtype {leaf_dtype(cotangent)} was given for an output of "
        f"dtype {output.dtype}, which carries no derivative; pass "
        f"`numpy.zeros({shape}, kenaz.float0)` for it, or pass allow_int=True to have {what}s "
        "of integer outputs ignored"
    )


def check_complex_inputs(args: Sequence[Any], where: str) -> None:
    for position, arg in args:
        for leaf in tree.leaves(arg):
            dtype = leaf_dtype(leaf)
            if dtype.kind != "c":
                raise TypeError(
                    f"kenaz.{where}: with holomorphic=True the inputs must be complex, but "
                    f"argument {position} has dtype {dtype}; convert it with `.astype(complex)`"
                )


def grad_complex_error(out: Tensor, holomorphic: bool, where: str = "grad") -> str:
    if holomorphic:
        return (
            f"kenaz.{where}: with holomorphic=True the function must return a complex scalar, "
            f"got dtype {out.dtype}"
        )
    return (
        f"kenaz.{where}: the function returned a complex scalar ({out.dtype}); pass "
        "holomorphic=True for the complex derivative of a holomorphic function, or return a "
        "real value (e.g. `abs(z) ** 2` or `z.real`)"
    )


def grad_output_error(out: Any, where: str = "grad") -> str:
    if isinstance(out, Tensor) and out.shape != ():
        return (
            f"kenaz.{where}: the function must return a scalar (shape ()), but it returned shape "
            f"{out.shape}; reduce it (e.g. `.sum()`), or use `vjp` or `jacrev` for "
            "non-scalar outputs"
        )
    if isinstance(out, Tensor):
        return (
            f"kenaz.{where}: the function must return a real float scalar, got dtype {out.dtype}; "
            "cast it with `.astype(float)`"
        )
    return (
        f"kenaz.{where}: the function must return a single scalar, got a pytree "
        f"({type(out).__name__}); use `vjp` for several outputs, or has_aux=True for extra values"
    )


def flatten_pair(primals: Any, tangents: Any, where: str, allow_int: bool = False):
    """The leaves of ``primals`` (tensors) and of ``tangents`` (checked against them), and
    the primals' structure. An integer primal is refused unless ``allow_int``; then its
    tangent is checked by :func:`check_integer_cotangent` and becomes a float0 array."""
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError(
            f"kenaz.{where}: primals and tangents must be tuples or lists (one entry per "
            f"argument), got {type(primals).__name__} and {type(tangents).__name__}; "
            "write jvp(f, (x,), (t,))"
        )
    primals, tangents = tuple(primals), tuple(tangents)
    t_flat, t_tree = tree.flatten(tangents)
    p_flat, p_tree = tree.flatten(primals)
    if p_tree != t_tree:
        raise ValueError(
            f"kenaz.{where}: the tangents' structure {t_tree} differs from the primals' {p_tree}"
        )
    p_flat = input_leaves(p_flat, primals, allow_int, where)
    checked: list[Any] = []
    for p, t in zip(p_flat, t_flat):
        if p.dtype.kind in "fc":
            t = t if isinstance(t, Tensor) else leaf_tensor(t, where)
            checked.append(check_tangent(p, t, where))
        else:  # allowed: held constant, whatever its tangent
            check_integer_cotangent(p, t, allow_int, where, "tangent")
            checked.append(float0_zeros(p.shape))
    return p_flat, checked, p_tree


# -- vmap: its axes, and the errors of batched values -------------------------------------
def check_vmap_arguments(in_axes: Any, out_axes: Any, axis_size: Any, method: str) -> Any:
    """``vmap``'s arguments checked; ``in_axes`` returned (a list becomes a tuple: one entry
    per argument, as a tuple)."""
    if method not in ("vectorize", "loop"):
        raise ValueError(f"kenaz.vmap: method must be 'vectorize' or 'loop', got {method!r}")
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)
    for axes, name, of in ((in_axes, "in_axes", "arguments"), (out_axes, "out_axes", "outputs")):
        # Ints, None and tuples of them without optree: its flatten briefly releases the GIL, and a
        # thread doing that every few hundred microseconds starves threads that wait for it.
        # (`type(...) is int` leaves out bools: such axes need no further check)
        if axes is None or type(axes) is int:
            continue
        if type(axes) is tuple:
            for a in axes:  # (a loop, not `all(...)`: no generator to make)
                if a is not None and type(a) is not int:
                    break
            else:
                continue
        for leaf in optree.tree_leaves(axes, none_is_leaf=True, namespace=NAMESPACE):
            if leaf is not None and (
                not isinstance(leaf, (int, np.integer)) or isinstance(leaf, bool)
            ):
                raise TypeError(
                    f"kenaz.vmap: {name} must contain ints and None (as a pytree prefix of the "
                    f"{of}), got {leaf!r} in {axes!r}"
                )
    if axis_size is not None and (not isinstance(axis_size, (int, np.integer)) or axis_size < 0):
        raise ValueError(f"kenaz.vmap: axis_size must be a non-negative int, got {axis_size!r}")
    return in_axes


def argument_name(key: Any) -> str:
    """``argument 0`` or ``keyword argument 'w'`` (for errors)."""
    return f"argument {key}" if isinstance(key, int) else f"keyword argument {key!r}"


def axes_prefix(prefix: Any, value: Any, what: str) -> list[Any]:
    """The leaves of the axes ``prefix`` broadcast to the leaves of ``value`` (a pytree prefix)."""
    try:
        full = optree.tree_broadcast_prefix(prefix, value, none_is_leaf=True, namespace=NAMESPACE)
    except ValueError as error:
        raise ValueError(
            f"kenaz.vmap: {what} ({prefix!r}) is not a pytree prefix: {error}"
        ) from None
    return optree.tree_leaves(full, none_is_leaf=True, namespace=NAMESPACE)


def output_name(result: Any, index: int) -> str:
    """Where leaf ``index`` is in ``result``, e.g. ``['loss']`` (for errors)."""
    paths = optree.tree_paths(result, none_is_leaf=True, namespace=NAMESPACE)
    return "".join(f"[{key!r}]" for key in paths[index]) or "(the only one)"


def out_axis(axis: int, batched_ndim: int, result: Any, index: int) -> int:
    """The out axis of output ``index`` of ``result`` (of ``batched_ndim`` dimensions with its
    batch axis), checked and made non-negative."""
    if not -batched_ndim <= axis < batched_ndim:
        raise ValueError(
            f"kenaz.vmap: out_axes asks for axis {axis} in output {output_name(result, index)}, "
            f"which has {batched_ndim - 1} per-example dimension(s); the axis must be in "
            f"[{-batched_ndim}, {batched_ndim})"
        )
    return int(axis) % batched_ndim


def batched_value_error(shape: tuple, dtype: Any, axis_size: int, alive: bool) -> Exception:
    """The error for asking a batched view of ``vmap`` (per-example ``shape`` and ``dtype``,
    a batch of ``axis_size``) for a concrete value; ``alive``: its vmap is running."""
    if not alive:
        return EscapedTracerError(
            f"kenaz.vmap: a per-example tensor (shape {shape}, dtype {dtype}) was used after "
            "the vmap that created it returned, e.g. because it was stored in a global "
            "variable or a closure. It has no value outside that vmap; return it from the "
            "vmapped function instead."
        )
    return ConcretizationError(
        f"kenaz.vmap: a concrete value was requested (bool, float, int, .numpy(), `if`, ...) "
        f"of a batched tensor with per-example shape {shape} and dtype {dtype}. Inside vmap "
        f"it stands for {axis_size} different values, so Python control flow cannot depend "
        'on it. Use vmap(f, method="loop") to run f once per example, or express the choice '
        "with kenaz.numpy.where."
    )


def per_example_shape_error(name: str, args: tuple, error: ShapeError) -> ShapeError:
    """``error`` of op ``name`` restated with the per-example shapes the user's code works with."""
    shapes = [a.shape if isinstance(a, Tensor) else np.shape(a) for a in args]
    return broadcast_error(name, shapes, " inside vmap") or error
