"""Random nestings of transformations on small random programs: kenaz against JAX.

Where ``scripts/compare_with_jax.py`` checks ops under one transformation at a time,
this script checks the composition. Each case is a small random program (a dozen
smooth elementwise ops, reductions with ``keepdims``, matmul, indexing, reshape and
transpose, ``where``, static Python control flow, a ``custom_jvp`` and a ``custom_vjp``
function with the same rule in both libraries, inner ``grad`` / ``jvp`` / ``vmap``
closing over the program's own variable: perturbation confusion) taking one to three
arguments (arrays, 0-d arrays, dicts, tuples) and returning an array, a scalar or a
pytree. It is wrapped in one to three random transformations:

``grad`` (argnums an int or a tuple, ``has_aux``), ``value_and_grad``, ``jvp``,
``vjp`` (the pullback called twice), ``vmap`` (``in_axes`` ints, ``None``, negative,
tuples, dicts; ``out_axes`` nonzero; ``axis_size``), ``jacfwd``, ``jacrev``,
``hessian``, ``jit``, ``checkpoint``, ``linearize``.

The same nesting is built twice, once from kenaz's functions and once from JAX's
(``jax_enable_x64``), run on the same inputs (float32 or float64), and the results
are compared: tree structure, dtype of every leaf, shape and values. Cases JAX
refuses are counted and not compared (the nesting was invalid). A separate check
asks every differentiating transformation for the derivative in an integer input:
kenaz must refuse it with an error, never return a zero.

Usage (where JAX is installed; kenaz's tree first)::

    PYTHONPATH=src /work/wt/jit-speed/.venv-bench/bin/python \\
        scripts/compare_transformations_with_jax.py --seconds 60 --seed 0

``--case N`` reruns case N of the seed alone and prints its program and both results.
"""

from __future__ import annotations

import argparse
import collections
import os
import signal
import sys
import time
import traceback
import types
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

os.environ.setdefault("JAX_ENABLE_X64", "1")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

import kenaz  # noqa: E402
import kenaz.numpy as knp  # noqa: E402

jax.config.update("jax_enable_x64", True)

TRANSFORMS = (
    "grad",
    "value_and_grad",
    "jvp",
    "vjp",
    "vmap",
    "jacfwd",
    "jacrev",
    "hessian",
    "jit",
    "checkpoint",
    "linearize",
    "closure",
)
CASE_SECONDS = 20


# ----------------------------------------------------------------------------- libraries


def _custom_functions(lib: types.SimpleNamespace) -> None:
    """Define ``csin`` (custom_jvp) and ``csq`` (custom_vjp) with the same rules."""
    np_ = lib.np

    @lib.custom_jvp
    def csin(x):
        return np_.sin(x)

    @csin.defjvp
    def _csin_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return np_.sin(x), np_.cos(x) * t

    @lib.custom_vjp
    def csq(x):
        return x * np_.tanh(x)

    def _csq_fwd(x):
        return x * np_.tanh(x), x

    def _csq_bwd(x, g):
        th = np_.tanh(x)
        return (g * (th + x * (1 - th * th)),)

    csq.defvjp(_csq_fwd, _csq_bwd)

    @lib.custom_jvp
    def cpair(x, y):
        return x * y, np_.sin(x) + y

    @cpair.defjvp
    def _cpair_jvp(primals, tangents):
        (x, y), (tx, ty) = primals, tangents
        return cpair(x, y), (tx * y + x * ty, np_.cos(x) * tx + ty)

    @lib.custom_jvp
    def cscaled(y, x):
        return np_.tanh(y) * x

    @cscaled.defjvp
    def _cscaled_jvp(primals, tangents):
        (y, x), (ty, tx) = primals, tangents
        th = np_.tanh(y)
        return th * x, (1 - th * th) * x * ty + th * tx

    lib.csin, lib.csq, lib.cpair, lib.cscaled = csin, csq, cpair, cscaled


# The transformations both libraries name alike, compared one for one.
TRANSFORMATIONS = (
    "grad", "value_and_grad", "jvp", "vjp", "vmap", "jacfwd", "jacrev", "hessian", "jit",
    "checkpoint", "linearize", "custom_jvp", "custom_vjp",
)  # fmt: skip


