"""Property tests: random programs drawn from the primitives (shapes, broadcasting,
axes) must satisfy

1. forward/reverse agreement: ``<v, J u>`` from jvp equals ``<J^T v, u>`` from vjp;
2. agreement with central finite differences (for programs of smooth ops);
3. second-order agreement: forward-over-reverse, reverse-over-forward and
   reverse-over-reverse Hessian-vector products; jacfwd equals jacrev;
   float32 programs keep float32 derivatives, close to the float64 ones; checkpoint
   and pass-through handlers change nothing;
4. vmap agreement with a Python loop over the examples, for the function, its vjp
   and its jvp, with the batch axis anywhere in each input (or absent) and at the
   front or back of the output; nested vmap against a double loop.

The runs are derandomized (a fixed sequence of examples) so CI is reproducible.
``KENAZ_HYPOTHESIS_EXAMPLES`` (default 200) sets the number of programs per property;
``KENAZ_HYPOTHESIS_RANDOM=1`` draws fresh random programs instead.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import kenaz
import kenaz.numpy as knp
from kenaz import Tensor

from ._support import env_int

EXAMPLES = env_int("KENAZ_HYPOTHESIS_EXAMPLES", 200)
PROPERTY_SETTINGS = settings(
    max_examples=EXAMPLES,
    derandomize=os.environ.get("KENAZ_HYPOTHESIS_RANDOM") != "1",
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
MAX_STEPS = 6
BATCH = 3


# -- the instruction set ---------------------------------------------------------------------
@dataclass(frozen=True)
class Step:
    """One instruction: ``regs.append(fn(regs[src], *(regs[i] for i in others), *consts))``."""

    name: str
    src: int
    fn: Callable[..., Any] = field(repr=False)
    others: tuple[int, ...] = ()
    consts: tuple[Any, ...] = field(default=(), repr=False)
    detail: str = ""
    smooth: bool = True

    def describe(self, out: int) -> str:
        args = ", ".join([f"r{self.src}", *(f"r{i}" for i in self.others)])
        return f"r{out} = {self.name}({args}{', ' + self.detail if self.detail else ''})"


@dataclass
class Program:
    """A straight-line program over registers r0..r{n_inputs-1} (the inputs)."""

    input_shapes: list[tuple[int, ...]]
    steps: list[Step]

    def __call__(self, *inputs: Any) -> Any:
        regs = list(inputs)
        for step in self.steps:
            regs.append(step.fn(regs[step.src], *(regs[i] for i in step.others), *step.consts))
        return regs[-1]

    @property
    def smooth(self) -> bool:
        return all(step.smooth for step in self.steps)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(repr(self))  # hypothesis prints failing programs with this

    def __repr__(self) -> str:
        n = len(self.input_shapes)
        lines = [f"inputs {', '.join(f'r{i}{s}' for i, s in enumerate(self.input_shapes))}"]
        lines += [step.describe(n + k) for k, step in enumerate(self.steps)]
        return "Program(\n  " + "\n  ".join(lines) + "\n)"


# Elementwise maps that are smooth and keep values bounded over the reals.
UNARY: dict[str, Callable[[Any], Any]] = {
    "sin": knp.sin,
    "cos": knp.cos,
    "tanh": knp.tanh,
    "arctan": knp.arctan,
    "expit": knp.expit,
    "erf": knp.erf,
    "exp(tanh)": lambda x: knp.exp(knp.tanh(x)),
    "log1p(x^2)": lambda x: knp.log1p(x * x),
    "sqrt(x^2+1)": lambda x: knp.sqrt(x * x + 1.0),
    "neg": lambda x: -x,
    "x*tanh(x)": lambda x: x * knp.tanh(x),
}
KINKED: dict[str, Callable[[Any], Any]] = {
    "abs": knp.abs,
    "relu": lambda x: knp.maximum(x, 0.0),
    "clip": lambda x: knp.clip(x, -0.5, 0.5),
}
BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "add": lambda x, y: x + y,
    "sub": lambda x, y: x - y,
    "mul": lambda x, y: x * y,
    "div": lambda x, y: x / (1.0 + y * y),
    "atan2": lambda x, y: knp.arctan2(x, y * y + 1.0),
    "pow": lambda x, y: knp.power(x * x + 1.0, knp.tanh(y)),
}
REDUCTIONS: dict[str, Callable[..., Any]] = {
    "sum": knp.sum,
    "mean": knp.mean,
    "prod": knp.prod,
    "logsumexp": knp.logsumexp,
    "var": knp.var,
}
KINKED_REDUCTIONS: dict[str, Callable[..., Any]] = {"max": knp.max, "min": knp.min}


def _floats(shape: tuple[int, ...]) -> st.SearchStrategy[np.ndarray]:
    return hnp.arrays(np.float64, shape, elements=st.floats(-1.5, 1.5, width=64))


def _broadcastable_shape(draw: st.DrawFn, shape: tuple[int, ...]) -> tuple[int, ...]:
    """A shape that broadcasts against ``shape``: a suffix of it, with some axes set to 1."""
    keep = draw(st.integers(0, len(shape)))
    suffix = shape[len(shape) - keep :]
    return tuple(1 if draw(st.booleans()) else n for n in suffix)


def _axis_subset(draw: st.DrawFn, ndim: int) -> tuple[int, ...] | None:
    if ndim == 0 or draw(st.booleans()):
        return None
    axes = draw(st.lists(st.integers(0, ndim - 1), min_size=1, max_size=ndim, unique=True))
    return tuple(a - ndim if draw(st.booleans()) else a for a in axes)  # negative axes too


def _draw_step(draw: st.DrawFn, shapes: list[tuple[int, ...]], smooth_only: bool) -> Step:
    src = draw(st.integers(0, len(shapes) - 1))
    shape = shapes[src]
    ndim = len(shape)
    kinds = ["unary", "unary", "binary", "binary", "reduce", "shape", "shape", "shape", "matmul"]
    kind = draw(st.sampled_from(kinds))
    if kind == "unary":
        table = UNARY if smooth_only or draw(st.sampled_from([1, 2, 3, 0])) else KINKED
        name = draw(st.sampled_from(sorted(table)))
        return Step(name, src, table[name], smooth=table is UNARY)
    if kind == "binary":
        name = draw(st.sampled_from(sorted(BINARY)))
        partners = [i for i, s in enumerate(shapes) if _broadcasts(s, shape)]
        if draw(st.booleans()):
            return Step(name, src, BINARY[name], others=(draw(st.sampled_from(partners)),))
        const_shape = _broadcastable_shape(draw, shape)
        const = draw(_floats(const_shape))
        detail = f"const{const_shape}"
        if draw(st.booleans()):  # the constant on the left
            return Step(name, src, lambda x, c, f=BINARY[name]: f(c, x), consts=(const,),
                        detail=detail + " on the left")
        return Step(name, src, BINARY[name], consts=(const,), detail=detail)
    if kind == "reduce":
        kinked = not smooth_only and draw(st.sampled_from([1, 2, 3, 0])) == 0
        table = KINKED_REDUCTIONS if kinked else REDUCTIONS
        name = draw(st.sampled_from(sorted(table)))
        axis = _axis_subset(draw, ndim)
        keepdims = draw(st.booleans())
        reduce = table[name]
        return Step(name, src, lambda x, a=axis, k=keepdims: reduce(x, axis=a, keepdims=k),
                    detail=f"axis={axis}, keepdims={keepdims}", smooth=not kinked)
    if kind == "matmul" and ndim >= 1:
        k = draw(st.integers(1, 3))
        matrix = draw(_floats((shape[-1], k)))
        if draw(st.booleans()):
            return Step("matmul", src, lambda x, m: x @ m, consts=(matrix,),
                        detail=f"const{matrix.shape}")
        vector = matrix[:, 0]
        return Step("einsum('...i,i->...')", src, lambda x, v: knp.einsum("...i,i->...", x, v),
                    consts=(vector,), detail=f"const{vector.shape}")
    return _draw_shape_step(draw, src, shape, shapes, smooth_only)


def _draw_shape_step(
    draw: st.DrawFn,
    src: int,
    shape: tuple[int, ...],
    shapes: list[tuple[int, ...]],
    smooth_only: bool,
) -> Step:
    ndim = len(shape)
    options = ["expand_dims", "broadcast_to", "reshape"]
    if ndim >= 1:
        options += ["transpose", "flip", "slice", "take", "cumsum", "concatenate", "tile"]
        options += ["cumprod", "pad", "repeat", "roll", "stack", "split", "at_set", "at_add"]
        options += [] if smooth_only else ["sort", "where"]
    if ndim >= 2:
        options += ["swapaxes", "moveaxis", "triu", "diagonal"] * 2
    name = draw(st.sampled_from(options))
    axis = draw(st.integers(0, ndim - 1)) if ndim else 0
    if name == "expand_dims":
        where = draw(st.integers(-ndim - 1, ndim))
        return Step(name, src, lambda x, a=where: knp.expand_dims(x, a), detail=f"axis={where}")
    if name == "broadcast_to":
        lead = draw(st.integers(1, 3))
        target = (lead, *shape)
        return Step(name, src, lambda x, t=target: knp.broadcast_to(x, t), detail=f"{target}")
    if name == "reshape":
        target = (-1,) if draw(st.booleans()) else tuple(reversed(shape))
        return Step(name, src, lambda x, t=target: knp.reshape(x, t), detail=f"{target}")
    if name == "transpose":
        perm = tuple(draw(st.permutations(range(ndim))))
        return Step(name, src, lambda x, p=perm: knp.transpose(x, p), detail=f"{perm}")
    if name == "flip":
        return Step(name, src, lambda x, a=axis: knp.flip(x, a), detail=f"axis={axis}")
    if name == "slice":
        item = draw(st.sampled_from([slice(None, None, -1), slice(1, None), slice(None, None, 2)]))
        index = (slice(None),) * axis + (item,)
        if shape[axis] <= 1 and item == slice(1, None):
            item, index = slice(None, None, -1), (slice(None),) * axis + (slice(None, None, -1),)
        return Step("getitem", src, lambda x, i=index: x[i], detail=f"[{'...,' * axis}{item}]")
    if name == "take":  # integer-array indexing, with repeats (a scatter-add in reverse)
        n = shape[axis]
        picks = np.array(draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=4)))
        return Step(name, src, lambda x, p=picks, a=axis: knp.take(x, p, axis=a),
                    detail=f"{picks.tolist()}, axis={axis}")
    if name == "cumsum":
        return Step(name, src, lambda x, a=axis: knp.cumsum(x, axis=a), detail=f"axis={axis}")
    if name == "concatenate":
        partners = [i for i, s in enumerate(shapes) if s == shape]
        other = draw(st.sampled_from(partners))
        return Step(name, src, lambda x, y, a=axis: knp.concatenate([x, y], axis=a),
                    others=(other,), detail=f"axis={axis}")
    if name == "sort":
        return Step(name, src, lambda x, a=axis: knp.sort(x, axis=a), detail=f"axis={axis}",
                    smooth=False)
    if name == "tile":
        reps = draw(st.integers(1, 2))
        return Step(name, src, lambda x, r=reps: knp.tile(x, r), detail=f"{reps}")
    if name == "cumprod":
        return Step(name, src, lambda x, a=axis: knp.cumprod(x, axis=a), detail=f"axis={axis}")
    if name == "pad":
        width = draw(st.integers(0, 2))
        return Step(name, src, lambda x, w=width: knp.pad(x, w), detail=f"{width}")
    if name == "repeat":
        return Step(name, src, lambda x, a=axis: knp.repeat(x, 2, axis=a), detail=f"2, axis={axis}")
    if name == "roll":
        shift = draw(st.integers(-2, 2))
        return Step(name, src, lambda x, k=shift, a=axis: knp.roll(x, k, axis=a),
                    detail=f"{shift}, axis={axis}")
    if name == "stack":
        partners = [i for i, s in enumerate(shapes) if s == shape]
        other = draw(st.sampled_from(partners))
        where = draw(st.integers(-ndim - 1, ndim))
        return Step(name, src, lambda x, y, a=where: knp.stack([x, y], axis=a), others=(other,),
                    detail=f"axis={where}")
    if name == "split":
        n = shape[axis]
        cut = draw(st.integers(1, n - 1)) if n >= 2 else 1  # n == 1: part 0 is everything
        part = 0 if n == 1 else draw(st.integers(0, 1))
        return Step(name, src, lambda x, c=cut, a=axis, k=part: knp.split(x, [c], axis=a)[k],
                    detail=f"[{cut}], axis={axis}, part {part}")
    if name in ("at_set", "at_add"):  # functional updates of rows along axis 0
        n = shape[0]
        rows = draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=3))  # duplicates too
        picks = np.array(rows)
        if name == "at_set":
            update = lambda x, p=picks: knp.asarray(x).at[p].set(knp.sin(x[p[::-1]]) * 2.0)  # noqa: E731
        else:
            update = lambda x, p=picks: knp.asarray(x).at[p].add(x[p] * x[p])  # noqa: E731
        return Step(name, src, update, detail=f"rows {rows}")
    if name == "where":
        return Step(name, src, lambda x: knp.where(x > 0.1, knp.sin(x), x * x), smooth=False)
    if name == "triu":
        k = draw(st.integers(-1, 1))
        return Step(name, src, lambda x, k=k: knp.triu(x, k), detail=f"k={k}")
    if name == "diagonal":
        offset = draw(st.integers(-1, 1))
        return Step(name, src, lambda x, o=offset: knp.diagonal(x, o), detail=f"offset={offset}")
    if name == "swapaxes":
        other_axis = draw(st.integers(0, ndim - 1))
        return Step(name, src, lambda x, a=axis, b=other_axis: knp.swapaxes(x, a, b),
                    detail=f"{axis}, {other_axis}")
    destination = draw(st.integers(-ndim, ndim - 1))
    return Step("moveaxis", src, lambda x, a=axis, d=destination: knp.moveaxis(x, a, d),
                detail=f"{axis} -> {destination}")


def _broadcasts(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    try:
        np.broadcast_shapes(a, b)
    except ValueError:
        return False
    return True


@st.composite
def programs(draw: st.DrawFn, smooth_only: bool = False) -> tuple[Program, list[np.ndarray]]:
    """A random program and inputs for it. Shapes are tracked by running each new step on
    ones (so every drawn step is valid for the shapes it meets)."""
    n_inputs = draw(st.integers(1, 2))
    ranks = [draw(st.sampled_from([2, 1, 3, 0])) for _ in range(n_inputs)]  # 0-d: 1 in 4
    input_shapes = [tuple(draw(st.integers(1, 3)) for _ in range(r)) for r in ranks]
    shapes = list(input_shapes)
    values: list[Any] = [np.ones(s) for s in input_shapes]
    steps: list[Step] = []
    for _ in range(draw(st.integers(1, MAX_STEPS))):
        step = _draw_step(draw, shapes, smooth_only)
        out = step.fn(values[step.src], *(values[i] for i in step.others), *step.consts)
        if out.size > 512 or out.size == 0:  # keep programs small (empty inputs: elsewhere)
            continue
        steps.append(step)
        values.append(out)
        shapes.append(tuple(out.shape))
    if not steps:
        steps.append(Step("sin", 0, knp.sin))
    inputs = [draw(_floats(s)) for s in input_shapes]
    return Program(input_shapes, steps), inputs


# -- helpers -------------------------------------------------------------------------------
def _vdot(a: Any, b: Any) -> float:
    return float(np.sum(np.asarray(a) * np.asarray(b)))


def _directions(inputs: Sequence[np.ndarray], out_shape: tuple[int, ...], seed: int):
    rng = np.random.default_rng(seed)
    tangents = [rng.normal(size=x.shape) for x in inputs]
    cotangent = rng.normal(size=out_shape)
    return tangents, cotangent


# -- the properties ------------------------------------------------------------------------
@PROPERTY_SETTINGS
@given(programs(), st.integers(0, 2**16))
def test_forward_and_reverse_mode_agree(case: tuple[Program, list[np.ndarray]], seed: int) -> None:
    """<v, J u> by jvp equals <J^T v, u> by vjp, for random u and v (also at kinks and ties,
    where both modes follow the same convention); linearize gives jvp's tangent."""
    program, inputs = case
    out = program(*inputs)
    tangents, cotangent = _directions(inputs, out.shape, seed)
    out_jvp, tangent_out = kenaz.jvp(program, tuple(inputs), tuple(tangents))
    out_vjp, pullback = kenaz.vjp(program, *inputs)
    cotangents_in = pullback(cotangent)
    np.testing.assert_array_equal(np.asarray(out_jvp), np.asarray(out))
    np.testing.assert_array_equal(np.asarray(out_vjp), np.asarray(out))
    assert tangent_out.shape == out.shape
    for x, ct in zip(inputs, cotangents_in, strict=True):
        assert ct.shape == x.shape and ct.dtype == x.dtype
    forward = _vdot(cotangent, tangent_out)
    reverse = sum(_vdot(ct, t) for ct, t in zip(cotangents_in, tangents, strict=True))
    scale = np.sum(np.abs(cotangent) * np.abs(np.asarray(tangent_out))) + 1.0
    assert abs(forward - reverse) <= 1e-9 * scale, (program, forward, reverse)
    out_lin, f_jvp = kenaz.linearize(program, *inputs)
    np.testing.assert_array_equal(np.asarray(out_lin), np.asarray(out))
    np.testing.assert_allclose(np.asarray(f_jvp(*tangents)), np.asarray(tangent_out),
                               rtol=1e-12, atol=1e-12, err_msg=f"linearize: {program!r}")


