"""Issue 18: every floating-point argument of every public function differentiates or refuses.

For each (function, argument) pair of ``sweep.all_pairs()`` the jvp and the
grad along a random direction equal central finite differences in float64,
or the call raises a kenaz error (never a silent zero). The second-order
sweep does the same for ``s'(v) . u`` (grad of grad) on the elementwise and
reduction families.
"""

from __future__ import annotations

import _sweep as sweep
import numpy as np
import pytest
from _sweep_samples import NOT_SWEPT, OVERRIDES, calls, numpy_utility, vec

import kenaz

PAIRS = sweep.all_pairs()


def _check_pair(pair: sweep.Pair, order: int) -> None:
    if (pair.function, pair.argument) in sweep.PIECEWISE_CONSTANT:
        return
    s, point = sweep.scalar_function(pair)
    if order == 2:
        u0 = sweep.direction(point)
        first = s

        def s(v):  # grad . u0: its jvp and grad are jvp(grad(...)) and grad(grad(...))
            import kenaz.numpy as knp

            return knp.sum(kenaz.grad(first)(v) * u0)

    u = sweep.direction(point)
    try:
        expected = sweep.finite_difference(s, point, u)
        by_jvp, by_grad = sweep.derivatives(s, point, u)
    except NotImplementedError as error:  # a refusal naming the argument; never a silent zero
        assert "with respect to" in str(error), f"{pair.id}: {error}"
        return
    scale = float(np.max(np.abs(point))) if point.size else 1.0
    assert sweep.agree(by_jvp, expected, scale), f"{pair.id}: jvp {by_jvp} vs FD {expected}"
    assert sweep.agree(by_grad, expected, scale), f"{pair.id}: grad {by_grad} vs FD {expected}"


@pytest.mark.parametrize("pair", [pytest.param(p, id=p.id) for p in PAIRS])
def test_every_float_argument_agrees_with_finite_differences(pair):
    _check_pair(pair, order=1)


def test_the_sweep_covers_every_public_function():
    """A new public function must get a sample call (or a NOT_SWEPT entry saying why)."""
    missing = [
        name
        for name, f in sweep.public_functions()
        if name not in NOT_SWEPT and numpy_utility(f) is None and not sweep.pairs_of(name, f)
    ]
    stale = [name for name in OVERRIDES if not calls(name, None) and name not in NOT_SWEPT]
    assert not missing, f"functions with no swept float argument: {missing}"
    assert not stale, stale
    swept = {(p.function, p.argument) for p in PAIRS}
    assert set(sweep.PIECEWISE_CONSTANT) <= swept, "a PIECEWISE_CONSTANT entry matches no pair"


def test_the_piecewise_constant_table_is_needed():
    """Without its entry, stop_gradient's (zero by definition) fails the sweep: the check
    can fail, and the table is what exempts it."""
    pair = next(p for p in PAIRS if p.function == "numpy.stop_gradient")
    saved = sweep.PIECEWISE_CONSTANT.pop((pair.function, pair.argument))
    try:
        with pytest.raises(AssertionError, match="vs FD"):
            _check_pair(pair, order=1)
    finally:
        sweep.PIECEWISE_CONSTANT[(pair.function, pair.argument)] = saved
    assert len(PAIRS) > 400


