"""What the transformations cost on their way in and out: cases for ``benchmarks.ab``.

Each transformation applied to a one-op function of a 4-element vector (so that
its entry and exit, not the op, are most of the call), and the eager runs and
the traces (``kenaz.compiler.program.trace``) of the ``kenaz (jit)`` functions of
W3, W4, W5 and W7 at their smoke sizes: what ``benchmarks.jit_first_calls``
reports per op as ``eager`` and ``trace``. Compare two trees by instructions::

    PYTHONPATH=. python -m benchmarks.ab /tmp/kenaz_base/src src \\
        --cases benchmarks.entry_costs:cases --instructions
"""

from __future__ import annotations

from collections.abc import Callable


def cases() -> dict[str, Callable[[], object]]:
    """``{name: call}``: the transformations of a one-op function, then W3-W7's runs."""
    import numpy as np

    import kenaz
    import kenaz.numpy as knp
    from kenaz.compiler.program import trace

    from .jit_first_calls import kenaz_function

    x = knp.asarray(np.linspace(0.1, 0.4, 4))
    xs = knp.asarray(np.ones((3, 4)))
    one_op = lambda x: x * 2.0  # noqa: E731
    scalar = lambda x: knp.sum(x)  # noqa: E731
    found: dict[str, Callable[[], object]] = {
        "vjp": lambda: kenaz.vjp(one_op, x),
        "vjp + pullback": lambda: kenaz.vjp(one_op, x)[1](x),
        "grad": (lambda g: lambda: g(x))(kenaz.grad(scalar)),
        "jvp": lambda: kenaz.jvp(one_op, (x,), (x,)),
        "linearize + f_jvp": lambda: kenaz.linearize(one_op, x)[1](x),
        "vmap": (lambda v: lambda: v(xs))(kenaz.vmap(one_op)),
        "jacrev": (lambda j: lambda: j(x))(kenaz.jacrev(one_op)),
        "jacfwd": (lambda j: lambda: j(x))(kenaz.jacfwd(one_op)),
        "hessian": (lambda h: lambda: h(x))(kenaz.hessian(scalar)),
        "hvp": lambda: kenaz.hvp(scalar, (x,), (x,)),
    }
    for name in ("W3", "W4", "W5", "W7"):
        make, args = kenaz_function(name, "smoke")
        function = make().fun
        found[f"{name} eager"] = (lambda f, a: lambda: f(*a))(function, args)
        found[f"{name} trace"] = (lambda f, a: lambda: trace(f, a, {}))(function, args)
    return found
