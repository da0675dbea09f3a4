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
from _sweep_samples import NOT_SWEPT, OVERRIDES, calls

import kenaz

PAIRS = sweep.all_pairs()


def _check_pair(pair: sweep.Pair, order: int) -> None:
    if (pair.function, pair.argument) in sweep.PIECEWISE_CONSTANT:
        return
    s, point = sweep.scalar_function(pair)
    if order == 2:
        u0 = sweep.direction(point)
        first = s

        def s(v):  # the first derivative along u0: its own derivative checks the rules' rules
            return kenaz.jvp(first, (v,), (u0,))[1]

    u = sweep.direction(point)
    try:
        expected = sweep.finite_difference(s, point, u)
        by_jvp, by_grad = sweep.derivatives(s, point, u)
    except sweep.REFUSALS as error:  # a refusal is allowed; a silent zero is not
        assert str(error), pair.id
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
        if name not in NOT_SWEPT and not sweep.pairs_of(name, f)
    ]
    stale = [name for name in OVERRIDES if not calls(name, None) and name not in NOT_SWEPT]
    assert not missing, f"functions with no swept float argument: {missing}"
    assert not stale, stale
    assert len(PAIRS) > 400


SECOND_ORDER_FAMILIES = (
    "numpy.sin", "numpy.cos", "numpy.tan", "numpy.exp", "numpy.log", "numpy.sqrt",
    "numpy.tanh", "numpy.arctan", "numpy.arcsin", "numpy.power", "numpy.divide",
    "numpy.logaddexp", "numpy.hypot", "numpy.arctan2", "numpy.expit", "numpy.erf",
    "numpy.sum", "numpy.mean", "numpy.prod", "numpy.var", "numpy.std", "numpy.max",
    "numpy.min", "numpy.logsumexp", "numpy.cumsum", "numpy.cumprod", "numpy.norm",
    "numpy.full", "numpy.clip", "numpy.where", "numpy.average", "numpy.quantile",
    "numpy.interp", "scipy.special.gammaln", "scipy.special.digamma", "scipy.special.logsumexp",
    "scipy.special.softmax", "scipy.special.log_softmax", "scipy.special.xlogy",
    "scipy.special.gammainc", "scipy.special.erfinv", "scipy.special.ndtri",
    "nn.softplus", "nn.gelu", "nn.log_softmax", "nn.softmax", "nn.layer_norm",
)  # fmt: skip


@pytest.mark.parametrize(
    "pair",
    [pytest.param(p, id=p.id) for p in PAIRS if p.function in SECOND_ORDER_FAMILIES],
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
    derivative of ``f(knp.array(that list))`` under grad and jvp, or raises."""
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
        return
    by_stack = sweep.derivatives(lambda v: s(knp.array(listed(v))), point, u)
    scale = float(np.max(np.abs(point)))
    for a, b, mode in zip(by_list, by_stack, ("jvp", "grad"), strict=True):
        assert sweep.agree(a, b, scale), f"{pair.id} {mode}: list {a} vs stacked {b}"
