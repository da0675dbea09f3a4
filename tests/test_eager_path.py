"""The no-handler path: the operators', ``Op.__call__``'s and indexing's shortcuts to NumPy
give what ``perform`` gives (a Tensor, NumPy's dtype and value, NumPy's scalars for 0-d
results, kenaz's errors), and a handler installed later still sees every op."""

from __future__ import annotations

import operator
from collections import Counter

import numpy as np
import pytest

import kenaz
import kenaz.numpy as knp
from kenaz import Handler, Tensor, perform
from kenaz.effects import no_handlers
from kenaz.errors import ShapeError
from kenaz.ops import elementwise

# (operator, primitive): the operators whose eager path is inlined.
OPERATORS = [
    (operator.add, elementwise.add),
    (operator.sub, elementwise.subtract),
    (operator.mul, elementwise.multiply),
    (operator.truediv, elementwise.divide),
    (operator.floordiv, elementwise.floor_divide),
    (operator.mod, elementwise.remainder),
    (operator.eq, elementwise.equal),
    (operator.ne, elementwise.not_equal),
    (operator.lt, elementwise.less),
    (operator.le, elementwise.less_equal),
    (operator.gt, elementwise.greater),
    (operator.ge, elementwise.greater_equal),
]
BITWISE = [
    (operator.and_, elementwise.bitwise_and),
    (operator.or_, elementwise.bitwise_or),
    (operator.xor, elementwise.bitwise_xor),
]

F32 = np.array([1.5, -2.0, 3.25], dtype=np.float32)
F64 = np.array([0.5, 4.0, -1.0])
I8 = np.array([3, -7, 100], dtype=np.int8)
# Operand pairs by what a shortcut must get right: NEP 50's weak Python numbers, mixed
# dtypes, 0-d values (NumPy scalars come out), broadcasting, NumPy scalars as values.
PAIRS = [
    (F64, F64[::-1].copy()),
    (F32, 2.0),
    (F32, F64),
    (I8, 3),
    (I8, 2.5),
    (np.array(2.0), np.array(3.0)),
    (np.array(2.0, dtype=np.float32), 1.5),
    (F64.reshape(3, 1), F64),
    (np.float64(1.5), F64),
    (F64, np.float32(2.0)),
]
# Python numbers on the left: the reflected operators (`2.0 * x` is `x.__rmul__(2.0)`).
# (An ndarray on the left goes through `Tensor.__array_ufunc__`, not these.)
REFLECTED = [(2.0, F32), (3, I8), (2.5, I8), (1.5, np.array(2.0)), (-4, F64)]


def _via_perform(op, args):
    """The reference: the op performed through ``perform``'s general eager path."""
    with no_handlers():
        return perform(op, *args)


def _same(result, reference):
    assert type(result) is Tensor
    assert type(result._value) is type(reference._value)  # ndarray, or a NumPy scalar
    assert result.dtype == reference.dtype
    np.testing.assert_array_equal(result.numpy(), reference.numpy())


@pytest.mark.parametrize("operation, op", OPERATORS, ids=lambda v: getattr(v, "__name__", ""))
@pytest.mark.parametrize("pair", range(len(PAIRS)))
def test_operators_give_what_perform_gives(operation, op, pair):
    left, right = PAIRS[pair]
    with np.errstate(all="ignore"):
        for x, y in ((Tensor(left), Tensor(right)), (Tensor(left), right)):
            _same(operation(x, y), _via_perform(op, (x, y)))
        if pair < len(REFLECTED):
            number, array = REFLECTED[pair]
            _same(operation(number, Tensor(array)), _via_perform(op, (number, Tensor(array))))


@pytest.mark.parametrize("operation, op", BITWISE, ids=lambda v: getattr(v, "__name__", ""))
def test_bitwise_operators_give_what_perform_gives(operation, op):
    flags, ints = np.array([True, False, True]), np.array([6, 3, 12])
    for x, y in ((Tensor(flags), Tensor(flags[::-1].copy())), (Tensor(ints), 5), (9, Tensor(ints))):
        _same(operation(x, y), _via_perform(op, (x, y)))
    with pytest.raises(TypeError):  # NumPy's refusal, as through perform
        operation(Tensor(F64), Tensor(F64))


def test_matmul_gives_what_numpy_gives_and_kenaz_errors():
    m = np.arange(6.0).reshape(2, 3)
    for x, y in ((m, m.T), (m, F64), (F64, m.T), (F64, F64), (m.astype(np.float32), m.T)):
        result = Tensor(x) @ Tensor(y)
        expected = x @ y
        assert type(result) is Tensor and result.dtype == expected.dtype
        assert type(result._value) is type(expected)
        np.testing.assert_array_equal(result.numpy(), expected)
    with pytest.raises(ValueError, match="kenaz.matmul: shapes"):
        Tensor(m) @ Tensor(m)
    with pytest.raises(ValueError, match="kenaz.matmul: operands must be at least 1-d"):
        Tensor(np.array(2.0)) @ Tensor(F64)


