"""The cases of ``benchmarks/ab.py --cases transforms``: vmap of grad and Jacobians.

W4's per-example gradients (``vmap(grad(loss))`` of a tanh MLP) and W7's Jacobian
(``jacrev``, ``jacfwd``), each at the workload's full size and at its smoke size (where
the transformations' per-op Python is nearly all the time), and the fresh trace of each
under ``jit`` (what ``jit`` pays to trace them: the same handlers, on abstract values).

    git archive main src | tar -x -C /tmp/kenaz_base
    .venv/bin/python -m benchmarks.ab /tmp/kenaz_base/src src --cases transforms
    .venv/bin/python -m benchmarks.ab /tmp/kenaz_base/src src --cases transforms --instructions
    .venv/bin/python -m benchmarks.ab /tmp/kenaz_base/src src \
        --cases benchmarks.transforms_ab:smoke_cases --instructions  # minutes, not ten
"""

from __future__ import annotations


def smoke_cases() -> dict[str, object]:
    """:func:`cases` at the smoke sizes only, and the traces: quick to count."""
    return cases(("smoke",))


def cases(sizes: tuple[str, ...] = ("smoke", "full")) -> dict[str, object]:
    """W4 and W7's kenaz rows, eager at two sizes and freshly traced by ``jit``, by name."""
    import kenaz
    import kenaz.numpy as knp
    from benchmarks.workloads import w4_per_example_grads as w4
    from benchmarks.workloads import w7_jacobian as w7

    loss = lambda params, x, y: w4.example_loss(knp.sum, knp.tanh, params, x, y)  # noqa: E731
    cases: dict[str, object] = {}
    for size in sizes:
        params, x, y = w4.make_inputs(size)
        args = (tuple(knp.asarray(p) for p in params), knp.asarray(x), knp.asarray(y))
        per_example = kenaz.vmap(kenaz.grad(loss), in_axes=(None, 0, 0))
        cases[f"W4 vmap(grad) {size}"] = lambda f=per_example, a=args: f(*a)
        w7_params, point = w7.make_inputs(size)
        k_params = tuple(knp.asarray(p) for p in w7_params)
        k_point = knp.asarray(point)
        f = lambda x, p=k_params: w7.two_layers(knp.tanh, p, x)  # noqa: E731
        for name in ("jacrev", "jacfwd"):
            jacobian = getattr(kenaz, name)(f)
            cases[f"W7 {name} {size}"] = lambda j=jacobian, x=k_point: j(x)
        if size == sizes[-1]:  # a fresh trace of each, as jit's first call, at the last size
            cases["W4 jit trace"] = lambda a=args: kenaz.jit(
                kenaz.vmap(kenaz.grad(loss), in_axes=(None, 0, 0))
            ).program(*a)
            cases["W7 jit trace"] = lambda f=f, x=k_point: kenaz.jit(kenaz.jacrev(f)).program(x)
    return cases
