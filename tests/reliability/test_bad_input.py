"""Bad input: every misuse gets an exception of a precise type whose message names
the problem; inputs that are unusual but valid (NaN, empty, 0-d) give the right
answer instead of an error.

The first table is the contract: (case, call, exception type, message fragment).
Known defects, when there are any, are rows marked ``xfail(strict=True)``, so
that a fix turns them into failures (XPASS) and the mark gets removed.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import kenaz
import kenaz.numpy as knp
from kenaz import Tensor, grad, io, jvp, linearize, vjp, vmap
from kenaz.errors import ConcretizationError, EscapedTracerError, ShapeError
from kenaz.io import CheckpointError
from kenaz.testing import check_grads

ONES3 = np.ones(3)


def _escaped_view() -> Any:
    """A per-example tensor smuggled out of its vmap through a list."""
    leaked: list[Any] = []
    vmap(lambda a: leaked.append(a) or a * 2.0)(knp.ones(3))
    return leaked[0] + 1.0


def _corrupt(tmp: Path, how: str) -> Path:
    """A checkpoint file: ``good``, or ``garbage``, ``truncated`` or ``foreign`` (an .npz
    that kenaz did not write)."""
    good = io.save(tmp / "good.npz", {"w": knp.ones((2, 3)), "b": [np.zeros(3), 1.0]})
    if how == "good":
        return good
    path = tmp / f"{how}.npz"
    if how == "garbage":
        path.write_bytes(b"this is not a zip archive at all")
    elif how == "truncated":
        path.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    elif how == "foreign":
        np.savez(path, weights=np.ones(3))
    return path


def _custom_vjp(bwd: Callable[..., Any]) -> Any:
    """x * y with a hand-written (possibly wrong) backward rule ``bwd(residuals, g)``."""

    @kenaz.custom_vjp
    def product(x: Any, y: Any) -> Any:
        return x * y

    product.defvjp(lambda x, y: (x * y, (x, y)), bwd)
    return product


def _custom_jvp(rule: Callable[..., Any]) -> Any:
    """sin with a hand-written (possibly wrong) jvp rule ``rule(primals, tangents)``."""

    @kenaz.custom_jvp
    def sine(x: Any) -> Any:
        return knp.sin(x)

    sine.defjvp(rule)
    return sine


# (id, call(tmp_path), exception type, message fragment: a regex searched in str(exception))
CASES: list[Any] = [
    # -- grad: argnums ------------------------------------------------------------------
    ("argnums out of range", lambda t: grad(lambda x: x, argnums=1)(1.0),
     ValueError, r"argnums=1 is out of range for a call with 1 positional argument"),
    ("negative argnums out of range", lambda t: grad(lambda x, y: x * y, argnums=-3)(1.0, 2.0),
     ValueError, r"argnums=-3 is out of range"),
    ("empty argnums", lambda t: grad(lambda x: x, argnums=())(1.0),
     ValueError, r"argnums is empty"),
    ("duplicate argnums", lambda t: grad(lambda x, y: x * y, argnums=(0, 0))(1.0, 2.0),
     ValueError, r"names the same argument twice"),
    ("float argnums", lambda t: grad(lambda x: x, argnums=0.5)(1.0),
     TypeError, r"argnums must be an int or a tuple of ints"),
    ("no positional argument", lambda t: grad(lambda: 1.0)(),
     ValueError, r"0 positional arguments"),
    # -- grad: the output -----------------------------------------------------------------
    ("non-scalar output", lambda t: grad(lambda x: x * 2.0)(ONES3),
     TypeError, r"must return a scalar \(shape \(\)\), but it returned shape \(3,\)"),
    ("shape (1,) output", lambda t: grad(lambda x: knp.sum(x, keepdims=True))(ONES3),
     TypeError, r"returned shape \(1,\)"),
    ("integer output", lambda t: grad(lambda x: knp.sum(x > 0).astype(int))(ONES3),
     TypeError, r"real float scalar, got dtype int64"),
    ("complex output", lambda t: grad(lambda x: x * 1j)(1.0),
     TypeError, r"complex scalar.*holomorphic=True"),
    ("tuple output", lambda t: grad(lambda x: (x, x))(1.0),
     TypeError, r"single scalar, got a pytree \(tuple\)"),
    ("string output", lambda t: grad(lambda x: "loss")(1.0),
     TypeError, r"must return Tensors, arrays or numbers.*got str"),
    ("has_aux without a pair", lambda t: grad(lambda x: x * 2.0, has_aux=True)(1.0),
     TypeError, r"has_aux=True the function must return a pair"),
    # -- grad: the inputs -----------------------------------------------------------------
    ("integer input", lambda t: grad(lambda x: x * 1.0)(3),
     TypeError, r"argument 0 has dtype int64.*allow_int=True"),
    ("boolean input", lambda t: grad(lambda x: x * 1.0)(True),
     TypeError, r"argument 0 has dtype bool"),
    ("integer leaf in a pytree input",
     lambda t: grad(lambda d: d["a"] * d["b"])({"a": 1.0, "b": 2}),
     TypeError, r"dtype int64"),
    ("string input", lambda t: grad(lambda x: x)("abc"),
     TypeError, r"dtype <U3"),
    ("object input", lambda t: grad(lambda x: x)(object()),
     TypeError, r"dtype object"),
    # -- jvp / linearize / vjp: tangents and cotangents --------------------------------------
    ("tangent tuple structure differs", lambda t: jvp(lambda a: a[0], ((1.0, 2.0),), ((1.0,),)),
     ValueError, r"tangents' structure .* differs from the primals'"),
    ("tangent dict keys differ", lambda t: jvp(lambda a: a["x"], ({"x": 1.0},), ({"y": 1.0},)),
     ValueError, r"tangents' structure .*'y'.* differs from the primals' .*'x'"),
    ("tangent shape differs", lambda t: jvp(lambda a: a * 2, (ONES3,), (np.ones(2),)),
     ValueError, r"tangent of shape \(2,\) was given for a primal of shape \(3,\)"),
    ("primals not a tuple", lambda t: jvp(lambda a: a * 2, ONES3, ONES3),
     TypeError, r"must be tuples or lists.*jvp\(f, \(x,\), \(t,\)\)"),
    ("complex tangent for a real primal", lambda t: jvp(lambda a: a * 2, (1.0,), (1j,)),
     TypeError, r"complex tangent \(complex128\) was given for a primal of real dtype"),
    ("linearized tangent shape", lambda t: linearize(lambda a: a * 2, ONES3)[1](np.ones(2)),
     ValueError, r"tangent of shape \(2,\)"),
    ("cotangent shape differs", lambda t: vjp(lambda a: a * 2, ONES3)[1](np.ones(2)),
     ValueError, r"cotangent of shape \(2,\) was given for an output of shape \(3,\)"),
    ("cotangent structure differs", lambda t: vjp(lambda a: (a, a), ONES3)[1](ONES3),
     ValueError, r"cotangent's structure .* differs from the output's"),
    ("complex cotangent for a real output", lambda t: vjp(lambda a: a * 2, 1.0)[1](1j),
     TypeError, r"complex cotangent \(complex128\) was given for an output of real dtype"),
    # -- shapes that do not fit, one or more per op family --------------------------------------
    ("elementwise: no broadcast", lambda t: knp.ones(3) + knp.ones(4),
     ShapeError, r"kenaz.add: operands of shapes \(3,\) and \(4,\) do not broadcast"),
    ("elementwise under grad", lambda t: grad(lambda x: knp.sum(x * knp.ones(4)))(ONES3),
     ShapeError, r"kenaz.mul: operands of shapes \(3,\) and \(4,\)"),
    ("where: no broadcast", lambda t: knp.where(ONES3 > 0, knp.ones(2), 0.0),
     ShapeError, r"kenaz.where: operands of shapes \(3,\) and \(2,\)"),
    ("matmul: not aligned", lambda t: knp.ones((2, 3)) @ knp.ones((2, 3)),
     ValueError, r"shapes \(2, 3\) and \(2, 3\) are not aligned"),
    ("matmul: 0-d operand", lambda t: knp.matmul(knp.ones(()), ONES3),
     ValueError, r"at least 1-d.*use `\*`"),
    ("einsum: sizes differ", lambda t: knp.einsum("ij,jk->ik", knp.ones((2, 3)), knp.ones((2, 3))),
     ShapeError, r"index 'j' .* has size 3 in one operand and 2 in another"),
    ("tensordot: sizes differ", lambda t: knp.tensordot(knp.ones((2, 3)), knp.ones((4, 5))),
     ShapeError, r"has size 2 in one operand and 4 in another"),
    ("einsum: operand count", lambda t: knp.einsum("ij,jk->ik", knp.ones((2, 3))),
     ValueError, r"names 2 operands but 1 were given"),
    ("reshape: sizes differ", lambda t: knp.reshape(knp.ones(6), (4, 2)),
     ValueError, r"cannot reshape array of shape \(6,\) into \(4, 2\)"),
    ("concatenate: shapes differ", lambda t: knp.concatenate([knp.ones((2, 3)), knp.ones((2, 4))]),
     ValueError, r"shapes \[\(2, 3\), \(2, 4\)\] differ outside the concatenation axis"),
    ("stack: shapes differ", lambda t: knp.stack([knp.ones(2), ONES3]),
     ValueError, r"same shape"),
    ("transpose: not a permutation", lambda t: knp.transpose(knp.ones((2, 3)), (0, 0)),
     ValueError, r"not a permutation"),
    ("broadcast_to: impossible", lambda t: knp.broadcast_to(ONES3, (2, 4)),
     ValueError, r"cannot broadcast an array of shape \(3,\) to \(2, 4\)"),
    ("squeeze: axis not of size 1", lambda t: knp.squeeze(knp.ones((2, 3)), 0),
     ValueError, r"its size is not 1"),
    ("split: unequal sections", lambda t: knp.split(knp.ones(5), 2),
     ValueError, r"does not split into 2 equal sections"),
    ("reduction: axis out of bounds", lambda t: knp.sum(ONES3, axis=1),
     np.exceptions.AxisError, r"kenaz.sum: axis 1 is out of bounds.*dimension 1"),
    ("reduction: repeated axis", lambda t: knp.prod(ONES3, axis=(0, 0)),
     ValueError, r"repeated axis"),
    ("reduction: float axis", lambda t: knp.mean(ONES3, axis=0.5),
     TypeError, r"kenaz.mean: axis must be None, an int or a tuple of ints, got 0.5"),
    ("scan: axis out of bounds", lambda t: knp.cumsum(ONES3, axis=2),
     np.exceptions.AxisError, r"kenaz.cumsum: axis 2"),
    ("indexing: out of bounds", lambda t: knp.ones(3)[5],
     IndexError, r"index 5 is out of bounds"),
    ("indexing: float index", lambda t: knp.ones(3)[1.5],
     IndexError, r"integer or boolean"),
    ("indexing: Python bool index", lambda t: knp.ones(3)[True],
     TypeError, r"Python bool is not a valid index"),
    ("scatter: values do not fit", lambda t: knp.ones(3).at[0:2].set(ONES3),
     ValueError, r"could not broadcast input array from shape \(3,\) into shape \(2,\)"),
    ("scatter: unknown mode", lambda t: knp.scatter(ONES3, 0, 1.0, mode="avg"),
     ValueError, r"unknown mode 'avg'"),
    ("item assignment into a tracked tensor",
     lambda t: grad(lambda x: x.__setitem__(0, 1.0) or x.sum())(ONES3),
     TypeError, r"tracks.*\.at\[index\]\.set"),
    ("item assignment of a tracked value",
     lambda t: grad(lambda x: knp.zeros(3).__setitem__(0, x[0]) or x.sum())(ONES3),
     TypeError, r"silently dropped.*\.at\[index\]\.set"),
    ("item assignment into read-only memory",
     lambda t: knp.broadcast_to(ONES3, (2, 3)).__setitem__(0, 1.0),
     ValueError, r"read-only.*x\.copy\(\)"),
    # -- vmap ----------------------------------------------------------------------------------
    ("vmap: batch sizes differ", lambda t: vmap(lambda a, b: a + b)(knp.ones(3), knp.ones(4)),
     ValueError, r"different sizes along their batch axes \(argument 0: 3, argument 1: 4\)"),
    ("vmap: in_axes out of range", lambda t: vmap(lambda a: a, in_axes=2)(knp.ones((3, 4))),
     ValueError, r"in_axes asks for axis 2 of argument 0, which has shape \(3, 4\)"),
    ("vmap: negative in_axes out of range",
     lambda t: vmap(lambda a: a, in_axes=-3)(np.ones((3, 4))),
     ValueError, r"axis -3"),
    ("vmap: in_axes length", lambda t: vmap(lambda a, b: a, in_axes=(0,))(ONES3, ONES3),
     ValueError, r"in_axes has 1 entries but the function was called with 2"),
    ("vmap: in_axes not ints", lambda t: vmap(lambda a: a, in_axes=0.5)(ONES3),
     TypeError, r"in_axes must contain ints and None"),
    ("vmap: in_axes not a prefix",
     lambda t: vmap(lambda d: d["a"], in_axes=({"b": 0},))({"a": ONES3}),
     ValueError, r"not a pytree prefix"),
    ("vmap: nothing batched", lambda t: vmap(lambda a: a, in_axes=None)(ONES3),
     ValueError, r"no argument is batched.*axis_size="),
    ("vmap: 0-d argument", lambda t: vmap(lambda a: a)(knp.array(1.0)),
     ValueError, r"which has shape \(\)"),
    ("vmap: out_axes out of range", lambda t: vmap(lambda a: a, out_axes=3)(np.ones((3, 4))),
     ValueError, r"out_axes asks for axis 3"),
    ("vmap: axis_size disagrees", lambda t: vmap(lambda a: a, axis_size=4)(ONES3),
     ValueError, r"axis_size=4 but the batched arguments have size 3"),
    ("vmap: unknown method", lambda t: vmap(lambda a: a, method="jit")(ONES3),
     ValueError, r"method must be 'vectorize' or 'loop'"),
    ("vmap: batched value escapes", lambda t: _escaped_view(),
     EscapedTracerError, r"used after the vmap that created it returned"),
    ("vmap: Tensor as a Python bool", lambda t: vmap(lambda a: a if a > 0 else -a)(ONES3),
     ConcretizationError, r"stands for 3 different values.*vmap\(f, method=\"loop\"\)"),
    ("vmap: float() of a batched value", lambda t: vmap(lambda a: float(a))(ONES3),
     ConcretizationError, r"concrete value was requested"),
    ("vmap: np.asarray of a batched value", lambda t: vmap(lambda a: np.asarray(a))(ONES3),
     ConcretizationError, r"method=\"loop\""),
    ("vmap: per-example shapes do not fit",
     lambda t: vmap(lambda a: a + knp.ones(4))(np.ones((2, 3))),
     ShapeError, r"kenaz.add inside vmap: operands of per-example shapes \(3,\) and \(4,\)"),
    ("vmap: per-example matmul not aligned",
     lambda t: vmap(lambda a: a @ knp.ones((4, 2)))(np.ones((2, 3))),
     ValueError, r"shapes \(3,\) and \(4, 2\) are not aligned"),
    ("vmap: per-example index out of bounds",  # (NumPy names the batched axis number)
     lambda t: vmap(lambda x: x[5])(np.ones((2, 3))),
     IndexError, r"index 5 is out of bounds .* size 3"),
    ("vmap: per-example axis out of bounds",
     lambda t: vmap(lambda a: knp.sum(a, axis=1))(np.ones((2, 3))),
     np.exceptions.AxisError, r"kenaz.sum: axis 1 is out of bounds for an array of dimension 1"),
    # -- dtypes the library does not hold --------------------------------------------------------
    ("object array", lambda t: knp.array([object(), 1]),
     TypeError, r"cannot make a Tensor of dtype object.*only bool, integer, float and complex"),
    ("string array", lambda t: knp.array(["a", "b"]),
     TypeError, r"dtype <U1"),
    ("Tensor of a string", lambda t: Tensor("abc"),
     TypeError, r"dtype <U3 from str"),
    ("datetime array", lambda t: knp.array(np.datetime64("2020-01-01")),
     TypeError, r"dtype datetime64"),
    ("astype to str", lambda t: knp.ones(3).astype(str),
     TypeError, r"kenaz.astype: cannot cast to dtype <U"),
    ("astype to object", lambda t: knp.ones(3).astype(object),
     TypeError, r"cannot cast to dtype object"),
    # -- 0-d and empty arrays where they cannot work -----------------------------------------------
    ("len of a 0-d tensor", lambda t: len(knp.array(1.0)),
     TypeError, r"len\(\) of a 0-d Tensor"),
    ("iterating a 0-d tensor", lambda t: list(knp.array(1.0)),
     TypeError, r"iteration over a 0-d Tensor"),
    ("indexing a 0-d tensor", lambda t: grad(lambda x: x[0])(knp.array(1.0)),
     IndexError, r"0-dimensional"),
    ("reducing axis 0 of a 0-d tensor", lambda t: knp.sum(knp.array(1.0), axis=0),
     np.exceptions.AxisError, r"dimension 0"),
    ("concatenating 0-d tensors", lambda t: knp.concatenate([knp.array(1.0), knp.array(2.0)]),
     ValueError, r"zero-dimensional arrays cannot be concatenated"),
    ("max of an empty tensor", lambda t: grad(lambda x: knp.max(x))(knp.zeros(0)),
     ValueError, r"zero-size array to reduction operation maximum"),
    ("float() of a vector", lambda t: float(knp.ones(3)),
     TypeError, r"only 0-dimensional arrays can be converted"),
    # -- custom rules and the checking tools ---------------------------------------------------
    ("custom_vjp: bwd returns too few cotangents",
     lambda t: grad(lambda x: _custom_vjp(lambda r, g: (g,))(x, 2.0))(1.0),
     TypeError, r"bwd rule of 'product' must return a tuple with one cotangent per "
                r"differentiable argument \(2\), got tuple of length 1"),
    ("custom_vjp: bwd returns a wrong shape",
     lambda t: grad(lambda x: knp.sum(_custom_vjp(lambda r, g: (knp.ones(4), g))(x, 2.0)))(ONES3),
     ValueError, r"cotangent returned by the bwd rule of 'product' has shape \(4,\), "
                 r"expected \(3,\)"),
    ("custom_vjp: no rule defined", lambda t: grad(kenaz.custom_vjp(lambda x: x * 2.0))(1.0),
     TypeError, r"has no rule yet; define one with .*defvjp\(fwd, bwd\)"),
    ("custom_jvp: rule returns a wrong shape",
     lambda t: jvp(_custom_jvp(lambda p, tg: (knp.sin(p[0]), knp.ones(4))), (ONES3,), (ONES3,)),
     ValueError, r"tangent returned by the jvp rule of 'sine' has shape \(4,\), expected \(3,\)"),
    ("custom_jvp: rule does not return a pair",
     lambda t: jvp(_custom_jvp(lambda p, tg: knp.sin(p[0])), (ONES3,), (ONES3,)),
     TypeError, r"must return a pair \(out, tangent_out\)"),
    ("check_grads: a wrong rule is caught",
     lambda t: check_grads(_custom_jvp(lambda p, tg: (knp.sin(p[0]), 2 * tg[0])), (ONES3,)),
     AssertionError, r"jvp differs from finite differences"),
    ("check_grads: unknown mode", lambda t: check_grads(knp.sin, (ONES3,), modes=("sideways",)),
     ValueError, r"modes must be 'fwd' and/or 'rev'"),
    ("check_grads: args not a tuple", lambda t: check_grads(knp.sin, ONES3),
     TypeError, r"args must be a tuple or list .* check_grads\(f, \(x,\)\)"),
    ("hvp: tangent shape differs",
     lambda t: kenaz.hvp(lambda x: knp.sum(x**3), (ONES3,), (np.ones(2),)),
     ValueError, r"tangent of shape \(2,\) was given for a primal of shape \(3,\)"),
    ("jacrev: argnums out of range", lambda t: kenaz.jacrev(lambda x: x, argnums=2)(ONES3),
     ValueError, r"kenaz.jacrev: argnums=2 is out of range"),
    # -- saving and loading ----------------------------------------------------------------------
    ("save under a file (unwritable path)", lambda t: io.save(_corrupt(t, "garbage") / "w.npz", {}),
     NotADirectoryError, r"Not a directory"),
    ("save onto a directory", lambda t: io.save((t / "dir.npz").mkdir() or t / "dir.npz", {}),
     IsADirectoryError, r"Is a directory"),
    ("save to a missing directory", lambda t: io.save(t / "missing" / "w.npz", {}),
     FileNotFoundError, r"No such file or directory"),
    ("save with an unknown extension", lambda t: io.save(t / "w.pkl", {}),
     ValueError, r"unknown checkpoint format '.pkl'"),
    ("save an object leaf", lambda t: io.save(t / "w.npz", {"a": np.array([object()])}),
     TypeError, r"cannot save a leaf of dtype object"),
    ("save a string leaf", lambda t: io.save(t / "w.npz", {"a": "hello"}),
     TypeError, r"cannot save a leaf of dtype <U5"),
    ("save non-string dict keys", lambda t: io.save(t / "w.npz", {1: 1.0}),
     TypeError, r"dict keys must be strings"),
    ("load a corrupt file", lambda t: io.load(_corrupt(t, "garbage")),
     CheckpointError, r"not a readable .npz checkpoint \(truncated or corrupt\?\)"),
    ("load a truncated file", lambda t: io.load(_corrupt(t, "truncated")),
     CheckpointError, r"truncated or corrupt"),
    ("load a foreign .npz", lambda t: io.load(_corrupt(t, "foreign")),
     CheckpointError, r"not a kenaz checkpoint"),
    ("load a missing file", lambda t: io.load(t / "missing.npz"),
     FileNotFoundError, r"no such file"),
    ("load against a template of other shapes",
     lambda t: io.load(_corrupt(t, "good"), {"w": knp.ones((3, 3)), "b": [np.zeros(3), 1.0]}),
     CheckpointError, r"parameter 'w' has shape \(2, 3\) in .* but \(3, 3\) in the template"),
    ("load against a template of another structure",
     lambda t: io.load(_corrupt(t, "good"), {"w": knp.ones((2, 3))}),
     CheckpointError, r"do not match the template: only in the file \['b.0', 'b.1'\]"),
]


def _ids(cases: list[Any]) -> list[str]:
    return [c.values[0] if hasattr(c, "values") else c[0] for c in cases]


def test_the_table_is_large_and_its_rows_are_distinct() -> None:
    """At least 40 misuse cases, each named once."""
    names = _ids(CASES)
    assert len(names) >= 40
    assert len(set(names)) == len(names)


@pytest.mark.parametrize("name, call, error, fragment", CASES, ids=_ids(CASES))
def test_misuse_raises_a_clear_error(
    name: str, call: Callable[[Path], Any], error: type[BaseException], fragment: str,
    tmp_path: Path,
) -> None:
    """The call raises exactly ``error`` (or a subclass) and the message names the problem."""
    with pytest.raises(error) as info:
        call(tmp_path)
    assert re.search(fragment, str(info.value)), f"{name}: message was {str(info.value)!r}"


# -- unusual but valid input: the right answer, not an error --------------------------------------
def test_nan_input_gives_nan_only_where_it_flows() -> None:
    """A NaN input propagates to the outputs and gradients it feeds, and to no others."""
    x = np.array([np.nan, 1.0, 2.0])
    gradient = grad(lambda v: knp.sum(v * v))(x)
    np.testing.assert_array_equal(np.asarray(gradient), [np.nan, 2.0, 4.0])
    out, tangent = jvp(lambda v: knp.sin(v) * 2.0, (x,), (np.ones(3),))
    assert np.isnan(np.asarray(out)[0]) and np.isnan(np.asarray(tangent)[0])
    np.testing.assert_allclose(np.asarray(tangent)[1:], 2 * np.cos(x[1:]))
    # Reductions mix elements: a NaN anywhere reaches everything the sum feeds.
    mixed = grad(lambda v: knp.sum(v) * knp.sum(v))(x)
    assert np.isnan(np.asarray(mixed)).all()


def test_empty_arrays_give_empty_results_of_the_right_shape() -> None:
    """Empty inputs flow through grad, jvp, vjp and vmap with empty results of the right
    shape and dtype (sum of nothing is 0, logsumexp -inf, their gradients empty)."""
    empty = np.zeros((0, 3))
    value, gradient = kenaz.value_and_grad(lambda v: knp.sum(knp.sin(v) ** 2))(empty)
    assert float(value) == 0.0
    assert gradient.shape == (0, 3) and gradient.dtype == np.float64
    out, tangent = jvp(lambda v: v @ np.ones((3, 2)), (empty,), (empty,))
    assert out.shape == tangent.shape == (0, 2)
    (cotangent,) = vjp(lambda v: knp.tanh(v), empty)[1](empty)
    assert cotangent.shape == (0, 3)
    batched = vmap(lambda v: v * 2.0)(empty)
    assert batched.shape == (0, 3)
    per_example = vmap(lambda v: knp.sum(v))(np.zeros((4, 0)))
    np.testing.assert_array_equal(np.asarray(per_example), np.zeros(4))
    # logsumexp of nothing is -inf (as in SciPy and JAX), not a "zero-size max" error
    value, gradient = kenaz.value_and_grad(lambda v: knp.logsumexp(v))(np.zeros(0))
    assert float(value) == -np.inf and gradient.shape == (0,)
    rows = knp.logsumexp(np.zeros((2, 0)), axis=1)
    np.testing.assert_array_equal(np.asarray(rows), [-np.inf, -np.inf])


def test_zero_dimensional_inputs_work_everywhere() -> None:
    """0-d arrays, NumPy scalars and Python floats are all valid scalar inputs."""
    for x in (np.array(0.5), np.float64(0.5), 0.5, knp.array(0.5)):
        assert float(grad(knp.sin)(x)) == pytest.approx(np.cos(0.5))
        out, tangent = jvp(knp.exp, (x,), (2.0,))
        assert out.shape == tangent.shape == ()
        assert float(tangent) == pytest.approx(2 * np.exp(0.5))
    scalars = vmap(lambda v: v * v)(np.arange(3.0))
    np.testing.assert_array_equal(np.asarray(scalars), [0.0, 1.0, 4.0])


def test_checkpoint_round_trip_keeps_shapes_and_dtypes(tmp_path: Path) -> None:
    """Regression: a 0-d leaf came back with shape (1,). Every leaf keeps its shape and
    dtype through save/load, with and without a template."""
    params = {
        "scalar": 1.5,
        "zero_d": np.array(2.0, dtype=np.float32),
        "w": np.arange(6.0).reshape(2, 3),
        "layers": [np.int32(3), np.zeros((0, 2)), None],
    }
    path = io.save(tmp_path / "p.npz", params)
    for loaded in (io.load(path), io.load(path, template=params)):
        assert loaded["layers"][2] is None
        assert type(loaded["scalar"]) is float and loaded["scalar"] == 1.5  # as saved (26.3)
        pairs = [(loaded["zero_d"], params["zero_d"]),
                 (loaded["w"], params["w"]), (loaded["layers"][0], np.asarray(np.int32(3))),
                 (loaded["layers"][1], params["layers"][1])]
        for got, want in pairs:
            assert got.shape == want.shape and got.dtype == want.dtype, (got, want)
            np.testing.assert_array_equal(np.asarray(got), want)