def _library(name: str) -> types.SimpleNamespace:
    module, np_, tree_map = (
        (kenaz, knp, kenaz.tree.map) if name == "kenaz" else (jax, jnp, jax.tree_util.tree_map)
    )
    lib = types.SimpleNamespace(
        name=name, np=np_, tree_map=tree_map, **{t: getattr(module, t) for t in TRANSFORMATIONS}
    )
    _custom_functions(lib)
    return lib


# ----------------------------------------------------------------------------- programs

# Unary ops: (name, function of (lib, x)). All smooth on the reals.
UNARY: dict[str, Callable] = {
    "sin": lambda L, x: L.np.sin(x),
    "cos": lambda L, x: L.np.cos(x),
    "tanh": lambda L, x: L.np.tanh(x),
    "exp": lambda L, x: L.np.exp(0.3 * x),
    "log1p_sq": lambda L, x: L.np.log1p(x * x),
    "sqrt_1p": lambda L, x: L.np.sqrt(x * x + 1.0),
    "square": lambda L, x: x**2,
    "cube": lambda L, x: x * x * x / 3.0,
    "recip": lambda L, x: 1.0 / (1.0 + x * x),
    "arctan": lambda L, x: L.np.arctan(x),
    "neg_abs_sq": lambda L, x: -(L.np.abs(x) ** 3),
    "mean_ax": lambda L, x: x - L.np.mean(x, axis=-1, keepdims=True) if x.ndim else x,
    "sum_ax0": lambda L, x: x * L.np.sum(x, axis=0, keepdims=True) if x.ndim else x * x,
    "total": lambda L, x: x * L.np.sum(x),
    "matmul": lambda L, x: _matmul(L, x),
    "index": lambda L, x: _index(L, x),
    "reshape": lambda L, x: L.np.reshape(L.np.reshape(x, (-1,))[::-1], x.shape),
    "transpose": lambda L, x: L.np.reshape(L.np.transpose(x), x.shape),
    "static_if": lambda L, x: x * 2.0 if x.ndim == 2 else x + 1.0,
    "loop": lambda L, x: _loop(L, x),
    "csin": lambda L, x: L.csin(x),
    "csq": lambda L, x: L.csq(x),
    "inner_grad": lambda L, x: L.grad(lambda y: L.np.sum(L.np.sin(x * y)))(x),
    "inner_jvp": lambda L, x: L.jvp(lambda y: L.np.sin(x * y), (x,), (L.np.ones_like(x),))[1],
    "inner_ckpt": lambda L, x: L.checkpoint(lambda y: L.np.sin(y * x) + y)(x * 0.5),
    "inner_jit": lambda L, x: L.jit(lambda y: y * L.np.sum(x * x))(L.np.cos(x)),
    "inner_cjvp": lambda L, x: _closure_custom_jvp(L, x),
    "cpair": lambda L, x: _pair(L, x),
    "inner_vmap": lambda L, x: L.vmap(lambda r: r * L.np.sum(x))(x) if x.ndim else x * x,
}
# Binary ops combining two leaves of the same shape.
BINARY: dict[str, Callable] = {
    "add": lambda L, x, y: x + y,
    "mul": lambda L, x, y: x * y,
    "sub": lambda L, x, y: x - 0.5 * y,
    "div": lambda L, x, y: x / (1.0 + y * y),
    "where": lambda L, x, y: L.np.where(x > y, x, 2.0 * y),
}


def _closure_custom_jvp(L, x):
    # A custom_jvp function closing over the program's own variable x. kenaz lifts x
    # into an input and adds the function's own derivative in x to the rule's
    # (docs/custom_rules.md); JAX refuses a closed-over tracer here, so its side passes
    # x as an argument, with the rule of the whole derivative: the same function.
    if L.name == "jax":
        return L.cscaled(x + 1.0, x)

    @L.custom_jvp
    def scaled_tanh(y):
        return L.np.tanh(y) * x

    @scaled_tanh.defjvp
    def _rule(primals, tangents):
        (y,), (t,) = primals, tangents
        th = L.np.tanh(y)
        return th * x, (1 - th * th) * x * t

    return scaled_tanh(x + 1.0)


def _pair(L, x):
    # custom_jvp of two arguments and two results (a tuple), same rule in both libraries.
    a, b = L.cpair(x, L.np.cos(x))
    return a - b