def test_broadcast_errors_name_the_op_and_shapes():
    with pytest.raises(ShapeError, match=r"kenaz.add: operands of shapes \(3,\) and \(2,\)"):
        Tensor(F64) + Tensor(np.ones(2))
    with pytest.raises(ShapeError, match=r"kenaz.mul: operands of shapes \(2,\) and \(3,\)"):
        Tensor(np.ones(2)) * F64


class CountOps(Handler):
    def __init__(self):
        self.counts = Counter()

    def handle(self, op, args, params):
        self.counts[op.name] += 1
        return perform(op, *args, **params)


def test_a_handler_installed_later_sees_every_op():
    x, y, m = knp.asarray(F64), knp.asarray(F64[::-1].copy()), knp.ones((3, 3))
    for _ in range(2):  # the eager path first, then with the handler
        x + y, 2.0 * x, x < y, x @ m, x[1], x[0:2], knp.sin(x)
    counter = CountOps()
    with counter:
        x + y, 2.0 * x, x < y, x @ m, x[1], x[0:2], knp.sin(x)
    assert counter.counts["add"] == 1 and counter.counts["mul"] == 1
    assert counter.counts["lt"] == 1 and counter.counts["matmul"] == 1
    assert counter.counts["sin"] == 1 and sum(counter.counts.values()) == 7


def test_the_shortcuts_differentiate_under_grad():
    def f(x):
        return knp.sum(knp.sin(x) * x + 1.0 - x / 2.0) + (x @ x) + x[1] * 3.0

    x = np.array([0.3, -1.2, 2.0])
    expected = np.cos(x) * x + np.sin(x) - 0.5 + 2 * x + np.array([0.0, 3.0, 0.0])
    np.testing.assert_allclose(kenaz.grad(f)(x).numpy(), expected)


def test_a_subclass_and_an_escaped_batched_view_take_the_general_path():
    class Mine(Tensor):
        __slots__ = ()

    mine = Mine(F64)
    assert type(mine + 1.0) is Tensor and type(1.0 + mine) is Tensor
    escaped = []
    kenaz.vmap(lambda row: escaped.append(row) or row)(np.ones((2, 3)))
    for use in (lambda v: v + 1.0, lambda v: 1.0 + v, lambda v: v @ v, lambda v: knp.sin(v)):
        with pytest.raises(Exception, match="vmap"):
            use(escaped[0])


@pytest.mark.parametrize("operation, op", OPERATORS, ids=lambda v: getattr(v, "__name__", ""))
def test_operators_on_numpy_scalar_values_give_what_perform_gives(operation, op):
    total = knp.sum(Tensor(F32))  # an op on 0-d values holds a NumPy scalar
    assert type(total._value) is np.float32
    with np.errstate(all="ignore"):
        for x, y in ((total, 2.0), (total, Tensor(F64)), (total, total), (total, np.float64(3))):
            _same(operation(x, y), _via_perform(op, (x, y)))
        for number in (2.0, 3, 1j):
            if (
                operation
                in (
                    operator.lt,
                    operator.le,
                    operator.gt,
                    operator.ge,
                    operator.floordiv,
                    operator.mod,
                )
                and number == 1j
            ):
                continue  # NumPy refuses to order complex numbers
            _same(operation(number, total), _via_perform(op, (number, total)))


# Indices by the path `x[index]` takes: basic ones (ints, slices, None, ..., tuples of them)
# the shortcut, the others (NumPy integers, bools, lists, arrays, Tensors) the general one.
INDICES = [
    3, -1, slice(2, 10), slice(None, None, -2), None, Ellipsis, (1, slice(None)),
    (Ellipsis, None), (), np.int64(2), [0, 2], np.array([True, False, True, True]),
    (slice(None), np.array([1, 0])),
]  # fmt: skip


@pytest.mark.parametrize("index", INDICES, ids=repr)
def test_indexing_gives_what_getitem_gives(index):
    from kenaz.ops.indexing import getitem

    value = np.arange(16.0).reshape(4, 4)
    x = Tensor(value)
    reference = getitem(x, index)  # the function, with its own tests of x
    _same(x[index], reference)
    _same(x[Tensor(np.array([2, 0]))], getitem(x, Tensor(np.array([2, 0]))))
    _same(Tensor(np.float64(2.0))[()], getitem(Tensor(np.float64(2.0)), ()))


def test_basic_indexing_is_a_view_and_errors_stay_numpy_s():
    value = np.arange(16.0)
    x = Tensor(value)
    window = x[2:10]
    assert np.shares_memory(window.numpy(), value)  # a view, as NumPy's x[2:10]
    window[0] = -1.0  # and writing into it writes into x, as in NumPy
    assert value[2] == -1.0 and x.numpy()[2] == -1.0
    assert type(x[3]._value) is np.float64  # a 0-d Tensor holding NumPy's scalar
    with pytest.raises(IndexError, match="out of bounds"):
        x[16]
    with pytest.raises(TypeError, match="bool is not a valid index"):
        x[True]
    escaped = []
    kenaz.vmap(lambda row: escaped.append(row) or row)(np.ones((2, 3)))
    with pytest.raises(Exception, match="vmap"):
        escaped[0][1]