@PROPERTY_SETTINGS
@given(programs(smooth_only=True), st.integers(0, 2**16))
def test_derivatives_agree_with_finite_differences(
    case: tuple[Program, list[np.ndarray]], seed: int
) -> None:
    """The jvp along a random direction matches the central difference
    (f(x + h u) - f(x - h u)) / 2h, and so does the vjp (through the dot-product identity)."""
    program, inputs = case
    out = program(*inputs)
    tangents, cotangent = _directions(inputs, out.shape, seed)
    h = 1e-6
    plus = program(*[x + h * t for x, t in zip(inputs, tangents, strict=True)])
    minus = program(*[x - h * t for x, t in zip(inputs, tangents, strict=True)])
    numeric = (np.asarray(plus) - np.asarray(minus)) / (2 * h)
    _, tangent_out = kenaz.jvp(program, tuple(inputs), tuple(tangents))
    scale = np.abs(np.asarray(out)) + np.abs(numeric) + 1.0
    np.testing.assert_allclose(np.asarray(tangent_out) / scale, numeric / scale, atol=2e-6,
                               err_msg=repr(program))
    cotangents_in = kenaz.vjp(program, *inputs)[1](cotangent)
    reverse = sum(_vdot(ct, t) for ct, t in zip(cotangents_in, tangents, strict=True))
    assert abs(reverse - _vdot(cotangent, numeric)) <= 2e-6 * _vdot(np.abs(cotangent), scale), (
        program
    )


