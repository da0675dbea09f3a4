"""The closure zoo (issue 22): a tensor read by any Python route is differentiated right.

Each route builds ``fn(y)`` that reads the differentiated parameter ``k`` its own
way; each container runs ``fn`` inside a call with rules of its own; each
transformation differentiates ``loss(k)`` and is compared with finite
differences. Before closure conversion by running, every route but a plain
one-level closure gave 0 for the closed-over part inside custom_vjp, custom_jvp
and odeint (or raised), since only ``__closure__`` was read.
"""

from __future__ import annotations

import functools
import types

import numpy as np
import pytest

import kenaz
import kenaz.numpy as knp
from kenaz.scipy.integrate import odeint


def rhs(y, k):
    return y * knp.sin(k) + 0.1 * y * y * k


# -- the routes: fn(y) reading k -----------------------------------------------------------
class Model:
    def __init__(self, k):
        self.k = k

    def rhs(self, y):
        return rhs(y, self.k)


class Callable_:
    def __init__(self, k):
        self.k = k

    def __call__(self, y):
        return rhs(y, self.k)


class Holder:
    k = None


GLOBAL_K = None


def _global(k):
    global GLOBAL_K
    GLOBAL_K = k
    return lambda y: rhs(y, GLOBAL_K)


def _class_attribute(k):
    Holder.k = k
    return lambda y: rhs(y, Holder.k)


def _two_deep(k):
    def outer():
        def inner(y):
            return rhs(y, k)

        return inner

    return outer()


def _three_deep(k):
    def outer():
        def middle():
            return lambda y: rhs(y, k)

        return middle()

    return outer()


def _loop_lambdas(k):
    parts = []
    for term in (lambda y, k: y * knp.sin(k), lambda y, k: 0.1 * y * y * k):
        parts.append(lambda y, term=term: term(y, k))
    return lambda y: parts[0](y) + parts[1](y)


ROUTES = {
    "bound method": lambda k: Model(k).rhs,
    "callable object": Callable_,
    "functools.partial": lambda k: functools.partial(rhs, k=k),
    "default argument": lambda k: lambda y, k=k: rhs(y, k),
    "closure over a dict": lambda k: (lambda d: lambda y: rhs(y, d["k"]))({"k": k}),
    "closure over a list": lambda k: (lambda box: lambda y: rhs(y, box[0]))([k]),
    "closure over a tuple": lambda k: (lambda box: lambda y: rhs(y, box[0]))((k,)),
    "object attribute": lambda k: (lambda o: lambda y: rhs(y, o.k))(types.SimpleNamespace(k=k)),
    "class attribute": _class_attribute,
    "module global": _global,
    "closure two levels deep": _two_deep,
    "closure three levels deep": _three_deep,
    "lambdas made in a loop": _loop_lambdas,
}


# -- the containers: a call with rules of its own, running fn ------------------------------
def _custom_vjp(fn, y):
    wrapped = kenaz.custom_vjp(lambda y: fn(y))
    wrapped.defvjp(lambda y: (fn(y), y), lambda y, g: kenaz.vjp(fn, y)[1](g))
    return wrapped(y)


def _custom_jvp(fn, y):
    wrapped = kenaz.custom_jvp(lambda y: fn(y))
    wrapped.defjvp(lambda primals, tangents: kenaz.jvp(fn, primals, tangents))
    return wrapped(y)


def _fixed_point(fn, y):
    return kenaz.fixed_point(lambda a, x: 0.5 * knp.sin(x) + 0.1 * fn(a), y, knp.zeros_like(y))


def _odeint(fn, y):
    return odeint(lambda y, t: -0.1 * fn(y), y, knp.array([0.0, 1.0]), rtol=1e-11, atol=1e-11)[-1]


def _odeint_tfirst(fn, y):
    return odeint(
        lambda t, y: -0.1 * fn(y),
        y,
        knp.array([0.0, 1.0]),
        rtol=1e-11,
        atol=1e-11,
        tfirst=True,
    )[-1]


CONTAINERS = {
    "custom_vjp": _custom_vjp,
    "custom_jvp": _custom_jvp,
    "checkpoint": lambda fn, y: kenaz.checkpoint(lambda y: fn(y))(y),
    "jit": lambda fn, y: kenaz.jit(lambda y: fn(y))(y),
    "fixed_point": _fixed_point,
    "odeint": _odeint,
    "odeint tfirst=True": _odeint_tfirst,
}

Y0 = np.array([0.3, 0.7])
K0 = 0.8


def _loss(route, container):
    def loss(k):
        return knp.sum(container(route(k), knp.array(Y0)))

    return loss


def _eager(loss, k):
    return float(loss(knp.array(k)))


def _slope(loss, k, h=1e-5):
    return (_eager(loss, k + h) - _eager(loss, k - h)) / (2 * h)


def _curvature(loss, k, h=1e-4):
    return (_eager(loss, k + h) - 2 * _eager(loss, k) + _eager(loss, k - h)) / h**2


TRANSFORMS = {
    "grad": lambda loss: (float(kenaz.grad(loss)(K0)), _slope(loss, K0)),
    "jvp": lambda loss: (float(kenaz.jvp(loss, (K0,), (1.0,))[1]), _slope(loss, K0)),
    "linearize": lambda loss: (float(kenaz.linearize(loss, K0)[1](1.0)), _slope(loss, K0)),
    "vmap(grad)": lambda loss: (
        kenaz.vmap(kenaz.grad(loss))(knp.array([K0, 1.1])).numpy(),
        np.array([_slope(loss, K0), _slope(loss, 1.1)]),
    ),
    "grad of grad": lambda loss: (float(kenaz.grad(kenaz.grad(loss))(K0)), _curvature(loss, K0)),
    "jit(grad)": lambda loss: (float(kenaz.jit(kenaz.grad(loss))(K0)), _slope(loss, K0)),
}

def _cases():
    for container in CONTAINERS:
        for route in ROUTES:
            for transform in TRANSFORMS:
                yield pytest.param(container, route, transform)


@pytest.mark.parametrize(("container", "route", "transform"), list(_cases()))
def test_a_closed_over_tensor_is_differentiated(container, route, transform):
    loss = _loss(ROUTES[route], CONTAINERS[container])
    got, expected = TRANSFORMS[transform](loss)
    tolerance = 1e-4 if "odeint" in container or transform == "grad of grad" else 1e-6
    np.testing.assert_allclose(got, expected, rtol=tolerance, atol=tolerance)


# -- a container inside a container ------------------------------------------------------
# The inner call's discovery runs while the outer one's recomputation (or rule) puts lifted
# leaves in place of the closed-over tensors: it must see a tensor it reads as the leaf
# that replaces it on the way out, or its rule reads a constant (custom_vjp inside
# checkpoint lost k's derivative through the inner function before).
NESTABLE = ("custom_vjp", "custom_jvp", "checkpoint")


@pytest.mark.parametrize("outer", NESTABLE)
@pytest.mark.parametrize("inner", NESTABLE)
@pytest.mark.parametrize("transform", ["grad", "jvp", "grad of grad"])
def test_a_closed_over_tensor_through_nested_containers(outer, inner, transform):
    def loss(k):
        fn = functools.partial(rhs, k=k)
        y = knp.array(Y0)
        return knp.sum(CONTAINERS[outer](lambda y: CONTAINERS[inner](fn, y) * k, y))

    got, expected = TRANSFORMS[transform](loss)
    tolerance = 1e-4 if transform == "grad of grad" else 1e-6
    np.testing.assert_allclose(got, expected, rtol=tolerance, atol=tolerance)