def _matmul(L, x):
    if x.ndim == 0:
        return x * x
    n = x.shape[-1]
    w = np.linspace(-1.0, 1.0, n * n).reshape(n, n).astype(np.dtype(x.dtype))
    return x @ L.np.asarray(w)


def _index(L, x):
    if x.ndim == 0:
        return x * 3.0
    perm = np.arange(x.shape[-1])[::-1].copy()
    return x[..., perm] * 0.5 + x[..., 0:1]


def _loop(L, x):
    for _ in range(2):
        x = L.np.sin(x) + 0.1 * x
    return x


@dataclass
class Program:
    """A random program: argument specs, a list of steps, an output form."""

    shape: tuple[int, ...]
    dtype: str
    args: list[str]  # "array" | "dict" | "tuple" per argument
    steps: list[tuple]  # ("u", name) | ("b", name, leaf index)
    output: str  # "array" | "scalar" | "tuple" | "dict"

    def leaves(self, args):
        out = []
        for kind, a in zip(self.args, args):
            if kind == "array":
                out.append(a)
            elif kind == "dict":
                out.extend([a["a"], a["b"]])
            else:
                out.extend([a[0], a[1]])
        return out

    def __call__(self, L, *args):
        leaves = [L.np.asarray(v) if isinstance(v, float) else v for v in self.leaves(args)]
        h = leaves[0]
        for step in self.steps:
            if step[0] == "u":
                h = UNARY[step[1]](L, h)
            else:
                h = BINARY[step[1]](L, h, leaves[step[2] % len(leaves)])
        if self.output == "array":
            return h
        if self.output == "scalar":
            return L.np.sum(h * h) * 0.5
        if self.output == "tuple":
            return (h, L.np.sum(L.np.cos(h)))
        if self.output == "last_alone":
            # A result that reads only the last leaf: unbatched when vmap's in_axes
            # leaves that argument out, so out_axes must broadcast it.
            return {"y": h, "c": L.np.sum(leaves[-1] * leaves[-1])}
        if self.output == "with_int":
            # An integer result beside the float one: float0 tangents, no cotangent.
            return (h, L.np.argmax(L.np.reshape(h, (-1,))))
        return {"y": h, "z": (L.np.mean(h * leaves[-1]),)}

    def text(self):
        return (
            f"shape={self.shape} dtype={self.dtype} args={self.args} "
            f"steps={self.steps} output={self.output}"
        )


def random_program(rng: np.random.Generator) -> Program:
    shape = [(), (3,), (2, 3), (2,)][rng.integers(4)]
    dtype = ["float64", "float32", "mixed"][rng.integers(3)]
    nargs = int(rng.integers(1, 4))
    args = [["array", "array", "dict", "tuple"][rng.integers(4)] for _ in range(nargs)]
    steps = []
    for _ in range(int(rng.integers(1, 5))):
        if rng.random() < 0.35:
            steps.append(("b", list(BINARY)[rng.integers(len(BINARY))], int(rng.integers(1, 6))))
        else:
            steps.append(("u", list(UNARY)[rng.integers(len(UNARY))]))
    # Every argument reaches the output, so no gradient is trivially zero.
    for i in range(1, 2 * nargs):
        steps.append(("b", ["add", "mul"][rng.integers(2)], i))
    output = ["array", "scalar", "tuple", "dict", "last_alone", "with_int"][rng.integers(6)]
    return Program(tuple(shape), dtype, args, steps, output)


# ----------------------------------------------------------------------------- nestings


@dataclass
class Level:
    """One transformation, its random parameters, and how it maps argument specs."""

    kind: str
    params: dict

    def text(self):
        inner = ", ".join(f"{k}={v}" for k, v in self.params.items())
        return f"{self.kind}({inner})" if inner else self.kind


def _to_scalar(L, out):
    leaves = jax.tree_util.tree_leaves(out) if L.name == "jax" else _k_leaves(out)
    total = 0.0
    for i, leaf in enumerate(leaves):
        if np.dtype(leaf.dtype).kind in "fc":  # integer results and float0 carry nothing
            total = total + L.np.sum(L.np.sin(leaf + 0.1 * i))
    return total


def _k_leaves(out):
    import optree

    return optree.tree_leaves(out, none_is_leaf=False)


def _tangent(L, a):
    # A tangent computed from the primal, so shapes follow any batching around it.
    return L.tree_map(lambda v: L.np.cos(v) + 0.5, a)