@PROPERTY_SETTINGS
@given(programs(), st.data())
def test_vmap_agrees_with_a_loop(
    case: tuple[Program, list[np.ndarray]], data: st.DataObject
) -> None:
    """vmap(f, in_axes, out_axes) equals stacking f over the examples, with each input
    batched at the front, the back, a middle axis or not at all, and the batch axis of the
    output at the front or the back; vmap of the pullback and of the jvp equal loops of
    pullbacks and jvps."""
    program, inputs = case
    in_axes: list[int | None] = [
        data.draw(st.one_of(st.none(), st.integers(-x.ndim - 1, x.ndim))) for x in inputs
    ]
    if all(a is None for a in in_axes):
        in_axes[0] = 0
    out_axis = data.draw(st.sampled_from([0, -1]))
    examples = [
        [x * (1.0 + 0.25 * b) - 0.1 * b if a is not None else x for x, a in zip(inputs, in_axes)]
        for b in range(BATCH)
    ]
    batched = [
        np.stack([ex[i] for ex in examples], axis=a) if a is not None else inputs[i]
        for i, a in enumerate(in_axes)
    ]
    axes = tuple(in_axes)
    expected = np.stack([np.asarray(program(*ex)) for ex in examples], axis=out_axis)
    result = kenaz.vmap(program, in_axes=axes, out_axes=out_axis)(*batched)
    assert isinstance(result, Tensor) and result.shape == expected.shape, program
    np.testing.assert_allclose(np.asarray(result), expected, rtol=1e-10, atol=1e-12,
                               err_msg=f"in_axes {axes}, out_axes {out_axis}: {program!r}")

    rng = np.random.default_rng(len(program.steps))
    cotangent = rng.normal(size=np.asarray(program(*inputs)).shape)
    tangents = tuple(rng.normal(size=x.shape) for x in inputs)

    def per_example_pullback(*xs: Any) -> Any:
        return kenaz.vjp(program, *xs)[1](cotangent)

    def per_example_jvp(*xs: Any) -> Any:
        return kenaz.jvp(program, xs, tangents)[1]

    batched_grads = kenaz.vmap(per_example_pullback, in_axes=axes)(*batched)
    for i, a in enumerate(in_axes):
        looped = np.stack([np.asarray(per_example_pullback(*ex)[i]) for ex in examples])
        np.testing.assert_allclose(np.asarray(batched_grads[i]), looped, rtol=1e-10, atol=1e-12,
                                   err_msg=f"vjp, input {i} (in_axes {a}) of {program!r}")
    batched_tangents = kenaz.vmap(per_example_jvp, in_axes=axes)(*batched)
    looped = np.stack([np.asarray(per_example_jvp(*ex)) for ex in examples])
    np.testing.assert_allclose(np.asarray(batched_tangents), looped, rtol=1e-10, atol=1e-12,
                               err_msg=f"jvp, in_axes {axes}: {program!r}")


