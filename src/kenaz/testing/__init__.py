"""Checking derivatives: finite differences against ``jvp`` and ``vjp``.

Two checks, for users and for kenaz's own tests:

- :func:`check_grads` checks a whole function: its ``jvp`` against central
  finite differences, its ``vjp`` against them through the dot-product form,
  and, recursively up to ``order``, the derivatives of the ``jvp`` and ``vjp``
  functions themselves (as JAX's ``check_grads`` does).
- :func:`check_op` checks one primitive's rules: the jvp rule against finite
  differences, the vjp rule against the jvp rule by the dot-product test
  ``<v, J u> == <J^T v, u>``, the dtypes and shapes of tangents and
  cotangents, and that neither the primal nor the rules modify their inputs.

Finite differences are taken in float64 (float32 and float16 inputs are
upcast), so the reference is accurate and the tolerance reflects the
precision of the derivatives being checked. Tolerances and the step come from
the lowest floating precision among the inputs and outputs unless given.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import tree
from ..checks import float0_zeros, is_float0
from ..effects import Op
from ..forward import jvp
from ..reverse import vjp
from ..tensor import Tensor

__all__ = ["check_grads", "check_op", "numerical_jvp", "Tolerance", "default_tolerance"]


# -- tolerances ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Tolerance:
    """Finite-difference step and the allowed error ``atol + rtol * |expected|``."""

    eps: float
    atol: float
    rtol: float


# By the lowest precision involved. The step is large enough that a float32
# function evaluated at x +- eps loses little to rounding, and small enough that
# the O(eps**2) truncation error of central differences stays below the tolerance.
_DEFAULT_TOLERANCES = {
    np.dtype(np.float16): Tolerance(eps=1e-2, atol=5e-2, rtol=5e-2),
    np.dtype(np.float32): Tolerance(eps=1e-3, atol=2e-3, rtol=2e-3),
    np.dtype(np.float64): Tolerance(eps=1e-5, atol=1e-5, rtol=1e-5),
}


def default_tolerance(dtype: Any) -> Tolerance:
    """The default step and tolerances for derivatives computed in ``dtype``.

    Examples
    --------
    >>> import numpy as np
    >>> from kenaz.testing import default_tolerance
    >>> default_tolerance(np.float32).rtol
    0.002
    """
    real = np.finfo(np.dtype(dtype)).dtype  # complex64 -> float32
    return _DEFAULT_TOLERANCES.get(real, _DEFAULT_TOLERANCES[np.dtype(np.float64)])


def _dtype_of(x: Any) -> np.dtype:
    # A Tensor's own (NumPy) dtype, also for another backend's value; else NumPy's reading.
    return x.dtype if isinstance(x, Tensor) else np.result_type(x)


def _is_inexact(x: Any) -> bool:
    return _dtype_of(x).kind in "fc"


def _lowest_precision(*trees: Any) -> np.dtype:
    """The float dtype with the fewest bits among the inexact leaves of ``trees``."""
    dtypes = [
        np.finfo(_dtype_of(leaf)).dtype
        for t in trees
        for leaf in tree.leaves(t)
        if _is_inexact(leaf)
    ]
    return min(dtypes, key=lambda d: d.itemsize, default=np.dtype(np.float64))


def _tolerance(
    args: Any, out: Any, eps: float | None, atol: float | None, rtol: float | None
) -> Tolerance:
    default = default_tolerance(_lowest_precision(args, out))
    return Tolerance(
        eps=default.eps if eps is None else eps,
        atol=default.atol if atol is None else atol,
        rtol=default.rtol if rtol is None else rtol,
    )


# -- values, random directions, finite differences -----------------------------------------
def _numpy(x: Any) -> np.ndarray:
    return np.asarray(x)


def _upcast(x: Any) -> np.ndarray:
    """``x`` as a NumPy value at full precision (float64 or complex128) if it is inexact."""
    value = _numpy(x)
    if value.dtype.kind == "f":
        return value.astype(np.float64)
    if value.dtype.kind == "c":
        return value.astype(np.complex128)
    return value


def _as_tensors(values: Any) -> Any:
    """The leaves of ``values`` as Tensors, as a user's function receives them from kenaz
    (a float0 leaf, the derivative of an integer, stays as it is)."""
    return tree.map(
        lambda leaf: leaf if isinstance(leaf, Tensor) or is_float0(leaf) else Tensor(leaf), values
    )


def _random_like(rng: np.random.Generator, x: Any) -> np.ndarray:
    """Standard normal values shaped and typed like ``x``; for integer and bool ``x`` (no
    derivative) a float0 array, as the transformations give and take."""
    value = _numpy(x)
    if value.dtype.kind == "f":
        return rng.standard_normal(value.shape).astype(value.dtype)
    if value.dtype.kind == "c":
        parts = rng.standard_normal((2, *value.shape))
        return (parts[0] + 1j * parts[1]).astype(value.dtype)
    return float0_zeros(value.shape)


def _random_tree_like(rng: np.random.Generator, values: Any) -> Any:
    return tree.map(lambda x: _random_like(rng, x), values)


def numerical_jvp(
    f: Callable[..., Any], args: Sequence[Any], tangents: Sequence[Any], eps: float
) -> Any:
    """Central finite differences ``(f(x + eps t) - f(x - eps t)) / (2 eps)``, in float64.

    Parameters
    ----------
    f : callable
        Function of ``len(args)`` pytree arguments returning a pytree.
    args, tangents : sequence
        The point and the direction (pytrees of the same structure).
    eps : float
        The step.

    Returns
    -------
    pytree of numpy.ndarray
        Shaped like ``f``'s output; float64 (complex128 for complex outputs),
        and zeros for integer and boolean outputs, whose derivative is zero.

    Examples
    --------
    >>> import kenaz.numpy as knp
    >>> from kenaz.testing import numerical_jvp
    >>> float(numerical_jvp(knp.sin, (0.0,), (1.0,), eps=1e-5))  # doctest: +ELLIPSIS
    0.99999999998...
    """

    def shifted(sign: float) -> Any:
        moved = tree.map(
            lambda x, t: _upcast(x) + sign * eps * _upcast(t) if _is_inexact(x) else _numpy(x),
            tuple(args),
            tuple(tangents),
        )
        return tree.map(_upcast, f(*_as_tensors(moved)))

    def difference(plus: np.ndarray, minus: np.ndarray) -> np.ndarray:
        if plus.dtype.kind not in "fc":
            return np.zeros(plus.shape, dtype=np.float64)
        return (plus - minus) / (2 * eps)

    return tree.map(difference, shifted(1.0), shifted(-1.0))


# -- comparisons -------------------------------------------------------------------------------
def _fail(where: str, what: str, detail: str) -> AssertionError:
    return AssertionError(f"kenaz.testing.{where}: {what}: {detail}")


def _assert_trees_close(actual: Any, expected: Any, tol: Tolerance, where: str, what: str) -> None:
    """Leafwise ``|actual - expected| <= atol + rtol * |expected|``, naming the worst error."""
    actual_leaves, expected_leaves = tree.leaves(actual), tree.leaves(expected)
    if len(actual_leaves) != len(expected_leaves):
        raise _fail(where, what, f"{len(actual_leaves)} outputs, expected {len(expected_leaves)}")
    for position, (a, e) in enumerate(zip(actual_leaves, expected_leaves, strict=True)):
        a, e = _upcast(a), _upcast(e)
        if a.shape != e.shape:
            raise _fail(where, what, f"output {position} has shape {a.shape}, expected {e.shape}")
        if is_float0(a) or is_float0(e):  # no derivative: the other side must be zero too
            other = e if is_float0(a) else a
            if other.dtype.kind in "fc" and np.any(other != 0):
                raise _fail(where, what, f"output {position} has no derivative, expected {e}")
            continue
        if a.dtype.kind not in "fc" and e.dtype.kind not in "fc":
            if not np.array_equal(a, e):
                raise _fail(where, what, f"output {position} (of dtype {a.dtype}) differs")
            continue
        error = np.abs(a - e)
        allowed = tol.atol + tol.rtol * np.abs(e)
        bad = ~(error <= allowed)  # NaN counts as an error
        if bad.any():
            worst = np.unravel_index(np.nanargmax(np.where(bad, error / allowed, -1.0)), a.shape)
            raise _fail(
                where,
                what,
                f"output {position}: max error {np.nanmax(error):.3g} (at index "
                f"{tuple(int(i) for i in worst)}: got {a[worst]:.6g}, expected {e[worst]:.6g}); "
                f"{int(bad.sum())} of {bad.size} elements outside atol={tol.atol:g}, "
                f"rtol={tol.rtol:g}",
            )


def _pairing(xs: Any, ys: Any) -> tuple[float, float, float]:
    """``Re sum(x * y)`` over matching inexact leaves, ``sum |x y|``, and ``sum |x|``."""
    total, magnitude, size_x = 0.0, 0.0, 0.0
    for x, y in zip(tree.leaves(xs), tree.leaves(ys), strict=True):
        x, y = _upcast(x), _upcast(y)
        if x.dtype.kind not in "fc" or y.dtype.kind not in "fc":
            continue
        total += float(np.real(np.sum(x * y)))
        magnitude += float(np.sum(np.abs(x * y)))
        size_x += float(np.sum(np.abs(x)))
    return total, magnitude, size_x


def _assert_pairings_close(
    cotangent: Any,
    jacobian_tangent: Any,
    transposed: Any,
    tangent: Any,
    tol: Tolerance,
    where: str,
    what: str,
) -> None:
    """The dot-product test ``<v, J u> == <J^T v, u>``.

    The allowed error is what the leafwise criterion on ``J u`` implies:
    ``atol * sum|v| + rtol * sum|v J u|``, so cancellation in the sums is not
    mistaken for a wrong rule.
    """
    left, left_magnitude, cotangent_size = _pairing(cotangent, jacobian_tangent)
    right, right_magnitude, _ = _pairing(transposed, tangent)
    allowed = tol.atol * cotangent_size + tol.rtol * max(left_magnitude, right_magnitude)
    if not abs(left - right) <= allowed:
        raise _fail(
            where,
            what,
            f"<v, J u> = {left!r} but <J^T v, u> = {right!r}: error {abs(left - right):.3g} "
            f"> allowed {allowed:.3g} (atol={tol.atol:g}, rtol={tol.rtol:g})",
        )


# -- check_grads ------------------------------------------------------------------------------
def check_grads(
    f: Callable[..., Any],
    args: Sequence[Any],
    modes: Sequence[str] = ("fwd", "rev"),
    order: int = 2,
    eps: float | None = None,
    atol: float | None = None,
    rtol: float | None = None,
    seed: int = 0,
) -> None:
    """Check ``f``'s derivatives against central finite differences, up to ``order``.

    ``"fwd"`` compares ``jvp(f)`` in random tangent directions with finite
    differences; ``"rev"`` compares ``vjp(f)`` with random cotangents through
    the dot-product form ``<v, J u> == <J^T v, u>``, with ``J u`` from finite
    differences. With ``order > 1`` the same checks run on the functions
    ``(x, u) -> jvp(f, x, u)`` and ``(x, v) -> vjp(f, x)[1](v)``, recursively,
    so second derivatives (jvp of jvp, vjp of jvp, ...) are checked too.

    Parameters
    ----------
    f : callable
        Function of ``len(args)`` pytree arguments returning a pytree.
    args : sequence
        The point: pytrees of tensors, arrays or numbers (``f`` receives them
        as tensors). Integer and boolean leaves are held fixed.
    modes : sequence of {"fwd", "rev"}, optional
        Which modes to check.
    order : int, optional
        Highest order of derivative to check.
    eps, atol, rtol : float, optional
        Finite-difference step and tolerances (``atol + rtol * |expected|``).
        By default they follow the lowest float precision among the inputs
        and outputs (float32: 1e-3 and 2e-3; float64: 1e-5 and 1e-5).
    seed : int, optional
        Seed of the random directions.

    Raises
    ------
    AssertionError
        Naming the mode, the order (e.g. ``rev of fwd, order 2``) and the
        maximum error.

    Examples
    --------
    >>> import kenaz.numpy as knp
    >>> from kenaz.testing import check_grads
    >>> check_grads(lambda x: knp.sum(knp.tanh(x) ** 2), (knp.linspace(-1.0, 1.0, 5),))
    """
    modes = tuple(modes)
    unknown = set(modes) - {"fwd", "rev"}
    if unknown or not modes:
        raise ValueError(
            f"kenaz.testing.check_grads: modes must be 'fwd' and/or 'rev', got {modes}"
        )
    if order < 1:
        raise ValueError(f"kenaz.testing.check_grads: order must be at least 1, got {order}")
    if not isinstance(args, (tuple, list)):
        raise TypeError(
            "kenaz.testing.check_grads: args must be a tuple or list of the function's "
            f"arguments, got {type(args).__name__}; write check_grads(f, (x,))"
        )
    args = _as_tensors(tuple(args))
    tol = _tolerance(args, f(*args), eps, atol, rtol)
    _check_recursively(f, args, modes, order, tol, np.random.default_rng(seed), path=())


def _describe(path: tuple[str, ...]) -> str:
    """``("fwd", "rev")`` -> ``"rev of fwd, order 2"`` (the innermost derivative first)."""
    return f"{' of '.join(reversed(path))}, order {len(path)}"


def _check_recursively(
    f: Callable[..., Any],
    args: tuple[Any, ...],
    modes: tuple[str, ...],
    order: int,
    tol: Tolerance,
    rng: np.random.Generator,
    path: tuple[str, ...],
) -> None:
    if order == 0:
        return
    count = len(args)
    if "fwd" in modes:
        tangents = _random_tree_like(rng, args)
        _check_jvp(f, args, tangents, tol, rng, path + ("fwd",))
        jvp_of_f = lambda *xs: jvp(f, xs[:count], xs[count:], allow_int=True)
        _check_recursively(jvp_of_f, args + tangents, modes, order - 1, tol, rng, path + ("fwd",))
    if "rev" in modes:
        cotangent = _random_tree_like(rng, f(*args))
        _check_vjp(f, args, cotangent, tol, rng, path + ("rev",))
        vjp_of_f = lambda *xs: vjp(f, *xs[:count], allow_int=True)[1](xs[count])
        _check_recursively(
            vjp_of_f, (*args, cotangent), modes, order - 1, tol, rng, path + ("rev",)
        )


def _check_jvp(
    f: Callable[..., Any],
    args: tuple[Any, ...],
    tangents: tuple[Any, ...],
    tol: Tolerance,
    rng: np.random.Generator,
    path: tuple[str, ...],
) -> None:
    out, tangent_out = jvp(f, args, tangents, allow_int=True)
    _assert_trees_close(
        out,
        f(*args),
        tol,
        "check_grads",
        f"{_describe(path)}: the primal output of jvp differs from f",
    )
    expected = numerical_jvp(f, args, tangents, tol.eps)
    _assert_trees_close(
        tangent_out,
        expected,
        tol,
        "check_grads",
        f"{_describe(path)}: jvp differs from finite differences",
    )


def _check_vjp(
    f: Callable[..., Any],
    args: tuple[Any, ...],
    cotangent: Any,
    tol: Tolerance,
    rng: np.random.Generator,
    path: tuple[str, ...],
) -> None:
    out, pullback = vjp(f, *args, allow_int=True)
    _assert_trees_close(
        out,
        f(*args),
        tol,
        "check_grads",
        f"{_describe(path)}: the primal output of vjp differs from f",
    )
    transposed = pullback(cotangent)
    tangents = _random_tree_like(rng, args)
    jacobian_tangent = numerical_jvp(f, args, tangents, tol.eps)
    _assert_pairings_close(
        cotangent,
        jacobian_tangent,
        transposed,
        tangents,
        tol,
        "check_grads",
        f"{_describe(path)}: vjp disagrees with finite differences",
    )


# -- check_op --------------------------------------------------------------------------------
def check_op(
    fn: Op | Callable[..., Any],
    args: Sequence[Any],
    params: dict[str, Any] | None = None,
    *,
    order: int = 1,
    finite_differences: bool = True,
    batching: bool = True,
    eps: float | None = None,
    atol: float | None = None,
    rtol: float | None = None,
    seed: int = 0,
) -> None:
    """Check a primitive's rules: jvp, vjp, dtypes, and that inputs are left unmodified.

    1. The primal output under ``jvp`` and ``vjp`` equals the plain output.
    2. The jvp rule agrees with central finite differences (unless
       ``finite_differences=False``, for points where the op is not
       differentiable, such as ties, where only the rules' consistency and
       their documented convention can be checked).
    3. The vjp rule is the transpose of the jvp rule: ``<v, J u> == <J^T v, u>``
       for random ``u`` and ``v``.
    4. Tangents have the output's dtype and shape, cotangents the input's.
    5. Neither the primal computation nor the rules modify their inputs, the
       tangents or the cotangents (NumPy copies are compared before and after),
       and the pullback gives the same result when called twice.
    6. With ``order > 1`` (and ``finite_differences``), :func:`check_grads` of
       the jvp and vjp functions to ``order - 1``: the rules' own derivatives.
    7. With ``batching=True``, the batching rule under ``vmap`` against a
       per-slice loop (``kenaz.testing.batching.check_batching``).

    An op with only a vjp rule (or only a jvp rule) gets the other by
    transposition, and the checks run on the pair: for a vjp-only op, 2
    compares the jvp transposed from its pullback with finite differences
    (so a wrong pullback fails there, named as such) and 3 catches a
    pullback that is not linear in the cotangent, which transposition
    requires (likewise a jvp-only op's rule in the tangent).

    Parameters
    ----------
    fn : Op or callable
        The primitive, or a thin function that performs one (e.g.
        ``lambda x: knp.sum(x, axis=1)``).
    args : sequence
        Positional arguments: tensors, arrays or numbers. Integer and boolean
        arguments (indices, masks, conditions) are held fixed.
    params : dict, optional
        Keyword parameters of the op (``axis=...``).
    order : int, optional
        Highest order of derivative to check (1: the rules themselves).
    finite_differences : bool, optional
        Compare the jvp with finite differences (turn off at
        non-differentiable points).
    batching : bool, optional
        Also check the batching rule (turn off for an op without one).
    eps, atol, rtol : float, optional
        As for :func:`check_grads`.
    seed : int, optional
        Seed of the random tangents and cotangents.

    Raises
    ------
    AssertionError
        Naming the op, the failed check and the maximum error.

    Examples
    --------
    >>> import numpy as np
    >>> from kenaz.ops.elementwise import sin, maximum
    >>> from kenaz.testing import check_op
    >>> check_op(sin, (np.linspace(-2.0, 2.0, 5),))
    >>> check_op(maximum, (np.ones(3), np.ones(3)), finite_differences=False)  # ties
    """
    params = dict(params or {})
    args = _as_tensors(tuple(args))
    name = fn.name if isinstance(fn, Op) else getattr(fn, "__name__", repr(fn))
    where = f"check_op({name})"
    call = lambda *xs: fn(*xs, **params)

    originals = _Snapshot(args)
    out = call(*args)
    originals.assert_unchanged(where, "the primal computation modified its input")
    tol = _tolerance(args, out, eps, atol, rtol)
    rng = np.random.default_rng(seed)

    tangents = _random_tree_like(rng, args)
    given = _single_rule(fn)
    tangent_out = _check_op_jvp(call, args, tangents, out, tol, where, finite_differences, given)
    _check_op_vjp(call, args, tangents, tangent_out, out, tol, rng, where, given)
    if order > 1 and finite_differences:
        _check_rules_derivatives(call, args, tangents, out, order - 1, tol, rng)
    if batching:
        _check_batching(fn, args, params, tol)


def _single_rule(fn: Op | Callable[..., Any]) -> str | None:
    """``"jvp"`` or ``"vjp"`` for an op that gives only that rule (the other is its
    transpose); None for an op with both, joint rules, or a function."""
    if not isinstance(fn, Op) or fn.forward is not None or fn.reverse is not None:
        return None
    if fn.jvp is None and fn.vjp is not None:
        return "vjp"
    if fn.vjp is None and fn.jvp is not None:
        return "jvp"
    return None


# What the failed comparison says about the rules, by which rule the op gives.
_JVP_VS_FINITE_DIFFERENCES = {
    None: "the jvp rule differs from finite differences",
    "jvp": "the jvp rule differs from finite differences",
    "vjp": "the jvp transposed from the vjp rule differs from finite differences (the vjp "
    "rule is wrong)",
}
_VJP_VS_JVP = {
    None: "the vjp rule is not the transpose of the jvp rule",
    "jvp": "the vjp transposed from the jvp rule is not its transpose (is the jvp rule "
    "linear in the tangent?)",
    "vjp": "the jvp transposed from the vjp rule is not its transpose (is the pullback "
    "linear in the cotangent?)",
}


class _Snapshot:
    """Copies of the NumPy values of a pytree, to detect in-place modification."""

    def __init__(self, values: Any) -> None:
        self.leaves = tree.leaves(values)
        self.copies = [np.array(_numpy(leaf), copy=True) for leaf in self.leaves]

    def assert_unchanged(self, where: str, what: str) -> None:
        for position, (leaf, copy) in enumerate(zip(self.leaves, self.copies, strict=True)):
            if not np.array_equal(_numpy(leaf), copy, equal_nan=copy.dtype.kind in "fc"):
                raise _fail(where, what, f"argument leaf {position} changed in place")


def _assert_dtypes_match(values: Any, reference: Any, where: str, what: str) -> None:
    pairs = zip(tree.leaves(values), tree.leaves(reference), strict=True)
    for position, (v, r) in enumerate(pairs):
        v, r = _numpy(v), _numpy(r)
        if v.shape != r.shape or (r.dtype.kind in "fc" and v.dtype != r.dtype):
            raise _fail(
                where,
                what,
                f"leaf {position} is {v.dtype}{list(v.shape)}, expected {r.dtype}{list(r.shape)}",
            )


def _check_op_jvp(
    call: Callable[..., Any],
    args: tuple[Any, ...],
    tangents: tuple[Any, ...],
    out: Any,
    tol: Tolerance,
    where: str,
    finite_differences: bool,
    given: str | None = None,
) -> Any:
    watched = _Snapshot((args, tangents))
    out_primal, tangent_out = jvp(call, args, tangents, allow_int=True)
    watched.assert_unchanged(where, "the jvp rule modified its input or tangent")
    _assert_trees_close(out_primal, out, tol, where, "the primal output under jvp differs")
    _assert_dtypes_match(
        tangent_out, out, where, "the jvp rule's tangent does not match the output"
    )
    if finite_differences:
        expected = numerical_jvp(call, args, tangents, tol.eps)
        _assert_trees_close(tangent_out, expected, tol, where, _JVP_VS_FINITE_DIFFERENCES[given])
    return tangent_out


def _check_op_vjp(
    call: Callable[..., Any],
    args: tuple[Any, ...],
    tangents: tuple[Any, ...],
    tangent_out: Any,
    out: Any,
    tol: Tolerance,
    rng: np.random.Generator,
    where: str,
    given: str | None = None,
) -> None:
    cotangent = _random_tree_like(rng, out)
    watched = _Snapshot((args, cotangent))
    out_primal, pullback = vjp(call, *args, allow_int=True)
    transposed = pullback(cotangent)
    watched.assert_unchanged(where, "the vjp rule modified its input or cotangent")
    _assert_trees_close(out_primal, out, tol, where, "the primal output under vjp differs")
    _assert_dtypes_match(
        transposed, args, where, "the vjp rule's cotangent does not match the input"
    )
    _assert_pairings_close(
        cotangent,
        tangent_out,
        transposed,
        tangents,
        tol,
        where,
        _VJP_VS_JVP[given],
    )
    again = pullback(cotangent)
    _assert_trees_close(
        again,
        transposed,
        Tolerance(0.0, 0.0, 0.0),
        where,
        "a second call of the pullback gave a different result",
    )


def _check_rules_derivatives(
    call: Callable[..., Any],
    args: tuple[Any, ...],
    tangents: tuple[Any, ...],
    out: Any,
    order: int,
    tol: Tolerance,
    rng: np.random.Generator,
) -> None:
    """check_grads of ``(x, u) -> jvp(op, x, u)`` and ``(x, v) -> vjp(op, x)(v)``."""
    count = len(args)
    jvp_of_op = lambda *xs: jvp(call, xs[:count], xs[count:], allow_int=True)
    vjp_of_op = lambda *xs: vjp(call, *xs[:count], allow_int=True)[1](xs[count])
    cotangent = _random_tree_like(rng, out)
    for derived, derived_args, mode in (
        (jvp_of_op, args + tangents, "fwd"),
        (vjp_of_op, (*args, cotangent), "rev"),
    ):
        _check_recursively(derived, derived_args, ("fwd", "rev"), order, tol, rng, path=(mode,))


# The batching check (DESIGN.md section 8) lives in ``kenaz.testing.batching``:
# ``check_batching(fn, args, params, *, atol, rtol)`` compares the op's batching
# rule under ``vmap`` with a per-slice loop. Imported here, not at the top, so
# that ``kenaz.testing`` does not load ``vmap`` until a check needs it.
def _check_batching(
    fn: Op | Callable[..., Any], args: tuple[Any, ...], params: dict[str, Any], tol: Tolerance
) -> None:
    # testing.batching loads vmap's checks on first use (check_op without batching skips it).
    from .batching import check_batching

    check_batching(fn, args, params, atol=tol.atol, rtol=tol.rtol)