def _cotangent(L, o):
    # An integer output takes only a float0 cotangent (both libraries' rule).
    if np.issubdtype(np.dtype(o.dtype), np.integer):
        return np.zeros(np.shape(o), jax.dtypes.float0 if L.name == "jax" else kenaz.float0)
    return L.np.sin(o) + 1.0


def apply_level(L, level: Level, f: Callable) -> Callable:
    """Wrap ``f`` (arguments -> pytree) in the transformation ``level`` of library ``L``."""
    k, p = level.kind, level.params
    if k in ("grad", "value_and_grad"):
        transform = L.grad if k == "grad" else L.value_and_grad
        if p["has_aux"]:

            def g(*a):
                out = f(*a)
                return _to_scalar(L, out), out
        else:

            def g(*a):
                return _to_scalar(L, f(*a))

        return transform(g, argnums=p["argnums"], has_aux=p["has_aux"])
    if k in ("jacfwd", "jacrev", "hessian"):
        return getattr(L, k)(f, argnums=p["argnums"])
    if k == "jvp":

        def h(*a):
            return L.jvp(f, a, tuple(_tangent(L, x) for x in a))

        return h
    if k == "linearize":

        def h(*a):
            out, f_jvp = L.linearize(f, *a)
            return out, f_jvp(*(_tangent(L, x) for x in a))

        return h
    if k == "vjp":

        def h(*a):
            out, pullback = L.vjp(f, *a)
            ct = L.tree_map(lambda o: _cotangent(L, o), out)
            first = pullback(ct)
            second = pullback(L.tree_map(lambda c: c if c.dtype.kind == "V" else 2.0 * c, ct))
            return out, first, second

        return h
    if k == "vmap":
        kw = {"in_axes": p["in_axes"], "out_axes": p["out_axes"]}
        if p.get("axis_size") is not None:
            kw["axis_size"] = p["axis_size"]
        return L.vmap(f, **kw)
    if k == "closure":
        # An inner derivative in a fresh scale s that closes over the outer arguments
        # (outer tracers): perturbation confusion if the levels mix.
        def scaled(s, a):
            return f(*(L.tree_map(lambda v: v * s, x) for x in a))

        inner = p["inner"]
        if inner == "grad":
            return lambda *a: L.grad(lambda s: _to_scalar(L, scaled(s, a)))(1.0)
        if inner == "jvp":
            # A float64 array, not a Python float: JAX would keep 1.0 weakly typed,
            # kenaz makes it a float64 array as NumPy does (docs/conventions.md).
            one = np.asarray(1.0)
            return lambda *a: L.jvp(lambda s: scaled(s, a), (one,), (one,))[1]
        return lambda *a: L.vmap(lambda s: scaled(s, a))(L.np.asarray([0.5, 1.0, 2.0]))
    if k == "jit":
        return L.jit(f)
    if k == "checkpoint":
        return L.checkpoint(f)
    raise ValueError(k)


def _arg_leaf_ndims(spec_shapes) -> list:
    return [
        len(s)
        for s in jax.tree_util.tree_leaves(
            spec_shapes,
            is_leaf=lambda s: isinstance(s, tuple) and all(isinstance(d, int) for d in s),
        )
    ]


def _is_shape(s):
    return isinstance(s, tuple) and all(isinstance(d, int) for d in s)