@PROPERTY_SETTINGS
@given(programs())
def test_nested_vmap_agrees_with_a_double_loop(case: tuple[Program, list[np.ndarray]]) -> None:
    """vmap(vmap(f)) over a (2, 3) batch of the first input (the others shared) equals the
    double loop, and so does vmap of grad-of-sum inside vmap."""
    program, inputs = case
    grid = [[inputs[0] * (1.0 + 0.2 * i) + 0.1 * j for j in range(3)] for i in range(2)]
    rest = inputs[1:]
    stacked = np.stack([np.stack(row) for row in grid])
    in_axes = (0,) + (None,) * len(rest)
    nested = kenaz.vmap(kenaz.vmap(program, in_axes=in_axes), in_axes=in_axes)(stacked, *rest)
    expected = np.stack([np.stack([np.asarray(program(x, *rest)) for x in row]) for row in grid])
    np.testing.assert_allclose(np.asarray(nested), expected, rtol=1e-10, atol=1e-12,
                               err_msg=repr(program))
    grad_of_sum = kenaz.grad(lambda x, *r: knp.sum(program(x, *r)))
    nested_grads = kenaz.vmap(kenaz.vmap(grad_of_sum, in_axes=in_axes), in_axes=in_axes)(
        stacked, *rest
    )
    expected_grads = np.stack([np.stack([np.asarray(grad_of_sum(x, *rest)) for x in row])
                               for row in grid])
    np.testing.assert_allclose(np.asarray(nested_grads), expected_grads, rtol=1e-10, atol=1e-12,
                               err_msg=repr(program))


