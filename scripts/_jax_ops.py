"""The op table of ``compare_with_jax.py``: each op written once against a namespace
bundle ``M`` (``M.np`` is ``kenaz.numpy`` or ``jax.numpy``, ``M.la`` its ``linalg``,
``M.sp`` its ``scipy.special``), so that one program runs in both libraries.

An op is ``Spec(name, arity, fn, params)``: ``params(rng, shape, dtype)`` draws the op's
constant parameters for an input of ``shape`` (an axis, ``ddof``, an index array), or
returns None when the op does not apply to that shape; ``fn(M, p, x[, y])`` computes it.
Inputs are any real numbers: an op that needs a domain maps its input into it first
(``log(x * x + 0.5)``), so chains of ops stay in every op's domain.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

# Shapes an op is tried on first (an op needing a matrix gets one).
VECTORS = [(3,), (4,), (1,), (0,)]
GENERAL = [(), (3,), (2, 3), (3, 1), (1, 3), (2, 1, 3), (0,), (2, 0), (4,)]
MATRICES = [(3, 3), (2, 3, 3), (1, 2, 2), (4, 4)]
RECTANGLES = [(3, 2), (2, 3), (2, 4, 3), (3, 3)]


@dataclass
class Spec:
    """One op of the table (see the module)."""

    name: str
    arity: int
    fn: Callable[..., Any]
    params: Callable[[np.random.Generator, tuple, Any], Any] = lambda rng, shape, dtype: {}
    shapes: list = field(default_factory=lambda: GENERAL)
    hessian: bool = True  # second derivatives are defined (not piecewise linear in a kink)
    group: str = "elementwise"


def _any(rng: np.random.Generator, shape: tuple, dtype: Any) -> dict:
    return {}


def _nonempty(rng, shape, dtype):
    return {} if int(np.prod(shape)) > 0 else None


def _axis(rng, shape, dtype, keepdims=True, none=True, nonempty=False):
    """A random axis (or None) for a reduction over ``shape``."""
    if nonempty and int(np.prod(shape)) == 0:
        return None
    choices = ([None] if none else []) + list(range(-len(shape), len(shape)))
    if not choices:
        return None
    axis = choices[rng.integers(len(choices))]
    if nonempty and axis is not None and shape[axis] == 0:
        return None
    p = {"axis": axis}
    if keepdims:
        p["keepdims"] = bool(rng.integers(2))
    return p


def _axis_nonempty(rng, shape, dtype):
    return _axis(rng, shape, dtype, nonempty=True)


def _axis_int(rng, shape, dtype):
    if not shape:
        return None
    return {"axis": int(rng.integers(-len(shape), len(shape)))}


def _var(rng, shape, dtype):
    p = _axis(rng, shape, dtype, nonempty=True)
    if p is None:
        return None
    n = int(np.prod(shape)) if p["axis"] is None else shape[p["axis"]]
    p["ddof"] = int(rng.integers(0, 2)) if n > 1 else 0
    return p


def _square(rng, shape, dtype):
    return {} if len(shape) >= 2 and shape[-1] == shape[-2] and shape[-1] > 0 else None


def _matrix(rng, shape, dtype):
    return {} if len(shape) >= 2 and shape[-1] > 0 and shape[-2] > 0 else None


def _vector(rng, shape, dtype):
    return {} if len(shape) == 1 else None


def _ndim_at_least(n):
    return lambda rng, shape, dtype: {} if len(shape) >= n else None


def _spd(M, x):
    """A symmetric positive definite matrix from any square ``x`` (same shape)."""
    n = x.shape[-1]
    return M.np.matmul(x, M.np.swapaxes(x, -1, -2)) + n * M.np.eye(n, dtype=x.dtype)


def _well(M, x):
    """A well-conditioned square matrix from any square ``x``."""
    n = x.shape[-1]
    return 0.3 * x + (n + 1) * M.np.eye(n, dtype=x.dtype)


def _index(rng, shape, dtype):
    if not shape or shape[0] == 0:
        return None
    return {"idx": rng.integers(-shape[0], shape[0], size=int(rng.integers(1, 5)))}


def _mask(rng, shape, dtype):
    if not shape:
        return None
    return {"mask": rng.random(shape) < 0.5}


def _slices(rng, shape, dtype):
    if not shape:
        return None
    key = []
    for n in shape:
        start = int(rng.integers(-n - 1, n + 1)) if n else None
        step = int(rng.choice([-2, -1, 1, 2]))
        key.append(slice(start, None, step))
    return {"key": tuple(key)}


def _sort_axis(rng, shape, dtype):
    return {"axis": int(rng.integers(-len(shape), len(shape)))} if shape else None


def _diff(rng, shape, dtype):
    if not shape:
        return None
    axis = int(rng.integers(-len(shape), len(shape)))
    return {"axis": axis, "n": int(rng.integers(1, 3))}


def _cum(rng, shape, dtype):
    p = _axis(rng, shape, dtype, keepdims=False)
    return p


def _norm_vector(rng, shape, dtype):
    if len(shape) != 1 or shape[0] == 0:
        return None
    return {"ord": [None, 1, 2, np.inf, -np.inf, 3, 0.5][int(rng.integers(7))]}


def _norm_matrix(rng, shape, dtype):
    if len(shape) < 2 or 0 in shape[-2:]:
        return None
    return {"ord": [None, "fro", 1, -1, np.inf, -np.inf, 2, "nuc"][int(rng.integers(8))]}


def _norm_axis(rng, shape, dtype):
    if not shape or 0 in shape:
        return None
    return {"axis": int(rng.integers(-len(shape), len(shape))), "keepdims": bool(rng.integers(2))}


def _split(rng, shape, dtype):
    if not shape or shape[0] < 2:
        return None
    return {"at": int(rng.integers(1, shape[0]))}


def _einsum(rng, shape, dtype):
    if len(shape) == 1:
        return {"spec": str(rng.choice(["i,i->", "i->", "i,j->ij", "i->i"]))}
    if len(shape) == 2:
        return {"spec": str(rng.choice(["ij->ji", "ij,ij->i", "ij->", "ij,kj->ik", "ij->j"]))}
    if len(shape) == 3 and shape[-1] == shape[-2]:
        return {"spec": str(rng.choice(["bii->bi", "bij,bjk->bik", "...ii->..."]))}
    return None


def _einsum_fn(M, p, x):
    spec = p["spec"]
    operands = spec.split("->")[0].split(",")
    if len(operands) == 1:
        return M.np.einsum(spec, x)
    if spec == "ij,kj->ik":
        return M.np.einsum(spec, x, M.np.sin(x))
    return M.np.einsum(spec, x, M.np.cos(x))


def _pos(M, x):
    return x * x + 0.5


def _unit(M, x):
    return 0.9 * M.np.tanh(x)


def _prob(M, x):
    return 0.05 + 0.9 / (1 + M.np.exp(-x))


def _at(rng, shape, dtype):
    if not shape or shape[0] == 0:
        return None
    return {"idx": rng.integers(0, shape[0], size=int(rng.integers(1, 4)))}


def _same(M: Any, x: Any) -> Any:
    return x


def _unary(name: str, wrap: Callable = _same, module: str = "np", plus_x: bool = False):
    """``M.<module>.<name>(wrap(x))`` (``+ x`` for a piecewise constant function, so that
    the derivative is not identically zero)."""

    def fn(M: Any, p: dict, x: Any) -> Any:
        result = getattr(getattr(M, module), name)(wrap(M, x))
        return result + x if plus_x else result

    return fn


def _binary(name: str, module: str = "np"):
    """``M.<module>.<name>(x, y)``."""
    return lambda M, p, x, y: getattr(getattr(M, module), name)(x, y)


def _reduce(name: str):
    """``M.np.<name>(x, **p)`` (``axis``, ``keepdims``)."""
    return lambda M, p, x: getattr(M.np, name)(x, **p)


SPECS: list[Spec] = [
    # -- unary elementwise ----------------------------------------------------------
    *[Spec(n, 1, _unary(n))
      for n in ("sin", "cos", "tanh", "sinh", "cosh", "arctan", "arcsinh", "exp", "expm1",
                "negative", "positive", "square", "deg2rad", "rad2deg", "exp2", "sinc",
                "cbrt")],  # fmt: skip
    Spec("tan", 1, lambda M, p, x: M.np.tan(0.5 * M.np.tanh(x))),
    *[Spec(n, 1, _unary(n, _pos))
      for n in ("log", "log2", "log10", "log1p", "sqrt", "reciprocal")],  # fmt: skip
    *[Spec(n, 1, _unary(n, _unit))
      for n in ("arcsin", "arccos", "arctanh")],  # fmt: skip
    Spec("arccosh", 1, lambda M, p, x: M.np.arccosh(x * x + 1.5)),
    *[Spec(n, 1, _unary(n, plus_x=True), hessian=n != "abs")
      for n in ("abs", "fabs", "sign", "floor", "ceil", "rint", "trunc", "fix", "round")],
    Spec("round_decimals", 1, lambda M, p, x: M.np.round(3 * x, 1) + x),
    Spec("heaviside", 1, lambda M, p, x: M.np.heaviside(x, 0.5) * x),
    # -- binary elementwise ---------------------------------------------------------
    *[Spec(n, 2, _binary(n))
      for n in ("add", "subtract", "multiply", "arctan2", "hypot", "logaddexp", "logaddexp2")],
    *[Spec(n, 2, _binary(n), hessian=False)
      for n in ("maximum", "minimum", "fmax", "fmin")],  # fmt: skip
    Spec("divide", 2, lambda M, p, x, y: M.np.divide(x, _pos(M, y))),
    Spec("true_divide", 2, lambda M, p, x, y: M.np.true_divide(y, _pos(M, x))),
    Spec("power_pos", 2, lambda M, p, x, y: M.np.power(_pos(M, x), M.np.tanh(y))),
    Spec("float_power", 2, lambda M, p, x, y: M.np.float_power(_pos(M, x), M.np.tanh(y))),
    Spec("power_int", 1, lambda M, p, x: M.np.power(x, p["k"]),
         lambda rng, shape, dtype: {"k": int(rng.integers(0, 5))}),
    Spec("power_intfloat", 1, lambda M, p, x: x ** p["k"],
         lambda rng, shape, dtype: {"k": float(rng.integers(-2, 4))}),
    Spec("power_intarray", 1, lambda M, p, x: M.np.power(x, p["k"]),
         lambda rng, shape, dtype: {"k": rng.integers(0, 4, size=shape).astype(np.int8)}),
    Spec("power_neg_exponent", 2, lambda M, p, x, y: M.np.power(_pos(M, x), -_pos(M, y))),
    Spec("fmod", 2, lambda M, p, x, y: M.np.fmod(3 * x, _pos(M, y)), hessian=False),
    Spec("remainder", 2, lambda M, p, x, y: M.np.remainder(3 * x, _pos(M, y)), hessian=False),
    Spec("mod_neg", 2, lambda M, p, x, y: M.np.mod(3 * x, -_pos(M, y)), hessian=False),
    Spec("copysign", 2, lambda M, p, x, y: M.np.copysign(x, y), hessian=False),
    Spec("where", 2, lambda M, p, x, y: M.np.where(x > y, M.np.sin(x), y * y)),
    Spec("where_scalar", 1, lambda M, p, x: M.np.where(x > 0.2, x, 0.0)),
    Spec("clip", 1, lambda M, p, x: M.np.clip(x, -0.5, 0.7), hessian=False),
    Spec("clip_arrays", 2, lambda M, p, x, y: M.np.clip(x, y - 0.5, y + 0.5), hessian=False),
    # -- scipy.special ---------------------------------------------------------------
    *[Spec("sp." + n, 1, _unary(n, module="sp"), group="special")
      for n in ("expit", "erf", "erfc", "ndtr", "log_ndtr", "i0e", "i1e", "i0", "i1",
                "log_expit")],  # fmt: skip
    *[Spec("sp." + n, 1, _unary(n, _pos, "sp"),
           group="special")
      for n in ("gammaln", "digamma", "gamma", "entr", "rgamma")],  # fmt: skip
    Spec("sp.erfinv", 1, lambda M, p, x: M.sp.erfinv(_unit(M, x)), group="special"),
    Spec("sp.logit", 1, lambda M, p, x: M.sp.logit(_prob(M, x)), group="special"),
    Spec("sp.ndtri", 1, lambda M, p, x: M.sp.ndtri(_prob(M, x)), group="special"),
    Spec("sp.polygamma", 1, lambda M, p, x: M.sp.polygamma(p["n"], _pos(M, x)),
         lambda rng, shape, dtype: {"n": int(rng.integers(0, 3))}, group="special"),
    Spec("sp.xlogy", 2, lambda M, p, x, y: M.sp.xlogy(x, _pos(M, y)), group="special"),
    Spec("sp.xlogy0", 1, lambda M, p, x: M.sp.xlogy(x * 0.0, _pos(M, x)), group="special"),
    Spec("sp.xlog1py", 2, lambda M, p, x, y: M.sp.xlog1py(x, _pos(M, y)), group="special"),
    Spec("sp.rel_entr", 2, lambda M, p, x, y: M.sp.rel_entr(_pos(M, x), _pos(M, y)),
         group="special"),
    Spec("sp.kl_div", 2, lambda M, p, x, y: M.sp.kl_div(_pos(M, x), _pos(M, y)),
         group="special"),
    Spec("sp.betaln", 2, lambda M, p, x, y: M.sp.betaln(_pos(M, x), _pos(M, y)),
         group="special"),
    Spec("sp.beta", 2, lambda M, p, x, y: M.sp.beta(_pos(M, x), _pos(M, y)), group="special"),
    Spec("sp.gammainc_x", 1, lambda M, p, x: M.sp.gammainc(1.5, _pos(M, x)), group="special"),
    Spec("sp.gammaincc_x", 1, lambda M, p, x: M.sp.gammaincc(2.5, _pos(M, x)),
         group="special"),
    Spec("sp.multigammaln", 1, lambda M, p, x: M.sp.multigammaln(_pos(M, x) + 2.0, 2),
         group="special"),
    Spec("sp.logsumexp", 1, lambda M, p, x: M.sp.logsumexp(x, **p), _axis_nonempty,
         group="special"),
    Spec("sp.logsumexp_b", 2, lambda M, p, x, y: M.sp.logsumexp(x, b=_pos(M, y)),
         _nonempty, group="special"),
    Spec("sp.softmax", 1, lambda M, p, x: M.sp.softmax(x, axis=p["axis"]), _axis_int,
         group="special"),
    Spec("sp.log_softmax", 1, lambda M, p, x: M.sp.log_softmax(x, axis=p["axis"]), _axis_int,
         group="special"),
    # -- reductions ------------------------------------------------------------------
    *[Spec(n, 1, _reduce(n), _axis,
           group="reduction")
      for n in ("sum", "prod", "nansum")],  # fmt: skip
    *[Spec(n, 1, _reduce(n), _axis_nonempty,
           hessian=n in ("mean", "nanmean"), group="reduction")
      for n in ("max", "min", "amax", "mean", "ptp", "nanmean")],  # fmt: skip
    Spec("max_ties", 1, lambda M, p, x: M.np.max(M.np.round(x), **p) * x.sum(), _axis_nonempty,
         hessian=False, group="reduction"),
    Spec("var", 1, lambda M, p, x: M.np.var(x, **p), _var, group="reduction"),
    Spec("std", 1, lambda M, p, x: M.np.std(x, **p), _var, group="reduction"),
    Spec("average", 2, lambda M, p, x, y: M.np.average(x, weights=_pos(M, y) + 0.0 * x),
         _nonempty, group="reduction"),
    Spec("median", 1, lambda M, p, x: M.np.median(x, axis=p["axis"]), _axis_nonempty,
         hessian=False, group="reduction"),
    Spec("cumsum", 1, lambda M, p, x: M.np.cumsum(x, axis=p["axis"]), _cum, group="reduction"),
    Spec("cumprod", 1, lambda M, p, x: M.np.cumprod(x, axis=p["axis"]), _cum,
         group="reduction"),
    Spec("diff", 1, lambda M, p, x: M.np.diff(x, **p), _diff, group="reduction"),
    Spec("sort", 1, lambda M, p, x: M.np.sort(x, axis=p["axis"]), _sort_axis, hessian=False,
         group="sorting"),
    Spec("argsort_take", 1,
         lambda M, p, x: M.np.take_along_axis(x, M.np.argsort(x, axis=p["axis"]), p["axis"]),
         _sort_axis, hessian=False, group="sorting"),
    Spec("sum_where", 1, lambda M, p, x: M.np.sum(x, where=p["mask"], axis=-1), _mask,
         group="reduction"),
    Spec("mean_where", 1, lambda M, p, x: M.np.mean(x * x, where=p["mask"] | True), _mask,
         group="reduction"),
    Spec("max_initial", 1, lambda M, p, x: M.np.max(x, initial=0.3, axis=p["axis"]),
         _axis_int, hessian=False, group="reduction"),
    Spec("quantile", 1, lambda M, p, x: M.np.quantile(x, 0.3, axis=p["axis"]),
         _axis_nonempty, hessian=False, group="reduction"),
    Spec("sort_ties", 1, lambda M, p, x: M.np.sort(M.np.concatenate([x, 2 * x]), axis=0),
         _ndim_at_least(1), hessian=False, group="sorting"),
    Spec("trace", 1, lambda M, p, x: M.np.trace(x), _matrix, group="reduction"),
    # -- linear algebra --------------------------------------------------------------
    Spec("matmul", 2, lambda M, p, x, y: M.np.matmul(x, M.np.swapaxes(M.np.sin(x), -1, -2))
         + 0.0 * M.np.sum(y), _matrix, RECTANGLES, group="linalg"),
    Spec("matmul_vec", 1, lambda M, p, x: M.np.matmul(x, M.np.cos(x[..., 0, :])), _matrix,
         RECTANGLES, group="linalg"),
    Spec("matmul_broadcast", 1, lambda M, p, x: M.np.matmul(x, M.np.cos(x[0])),
         lambda rng, shape, dtype: {} if len(shape) == 3 and shape[-1] == shape[-2] else None,
         [(2, 3, 3), (1, 2, 2)], group="linalg"),
    Spec("qr_r", 1, lambda M, p, x: M.np.abs(M.la.qr(_well(M, x))[1]), _square, MATRICES,
         group="linalg"),
    Spec("dot", 1, lambda M, p, x: M.np.dot(x, M.np.cos(x)), _vector, VECTORS, group="linalg"),
    Spec("outer", 1, lambda M, p, x: M.np.outer(x, M.np.sin(x)), _vector, VECTORS,
         group="linalg"),
    Spec("kron", 1, lambda M, p, x: M.np.kron(x, M.np.sin(x)), _vector, VECTORS,
         group="linalg"),
    Spec("cross", 1, lambda M, p, x: M.np.cross(x, M.np.sin(x)),
         lambda rng, shape, dtype: {} if shape and shape[-1] == 3 else None, [(3,), (2, 3)],
         group="linalg"),
    Spec("einsum", 1, _einsum_fn, _einsum, [(3,), (2, 3), (2, 3, 3)], group="linalg"),
    Spec("tensordot", 1, lambda M, p, x: M.np.tensordot(x, M.np.cos(x), axes=x.ndim),
         _nonempty, group="linalg"),
    Spec("inv", 1, lambda M, p, x: M.la.inv(_well(M, x)), _square, MATRICES, group="linalg"),
    Spec("det", 1, lambda M, p, x: M.la.det(_well(M, x)), _square, MATRICES, group="linalg"),
    Spec("slogdet", 1, lambda M, p, x: M.la.slogdet(_well(M, x))[1], _square, MATRICES,
         group="linalg"),
    Spec("solve", 1, lambda M, p, x: M.la.solve(_well(M, x), M.np.sin(x)), _square, MATRICES,
         group="linalg"),
    Spec("solve_vec", 1, lambda M, p, x: M.la.solve(_well(M, x), M.np.sin(x[..., 0])),
         lambda rng, shape, dtype: {} if len(shape) == 2 and shape[0] == shape[1] > 0 else None,
         [(3, 3), (4, 4)], group="linalg"),
    Spec("cholesky", 1, lambda M, p, x: M.la.cholesky(_spd(M, x)), _square, MATRICES,
         group="linalg"),
    Spec("eigvalsh", 1, lambda M, p, x: M.la.eigvalsh(_spd(M, x)), _square, MATRICES,
         group="linalg"),
    Spec("eigh_vectors", 1,
         lambda M, p, x: (lambda w, v: v * v * w[..., None, :])(*M.la.eigh(_spd(M, x))),
         _square, MATRICES, group="linalg"),
    Spec("svdvals", 1, lambda M, p, x: M.la.svd(x, compute_uv=False), _matrix, RECTANGLES,
         group="linalg"),
    Spec("svd_reconstruct", 1,
         lambda M, p, x: (lambda u, s, vh: M.np.matmul(u * s[..., None, :], vh))(
             *M.la.svd(x, full_matrices=False)), _matrix, RECTANGLES, group="linalg"),
    Spec("norm_vec", 1, lambda M, p, x: M.la.norm(x, ord=p["ord"]), _norm_vector, VECTORS,
         group="linalg"),
    Spec("norm_mat", 1, lambda M, p, x: M.la.norm(x, ord=p["ord"], axis=(-2, -1)),
         _norm_matrix, RECTANGLES, group="linalg"),
    Spec("norm_axis", 1, lambda M, p, x: M.la.norm(x, **p), _norm_axis, group="linalg"),
    Spec("pinv", 1, lambda M, p, x: M.la.pinv(x + 0.5 * M.np.eye(*x.shape[-2:], dtype=x.dtype)),
         lambda rng, shape, dtype: {} if len(shape) == 2 and 0 not in shape else None,
         [(3, 2), (2, 3), (3, 3)], group="linalg"),
    Spec("matrix_power", 1, lambda M, p, x: M.la.matrix_power(0.3 * _well(M, x), p["k"]),
         lambda rng, shape, dtype: {"k": int(rng.integers(-1, 4))}
         if _square(rng, shape, dtype) is not None else None, MATRICES, group="linalg"),
    # -- shapes and indexing -----------------------------------------------------------
    Spec("reshape", 1, lambda M, p, x: M.np.reshape(x, (-1,)), group="shape"),
    Spec("transpose", 1, lambda M, p, x: M.np.transpose(x), group="shape"),
    Spec("flip", 1, lambda M, p, x: M.np.flip(x, axis=p["axis"]), _sort_axis, group="shape"),
    Spec("roll", 1, lambda M, p, x: M.np.roll(x, 1, axis=p["axis"]), _sort_axis,
         group="shape"),
    Spec("tile", 1, lambda M, p, x: M.np.tile(x, 2), group="shape"),
    Spec("repeat", 1, lambda M, p, x: M.np.repeat(x, 2, axis=p["axis"]), _sort_axis,
         group="shape"),
    Spec("expand_squeeze", 1, lambda M, p, x: M.np.squeeze(M.np.expand_dims(x, 0), 0) * 2,
         group="shape"),
    Spec("concatenate", 2, lambda M, p, x, y: M.np.concatenate(
        [x, M.np.broadcast_to(y, x.shape)], axis=p["axis"]), _sort_axis, group="shape"),
    Spec("stack", 2, lambda M, p, x, y: M.np.stack([x, M.np.broadcast_to(y, x.shape)], axis=-1),
         group="shape"),
    Spec("split", 1, lambda M, p, x: M.np.split(x, [p["at"]])[1] * 2, _split, group="shape"),
    Spec("tril", 1, lambda M, p, x: M.np.tril(x) + M.np.triu(x, 1) * 3, _matrix, RECTANGLES,
         group="shape"),
    Spec("diagonal", 1, lambda M, p, x: M.np.diagonal(x, axis1=-2, axis2=-1), _matrix,
         RECTANGLES, group="shape"),
    Spec("index_int", 1, lambda M, p, x: x[p["idx"]], _index, group="indexing"),
    Spec("index_mask", 1, lambda M, p, x: x[p["mask"]], _mask, group="indexing"),
    Spec("index_slices", 1, lambda M, p, x: x[p["key"]], _slices, group="indexing"),
    Spec("index_newaxis", 1, lambda M, p, x: x[..., None, ::-1] * 2, _ndim_at_least(1),
         group="indexing"),
    Spec("index_2d", 1, lambda M, p, x: x[p["idx"], -1], lambda rng, shape, dtype:
         _index(rng, shape, dtype) if len(shape) >= 2 and shape[-1] > 0 else None,
         group="indexing"),
    Spec("take", 1, lambda M, p, x: M.np.take(x, p["idx"], axis=0), _index, group="indexing"),
    Spec("at_set", 1, lambda M, p, x: x.at[p["idx"]].set(M.np.sin(x[0])), _at,
         group="indexing"),
    Spec("at_add", 1, lambda M, p, x: x.at[p["idx"]].add(M.np.sin(x[0])), _at,
         group="indexing"),
    Spec("at_mul", 1, lambda M, p, x: x.at[p["idx"]].multiply(M.np.cos(x[0])), _at,
         group="indexing"),
]

BY_NAME = {s.name: s for s in SPECS}