def random_level(rng, kind: str, arg_shapes: list, out_shapes: Any) -> tuple[Level, list]:
    """Parameters for ``kind`` given the argument shapes it will see; new argument shapes."""
    nargs = len(arg_shapes)
    if kind in ("grad", "value_and_grad", "jacfwd", "jacrev", "hessian"):
        if nargs > 1 and rng.random() < 0.5:
            chosen = sorted(rng.choice(nargs, size=int(rng.integers(1, nargs + 1)), replace=False))
            argnums: Any = tuple(int(i) for i in chosen)
        else:
            argnums = int(rng.integers(nargs))
        params = {"argnums": argnums}
        if kind in ("grad", "value_and_grad"):
            params["has_aux"] = bool(rng.random() < 0.3)
        return Level(kind, params), arg_shapes
    if kind == "vmap":
        size = int(rng.integers(2, 4))
        axes, new_shapes = [], []
        for shapes in arg_shapes:
            if isinstance(shapes, dict):
                ax = {}
                new = {}
                for key, s in shapes.items():
                    ax[key], new[key] = _random_axis(rng, s, size)
                if rng.random() < 0.5 and len({str(v) for v in ax.values()}) == 1:
                    axes.append(next(iter(ax.values())))
                else:
                    axes.append(ax)
                new_shapes.append(new)
            elif isinstance(shapes, list):  # a tuple argument, kept as a list of shapes
                a, sa = _random_axis(rng, shapes[0], size)
                axes.append(a)
                new_shapes.append([_insert(s, a, size) for s in shapes])
            else:
                a, sa = _random_axis(rng, shapes, size)
                axes.append(a)
                new_shapes.append(sa)
        if all(a is None for a in axes):
            axis_size = size
        else:
            axis_size = size if rng.random() < 0.2 else None
        in_axes: Any = tuple(axes)
        if (
            len({repr(a) for a in axes}) == 1
            and not isinstance(axes[0], dict)
            and rng.random() < 0.5
        ):
            in_axes = axes[0]
        out_ndims = [len(s.shape) for s in jax.tree_util.tree_leaves(out_shapes)]
        lo = min(out_ndims) if out_ndims else 0
        out_axes: Any = int(rng.choice([0, 0, lo, -1])) if lo > 0 else int(rng.choice([0, -1]))
        if rng.random() < 0.3 and not isinstance(out_shapes, jax.ShapeDtypeStruct):
            # A pytree of axes, one per output leaf (JAX's tree, turned to lists/dicts).
            out_axes = _plain(
                jax.tree_util.tree_map(
                    lambda sh: int(rng.integers(-1, len(sh.shape) + 1)), out_shapes
                )
            )
        params = {"in_axes": in_axes, "out_axes": out_axes, "axis_size": axis_size}
        return Level(kind, params), new_shapes
    if kind == "closure":
        return Level(kind, {"inner": ["grad", "jvp", "vmap"][rng.integers(3)]}), arg_shapes
    return Level(kind, {}), arg_shapes


def _plain(tree):
    if isinstance(tree, tuple | list):
        return tuple(_plain(t) for t in tree)
    if isinstance(tree, dict):
        return {k: _plain(v) for k, v in tree.items()}
    return tree


def _insert(shape, axis, size):
    if axis is None:
        return shape
    s = list(shape)
    pos = axis if axis >= 0 else len(s) + 1 + axis
    s.insert(pos, size)
    return tuple(s)


def _random_axis(rng, shape, size):
    choices = [None, 0, 0, -1] + list(range(1, len(shape) + 1))
    axis = choices[rng.integers(len(choices))]
    if axis is not None and rng.random() < 0.2 and len(shape) > 0:
        axis = -1 - int(rng.integers(len(shape) + 1))
    return axis, _insert(shape, axis, size)


def _base_arg_shapes(prog: Program) -> list:
    out = []
    for kind in prog.args:
        if kind == "array":
            out.append(prog.shape)
        elif kind == "dict":
            out.append({"a": prog.shape, "b": prog.shape})
        else:
            out.append([prog.shape, prog.shape])
    return out


def _make_inputs(rng, arg_shapes, dtype):
    if dtype == "mixed":  # each leaf float32 or float64: promotion, and casts back
        return _make_inputs_mixed(rng, arg_shapes)
    args = []
    for s in arg_shapes:
        if isinstance(s, dict):
            args.append({k: rng.normal(size=v).astype(dtype) for k, v in s.items()})
        elif isinstance(s, list):
            args.append(tuple(rng.normal(size=v).astype(dtype) for v in s))
        elif s == () and dtype == "float64" and rng.random() < 0.5:
            args.append(float(rng.normal()))  # a Python float: float64 in both libraries
        else:
            args.append(rng.normal(size=s).astype(dtype))
    return args


def _make_inputs_mixed(rng, arg_shapes):
    def leaf(shape):
        return rng.normal(size=shape).astype(["float32", "float64"][rng.integers(2)])

    args = []
    for s in arg_shapes:
        if isinstance(s, dict):
            args.append({k: leaf(v) for k, v in s.items()})
        elif isinstance(s, list):
            args.append(tuple(leaf(v) for v in s))
        else:
            args.append(leaf(s))
    return args