@PROPERTY_SETTINGS
@given(programs(), st.integers(0, 2**16))
def test_second_order_modes_agree(case: tuple[Program, list[np.ndarray]], seed: int) -> None:
    """The Hessian-vector product of <c, f(x)> three ways: forward-over-reverse
    (jvp of grad), reverse-over-forward (grad of jvp) and reverse-over-reverse (grad of
    <grad, u>). The rules are themselves differentiated here, so a rule written with a
    non-differentiable shortcut shows up."""
    program, inputs = case
    out = program(*inputs)
    tangents, weights = _directions(inputs, out.shape, seed)
    argnums = tuple(range(len(inputs)))

    def scalar(*xs: Any) -> Any:
        return knp.sum(program(*xs) * weights)

    def tangent_of_scalar(*xs: Any) -> Any:
        return kenaz.jvp(scalar, xs, tuple(tangents))[1]

    def gradient_along_u(*xs: Any) -> Any:
        grads = kenaz.grad(scalar, argnums=argnums)(*xs)
        return sum(knp.sum(g * u) for g, u in zip(grads, tangents, strict=True))

    fwd_over_rev = kenaz.jvp(kenaz.grad(scalar, argnums=argnums), tuple(inputs), tuple(tangents))[1]
    rev_over_fwd = kenaz.grad(tangent_of_scalar, argnums=argnums)(*inputs)
    rev_over_rev = kenaz.grad(gradient_along_u, argnums=argnums)(*inputs)
    for i, (a, b, c) in enumerate(zip(fwd_over_rev, rev_over_fwd, rev_over_rev, strict=True)):
        a, b, c = np.asarray(a), np.asarray(b), np.asarray(c)
        scale = np.max(np.abs(a)) + 1.0
        np.testing.assert_allclose(b / scale, a / scale, atol=1e-9, err_msg=f"{i}: {program!r}")
        np.testing.assert_allclose(c / scale, a / scale, atol=1e-9, err_msg=f"{i}: {program!r}")