# The elementwise and reduction families of kenaz.numpy, and all of scipy.special and
# kenaz.nn's activations and losses: the rules whose pullbacks might treat ``ans`` or a
# parameter as a constant, which only a second derivative shows.
ELEMENTWISE = (
    "negative positive exp exp2 expm1 log log2 log10 log1p sqrt cbrt square reciprocal sin "
    "cos tan arcsin arccos arctan sinh cosh tanh arcsinh arccosh arctanh asin acos atan asinh "
    "acosh atanh deg2rad rad2deg degrees radians sinc abs absolute fabs expit erf i0 real imag "
    "conj conjugate angle add subtract multiply divide true_divide power pow float_power "
    "maximum minimum fmax fmin arctan2 atan2 hypot logaddexp logaddexp2 remainder mod fmod "
    "copysign ldexp where clip full full_like nan_to_num heaviside"
).split()
REDUCTIONS = (
    "sum mean prod var std max min amax amin average ptp median quantile percentile "
    "logsumexp nansum nanmean nanmax nanmin nanvar nanstd nanprod cumsum cumprod "
    "cumulative_sum cumulative_prod nancumsum nancumprod trace interp"
).split()
SECOND_ORDER_FAMILIES = {f"numpy.{n}" for n in ELEMENTWISE + REDUCTIONS} | {
    f"nn.{n}" for n in (
        "relu elu gelu leaky_relu log_sigmoid log_softmax sigmoid silu softmax softplus "
        "swish tanh mse mae huber binary_cross_entropy softmax_cross_entropy layer_norm"
    ).split()
}  # fmt: skip


def _second_order(pair) -> bool:
    return pair.function in SECOND_ORDER_FAMILIES or pair.function.startswith("scipy.special.")


@pytest.mark.parametrize(
    "pair",
    [pytest.param(p, id=p.id) for p in PAIRS if _second_order(p)],
)
def test_second_order_agrees_with_finite_differences(pair):
    _check_pair(pair, order=2)


def _list_pairs() -> list:
    """Pairs whose argument is a short float vector: the list-input sweep of issue 14."""
    chosen = []
    for pair in PAIRS:
        if (pair.function, pair.argument) in sweep.PIECEWISE_CONSTANT or len(pair.path) != 1:
            continue
        _, point = sweep.scalar_function(pair)
        if point.ndim == 1 and 2 <= point.size <= 6:
            chosen.append(pair)
    return chosen


@pytest.mark.parametrize("pair", [pytest.param(p, id=p.id) for p in _list_pairs()])
def test_a_list_mixing_tensors_and_numbers_differentiates_as_its_stack(pair):
    """``f([v[0], 0.47, v[2], ...])`` (a list of tracked scalars and a number) has the
    derivative of ``f(knp.array(that list))`` under grad and jvp, or raises as that does:
    a list is never refused where its stack is differentiated."""
    import kenaz.numpy as knp

    s, point = sweep.scalar_function(pair)
    number = float(point[1])

    def listed(v):
        return [number if i == 1 else v[i] for i in range(point.size)]

    u = sweep.direction(point)
    try:
        by_list = sweep.derivatives(lambda v: s(listed(v)), point, u)
    except sweep.REFUSALS as error:
        assert str(error), pair.id
        with pytest.raises(type(error)):  # the stacked list is refused alike
            sweep.derivatives(lambda v: s(knp.array(listed(v))), point, u)
        return
    by_stack = sweep.derivatives(lambda v: s(knp.array(listed(v))), point, u)
    scale = float(np.max(np.abs(point)))
    for a, b, mode in zip(by_list, by_stack, ("jvp", "grad"), strict=True):
        assert sweep.agree(a, b, scale), f"{pair.id} {mode}: list {a} vs stacked {b}"


PASS_THROUGHS = [
    name
    for name, f in sweep.public_functions()
    if numpy_utility(f) == "pass-through" and name.startswith("numpy.")
]


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")  # numpy.asmatrix, bmat
@pytest.mark.parametrize("name", PASS_THROUGHS)
def test_numpy_pass_throughs_refuse_a_tracked_argument_by_name(name):
    """NumPy utilities kenaz passes through (numpy/_utilities.py) are not differentiated:
    given a tensor grad tracks they must refuse, naming themselves, never return a constant."""
    f = sweep.function_named(name)
    short = name.rpartition(".")[2]
    try:
        f(vec)
    except Exception:  # noqa: BLE001 - no one-vector call: nothing to check here
        return
    with pytest.raises(TypeError, match=short):
        kenaz.grad(lambda v: sweep.knp.sum(sweep.knp.asarray(f(v))))(vec)