@dataclass
class Case:
    program: Program
    levels: list  # innermost first
    inputs: list

    def nesting(self):
        return "∘".join(lv.kind for lv in reversed(self.levels))

    def text(self):
        return " ∘ ".join(lv.text() for lv in reversed(self.levels))


def build(L, case: Case) -> Callable:
    prog = case.program

    def f(*a):
        return prog(L, *a)

    for level in case.levels:
        f = apply_level(L, level, f)
    return f


def random_case(rng, jl) -> Case | None:
    prog = random_program(rng)
    depth = int(rng.integers(1, 4))
    levels = []
    arg_shapes = _base_arg_shapes(prog)
    for _ in range(depth):
        kind = TRANSFORMS[rng.integers(len(TRANSFORMS))]
        partial = Case(prog, levels, [])
        try:
            dummy = _make_inputs(np.random.default_rng(0), arg_shapes, prog.dtype)
            shapes = jax.eval_shape(build(jl, partial), *dummy)
            if any(int(np.prod(s.shape)) > 4000 for s in jax.tree_util.tree_leaves(shapes)):
                return None
        except Exception:
            return None
        level, arg_shapes = random_level(rng, kind, arg_shapes, shapes)
        levels.append(level)
    inputs = _make_inputs(rng, arg_shapes, prog.dtype)
    return Case(prog, levels, inputs)


# ----------------------------------------------------------------------------- comparison


def _normalize(out):
    """Nested lists/dicts of numpy arrays, the same for both libraries' results."""
    if isinstance(out, (tuple, list)):
        return [_normalize(o) for o in out]
    if isinstance(out, dict):
        return {k: _normalize(out[k]) for k in sorted(out)}
    if out is None:
        return None
    return np.asarray(out)


KNOWN: collections.Counter = collections.Counter()


def compare(ref, got, dtype, path="out") -> str | None:
    if isinstance(ref, list) or isinstance(got, list):
        if not (isinstance(ref, list) and isinstance(got, list)) or len(ref) != len(got):
            return f"{path}: structure {_shape_of(ref)} (jax) vs {_shape_of(got)} (kenaz)"
        for i, (r, g) in enumerate(zip(ref, got)):
            msg = compare(r, g, dtype, f"{path}[{i}]")
            if msg:
                return msg
        return None
    if isinstance(ref, dict) or isinstance(got, dict):
        if not (isinstance(ref, dict) and isinstance(got, dict)) or ref.keys() != got.keys():
            return f"{path}: structure {_shape_of(ref)} (jax) vs {_shape_of(got)} (kenaz)"
        for k in ref:
            msg = compare(ref[k], got[k], dtype, f"{path}[{k!r}]")
            if msg:
                return msg
        return None
    if ref is None or got is None:
        return None if ref is got else f"{path}: {ref!r} vs {got!r}"
    if ref.shape != got.shape:
        return f"{path}: shape {ref.shape} (jax) vs {got.shape} (kenaz)"
    if ref.dtype != got.dtype:
        if got.dtype.kind == "V" and ref.dtype.kind in "iub" and not np.any(ref):
            # docs/conventions.md: a Jacobian block of an integer output is float0 in
            # kenaz (integer zeros look like an answer); JAX gives integer zeros.
            KNOWN["Jacobian block of an integer output: float0 (kenaz), int zeros (JAX)"] += 1
            return None
        return f"{path}: dtype {ref.dtype} (jax) vs {got.dtype} (kenaz)"
    if got.dtype.kind == "V":
        return None  # float0 on both sides: no values
    tol = 1e-9 if dtype == "float64" else 2e-4
    scale = max(1.0, float(np.max(np.abs(ref))) if ref.size else 1.0)
    if ref.size and not np.allclose(got, ref, rtol=tol, atol=tol * scale, equal_nan=True):
        err = float(np.max(np.abs(got.astype(float) - ref.astype(float))))
        return f"{path}: values differ (max abs error {err:.3g}, scale {scale:.3g})"
    return None


def _shape_of(x):
    if isinstance(x, list):
        return "[" + ", ".join(_shape_of(v) for v in x) + "]"
    if isinstance(x, dict):
        return "{" + ", ".join(f"{k}: {_shape_of(v)}" for k, v in x.items()) + "}"
    return "None" if x is None else str(tuple(x.shape))


class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout(f"took over {CASE_SECONDS} s")