@PROPERTY_SETTINGS
@given(programs())
def test_jacfwd_equals_jacrev(case: tuple[Program, list[np.ndarray]]) -> None:
    """The full Jacobian by forward mode (vmap of jvp over the basis) equals the one by
    reverse mode (vmap of vjp), for every input, and its shape is out.shape + in.shape."""
    program, inputs = case
    out_shape = np.asarray(program(*inputs)).shape
    argnums = tuple(range(len(inputs)))
    by_fwd = kenaz.jacfwd(program, argnums=argnums)(*inputs)
    by_rev = kenaz.jacrev(program, argnums=argnums)(*inputs)
    for x, a, b in zip(inputs, by_fwd, by_rev, strict=True):
        assert a.shape == b.shape == out_shape + x.shape, program
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-10, atol=1e-12,
                                   err_msg=repr(program))


@PROPERTY_SETTINGS
@given(programs(smooth_only=True), st.integers(0, 2**16))
def test_float32_programs_keep_their_dtypes(
    case: tuple[Program, list[np.ndarray]], seed: int
) -> None:
    """With float32 inputs, every cotangent is float32 (whatever the program promotes
    inside, e.g. through its float64 constants), every tangent has its output's dtype, and
    both agree with the float64 derivatives to float32 precision."""
    program, inputs = case
    inputs32 = [x.astype(np.float32) for x in inputs]
    out32 = program(*inputs32)
    tangents, cotangent = _directions(inputs, out32.shape, seed)
    tangents32 = tuple(t.astype(np.float32) for t in tangents)
    _, tangent_out = kenaz.jvp(program, tuple(inputs32), tangents32)
    assert tangent_out.dtype == out32.dtype, program
    cotangents32 = kenaz.vjp(program, *inputs32)[1](cotangent.astype(out32.dtype))
    assert all(ct.dtype == np.float32 for ct in cotangents32), program
    cotangents64 = kenaz.vjp(program, *inputs)[1](cotangent)
    for a, b in zip(cotangents32, cotangents64, strict=True):
        scale = np.max(np.abs(np.asarray(b))) + 1.0
        np.testing.assert_allclose(np.asarray(a) / scale, np.asarray(b) / scale, atol=1e-4,
                                   err_msg=repr(program))


