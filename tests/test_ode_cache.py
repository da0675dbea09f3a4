"""odeint keeps a traced right-hand side between solves (kenaz.scipy.integrate._cache) only
while the Python state it reads is unchanged: a changed closure, global, attribute or module
attribute is traced again, a random draw is never frozen, tracked tensors are never baked."""

from __future__ import annotations

import types

import numpy as np
import pytest

import kenaz
import kenaz.numpy as knp
from kenaz.compiler import program as program_module
from kenaz.scipy.integrate import odeint, solve_ivp

y0 = np.array([1.0, 0.5])
times = np.array([0.0, 0.5, 1.0])
SCALE = 0.5
settings = types.ModuleType("settings")  # a user's module, read as settings.rate
settings.rate = 0.5
HOLDER = types.SimpleNamespace(rate=0.5)


def decay(y, t, rate):
    return -rate * SCALE * y


def test_a_solve_like_an_earlier_one_is_not_traced_again(monkeypatch):
    traced = []
    trace = program_module.trace

    def counted(fn, *args, **kwargs):
        traced.append(getattr(fn, "__name__", ""))
        return trace(fn, *args, **kwargs)

    monkeypatch.setattr(program_module, "trace", counted)

    def rhs(y, t, rate):
        return -rate * y

    for _ in range(4):
        out = odeint(rhs, y0, times, (0.5,))
    assert len(traced) == 2  # the first solve, and the second that checks the first
    for _ in range(4):
        solved = solve_ivp(lambda t, y: rhs(y, t, 0.5), (0.0, 1.0), y0, t_eval=[1.0], rtol=1e-8)
        assert solved.nfev > 0 and solved.status == 0
    assert len(traced) == 4
    np.testing.assert_allclose(out.numpy()[-1], y0 * np.exp(-0.5), rtol=1e-6)


def final(func, *args):
    return float(odeint(func, y0, times, args, rtol=1e-10, atol=1e-10)[-1, 0])


def test_a_changed_global_module_attribute_or_object_attribute_is_read_again():
    global SCALE
    for value in (0.5, 1.5, 2.0):
        SCALE = value
        assert final(decay, 1.0) == pytest.approx(np.exp(-value), rel=1e-7)
    SCALE = 0.5

    def from_module(y, t):
        return -settings.rate * y

    class Decay:
        def __init__(self):
            self.rate = 0.5

        def __call__(self, y, t):
            return -self.rate * y

    class Config:
        rate = 0.5

    def from_class(y, t):
        return -Config.rate * y

    callable_object = Decay()
    for value in (0.5, 1.5, 2.0):
        settings.rate = callable_object.rate = Config.rate = value
        assert final(from_module) == pytest.approx(np.exp(-value), rel=1e-7)
        assert final(callable_object) == pytest.approx(np.exp(-value), rel=1e-7)
        assert final(from_class) == pytest.approx(np.exp(-value), rel=1e-7)


def test_a_random_draw_is_not_frozen():
    rng = np.random.default_rng(0)

    def noisy(y, t):
        return -rng.uniform(1.0, 2.0) * y

    values = {final(noisy) for _ in range(4)}
    assert len(values) == 4  # each solve draws once, while tracing, as without a cache


def test_a_closed_over_tracked_tensor_is_a_parameter_at_every_solve():
    def at_end(rate):
        return odeint(lambda y, t: -rate * y, y0, times, rtol=1e-10, atol=1e-10)[-1, 0]

    for rate in (0.5, 1.0, 1.5):
        grad = float(kenaz.grad(at_end)(rate))
        assert grad == pytest.approx(-np.exp(-rate), rel=1e-6)
    inner = [float(kenaz.grad(lambda r: at_end(r) * knp.ones(()))(r)) for r in (0.5, 1.0)]
    assert inner[0] != inner[1]


def test_changes_are_seen_by_the_key_not_only_by_the_second_trace():
    from kenaz.scipy.integrate import _cache

    class Config:
        rate = 0.5

    def from_class(y, t):
        return -Config.rate * y + SCALE

    def from_object(y, t, holder=HOLDER):
        return -holder.rate * y

    for func in (from_class, from_object, decay):
        first = _cache.snapshot(func, [])
        assert first is not None and first == _cache.snapshot(func, [])
    before = [_cache.snapshot(f, []) for f in (from_class, from_object)]
    Config.rate = 1.0
    from_object.__defaults__[0].rate = 1.0
    after = [_cache.snapshot(f, []) for f in (from_class, from_object)]
    assert before[0] != after[0] and before[1] != after[1]


_OTHER_MODULE = """
import kenaz.numpy as knp
from {package} import rates

CONSTANT = 0.5


def helper(y):
    return -CONSTANT * y


def through_package(y):
    return -rates.RATE * y


def by_computed_name(y, name="CONSTANT"):
    return -globals()[name] * y
"""


@pytest.fixture
def other_module(tmp_path, monkeypatch):
    """A real module of the user's, ``other``, importing a submodule ``{package}.rates``."""
    import importlib
    import sys

    package = f"odecache_{tmp_path.name.replace('-', '_')}"
    (tmp_path / package).mkdir()
    (tmp_path / package / "__init__.py").write_text("")
    (tmp_path / package / "rates.py").write_text("RATE = 0.5\n")
    (tmp_path / f"{package}_other.py").write_text(_OTHER_MODULE.format(package=package))
    monkeypatch.syspath_prepend(str(tmp_path))
    other = importlib.import_module(f"{package}_other")
    yield other, importlib.import_module(package)
    for name in [n for n in sys.modules if n.startswith(package)]:
        del sys.modules[name]


def test_a_global_read_through_another_module_is_read_again(other_module):
    other, package = other_module
    from_constant = lambda y, t: -other.CONSTANT * y  # noqa: E731
    from_helper = lambda y, t: other.helper(y)  # noqa: E731
    from_submodule = lambda y, t: -package.rates.RATE * y  # noqa: E731
    via_package = lambda y, t: other.through_package(y)  # noqa: E731
    computed = lambda y, t: other.by_computed_name(y)  # noqa: E731
    for value in (0.5, 1.5, 2.0):
        other.CONSTANT = package.rates.RATE = value
        for func in (from_constant, from_helper, from_submodule, via_package, computed):
            for _ in range(3):  # the first solve, the check, and one from the cache
                assert final(func) == pytest.approx(np.exp(-value), rel=1e-7)


def test_a_read_by_a_computed_name_is_never_cached(other_module):
    from kenaz.scipy.integrate import _cache

    other, _ = other_module
    assert _cache.snapshot(lambda y, t: other.helper(y), []) is not None
    assert _cache.snapshot(lambda y, t: other.by_computed_name(y), []) is None
    assert _cache.snapshot(lambda y, t: getattr(other, "CONSTANT") * y, []) is None  # noqa: B009