def run(L, case: Case):
    f = build(L, case)
    if L.name == "jax":
        # One compilation for the whole nesting: JAX's op-by-op dispatch is far slower.
        f = jax.jit(f)
    # Fresh copies, so that no run can see another's writes.
    args = [
        L.tree_map(lambda v: np.array(v) if isinstance(v, np.ndarray) else v, a)
        for a in case.inputs
    ]
    signal.alarm(CASE_SECONDS)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return _normalize(f(*args))
    finally:
        signal.alarm(0)


def _float32_rounding(jl, case: Case, ref, got) -> bool:
    """Whether kenaz's float32 result is about as near JAX's float64 one as JAX's float32."""
    wide = Case(case.program, case.levels, [_widen(a) for a in case.inputs])
    try:
        exact = run(jl, wide)
    except Exception:  # noqa: BLE001
        return False
    import optree

    pairs = zip(
        optree.tree_leaves(exact), optree.tree_leaves(ref), optree.tree_leaves(got), strict=True
    )
    for e, r, g in pairs:
        e64 = np.asarray(e, dtype=float)
        err_jax = np.max(np.abs(np.asarray(r, dtype=float) - e64), initial=0.0)
        err_kenaz = np.max(np.abs(np.asarray(g, dtype=float) - e64), initial=0.0)
        scale = max(1.0, float(np.max(np.abs(e64), initial=0.0)))
        if err_kenaz > 4 * err_jax + 1e-5 * scale:
            return False
    return True


def _ill_conditioned(jl, case: Case, ref, got) -> bool:
    """Whether JAX's own result moves more than the difference when the inputs change by a
    relative 1e-13 (huge intermediates under sin, say): then no answer is the right one."""
    nudged = Case(
        case.program,
        case.levels,
        [jax.tree_util.tree_map(lambda v: v * (1 + 1e-13), a) for a in case.inputs],
    )
    try:
        moved = run(jl, nudged)
    except Exception:  # noqa: BLE001
        return False
    import optree

    for m, r, g in zip(
        optree.tree_leaves(moved), optree.tree_leaves(ref), optree.tree_leaves(got), strict=True
    ):
        r64, g64, m64 = (np.asarray(v, dtype=float) for v in (r, g, m))
        if np.max(np.abs(g64 - r64), initial=0.0) > np.max(np.abs(m64 - r64), initial=0.0):
            return False
    return True


def _widen(a):
    return jax.tree_util.tree_map(lambda v: np.asarray(v, dtype=np.float64), a)


def check_integer_inputs(kl) -> list[str]:
    """Every differentiating transformation refuses an integer input."""
    problems = []
    xi = np.arange(3)

    def f(x):
        return kl.np.sum(kl.np.sin(x * 1.0))

    calls = {
        "grad": lambda: kl.grad(f)(xi),
        "value_and_grad": lambda: kl.value_and_grad(f)(xi),
        "jacfwd": lambda: kl.jacfwd(f)(xi),
        "jacrev": lambda: kl.jacrev(f)(xi),
        "hessian": lambda: kl.hessian(f)(xi),
        "jvp": lambda: kl.jvp(f, (xi,), (np.ones(3),)),
        "vjp": lambda: kl.vjp(f, xi)[1](1.0),
        "linearize": lambda: kl.linearize(f, xi)[1](np.ones(3)),
        "vmap(grad)": lambda: kl.vmap(kl.grad(f))(np.arange(6).reshape(2, 3)),
        "grad(argnums=1)": lambda: kl.grad(lambda a, b: f(a) * b, argnums=(0, 1))(np.ones(3), 2),
        "jit(grad)": lambda: kl.jit(kl.grad(f))(xi),
        "grad(dict)": lambda: kl.grad(lambda d: f(d["a"]))({"a": xi}),
    }
    for name, call in calls.items():
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out = call()
        except Exception as e:  # noqa: BLE001 - any clear refusal will do
            if "int" not in str(e).lower():
                problems.append(f"{name}: refused, but the message does not say why: {e}")
            continue
        problems.append(f"{name}: accepted an integer input and returned {out!r}")
    return problems