@PROPERTY_SETTINGS
@given(programs(), st.integers(0, 2**16))
def test_checkpoint_and_no_op_handlers_change_nothing(
    case: tuple[Program, list[np.ndarray]], seed: int
) -> None:
    """Rematerializing the program (checkpoint, which re-runs it in the backward pass) or
    running it under a user handler that forwards every op gives exactly the same value,
    cotangents and tangents."""
    program, inputs = case
    out = program(*inputs)
    tangents, cotangent = _directions(inputs, out.shape, seed)

    def forwarded(*xs: Any) -> Any:
        with kenaz.handler(kenaz.Handler()):
            return program(*xs)

    reference_ct = kenaz.vjp(program, *inputs)[1](cotangent)
    reference_t = kenaz.jvp(program, tuple(inputs), tuple(tangents))[1]
    for variant in (kenaz.checkpoint(program), forwarded):
        value, pullback = kenaz.vjp(variant, *inputs)
        np.testing.assert_array_equal(np.asarray(value), np.asarray(out))
        for a, b in zip(pullback(cotangent), reference_ct, strict=True):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12, atol=1e-14,
                                       err_msg=repr(program))
        _, tangent = kenaz.jvp(variant, tuple(inputs), tuple(tangents))
        np.testing.assert_allclose(np.asarray(tangent), np.asarray(reference_t), rtol=1e-12,
                                   atol=1e-14, err_msg=repr(program))