# ----------------------------------------------------------------------------- main


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--case", type=int, default=None, help="rerun one case verbosely")
    ap.add_argument("--max-show", type=int, default=3, help="examples shown per nesting")
    opts = ap.parse_args(argv)
    signal.signal(signal.SIGALRM, _alarm)

    kl, jl = _library("kenaz"), _library("jax")
    jl_plain = _library("jax")
    jl_plain.csq = lambda x: x * jnp.tanh(x)
    rng = np.random.default_rng(opts.seed)
    deadline = time.monotonic() + opts.seconds
    counts = collections.Counter()
    nestings = collections.Counter()
    mismatches: dict[str, list[str]] = collections.defaultdict(list)
    accepted: dict[str, list[str]] = collections.defaultdict(list)
    index = -1
    while time.monotonic() < deadline:
        case = random_case(rng, jl)
        if case is None:
            counts["regenerated"] += 1
            continue
        index += 1
        if opts.case is not None and index != opts.case:
            if index > opts.case:
                break
            continue
        verbose = opts.case is not None
        if verbose:
            print(f"case {index}: {case.text()}\n  program: {case.program.text()}")
        try:
            try:
                ref = run(jl, case)
            except Exception as e:  # noqa: BLE001
                # JAX has no forward mode through a custom_vjp; kenaz differentiates the
                # original function there (docs/custom_rules.md), so compare with that.
                if "custom_vjp" not in str(e) and "custom_lin" not in str(e):
                    raise
                ref = run(jl_plain, case)
                counts["custom_vjp under forward mode: JAX's csq made plain"] += 1
        except Exception as e:  # noqa: BLE001
            counts["invalid (JAX refuses)"] += 1
            try:
                run(kl, case)
                why = f"{type(e).__name__}: {str(e).splitlines()[0][:160]}"
                accepted[case.nesting()].append(f"#{index} {case.text()}: JAX: {why}")
            except Exception:  # noqa: BLE001
                pass
            if verbose:
                print(f"  JAX refuses: {type(e).__name__}: {e}")
            continue
        counts["compared"] += 1
        nestings[case.nesting()] += 1
        try:
            got = run(kl, case)
            msg = compare(ref, got, case.program.dtype)
        except Exception as e:  # noqa: BLE001
            tb = traceback.extract_tb(e.__traceback__)[-1]
            msg = (
                f"kenaz raised {type(e).__name__}: {str(e).splitlines()[0][:200]} "
                f"({os.path.basename(tb.filename)}:{tb.lineno})"
            )
            if verbose:
                traceback.print_exc()
        if msg and "values differ" in msg and case.program.dtype != "float64":
            # Rounding, or a wrong derivative? Ask JAX at float64 which one is nearer.
            if _float32_rounding(jl, case, ref, got):
                counts["float32 rounding (both as far from float64)"] += 1
                msg = None
        if msg and "values differ" in msg and _ill_conditioned(jl, case, ref, got):
            counts["ill-conditioned (JAX moves more under a 1e-13 input change)"] += 1
            msg = None
        if verbose:
            print(f"  jax:   {ref!r}\n  kenaz: {got if msg is None else msg}")
        if msg:
            counts["mismatch"] += 1
            mismatches[case.nesting()].append(
                f"#{index} {case.text()}\n      program: {case.program.text()}\n      {msg}"
            )

    int_problems = check_integer_inputs(kl)

    print(f"seed {opts.seed}: {index + 1} cases, {dict(counts)}")
    print(f"{len(nestings)} distinct nestings compared")
    for what, n in KNOWN.items():
        print(f"known convention, not counted as a mismatch: {what}: {n} leaves")
    _print_by_nesting("Mismatches by nesting (outermost first)", mismatches, opts.max_show,
                      nestings)  # fmt: skip
    _print_by_nesting("kenaz accepts what JAX refuses (by nesting)", accepted, opts.max_show)
    print("\nInteger inputs:", "all refused" if not int_problems else "")
    for p in int_problems:
        print(f"  {p}")
    return 1 if (mismatches or int_problems) else 0


def _print_by_nesting(
    title: str, found: dict[str, list[str]], shown: int, of: dict[str, int] | None = None
) -> None:
    """``found``'s cases grouped by nesting, most frequent first (``of``: cases per nesting)."""
    if not found:
        return
    print(f"\n{title}:")
    for nesting, items in sorted(found.items(), key=lambda kv: -len(kv[1])):
        print(f"  {nesting}: {len(items)}" + (f" of {of[nesting]}" if of else ""))
        for item in items[:shown]:
            print(f"    {item}")


if __name__ == "__main__":
    sys.exit(main())