def test_the_program_generator_covers_the_instruction_set() -> None:
    """A fixed sample of 1000 programs uses every kind of step: so the properties really
    range over unary, kinked, binary (with broadcasting constants), reductions (over axis
    subsets, keepdims), shape ops, indexing and matmul/einsum."""
    seen: set[str] = set()
    seen_broadcast_const = False

    @settings(max_examples=1000, derandomize=True, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(programs())
    def collect(case: tuple[Program, list[np.ndarray]]) -> None:
        nonlocal seen_broadcast_const
        for step in case[0].steps:
            seen.add(step.name)
            if "const" in step.detail and step.name in BINARY:
                seen_broadcast_const = True

    collect()
    expected = set(UNARY) | set(KINKED) | set(BINARY) | set(REDUCTIONS) | set(KINKED_REDUCTIONS)
    expected |= {"expand_dims", "broadcast_to", "reshape", "transpose", "flip", "getitem",
                 "take", "cumsum", "concatenate", "sort", "tile", "swapaxes", "moveaxis",
                 "matmul", "einsum('...i,i->...')", "cumprod", "pad", "repeat", "roll", "stack",
                 "split", "at_set", "at_add", "where", "triu", "diagonal"}
    assert expected - seen == set(), f"never drawn: {sorted(expected - seen)}"
    assert seen_broadcast_const
