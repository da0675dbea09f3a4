"""The cases of ``benchmarks/ab.py --cases decompositions``: kenaz's decompositions on NumPy.

What routing the decompositions through the array namespace costs on NumPy's path (one
type-identity test per implementation, constants of the rules made on their tensors'
backend): eager calls and gradients on small matrices (3 x 3, where kenaz's overhead
dominates) and on 64 x 64 ones, timed by ``benchmarks/ab.py`` on two source trees.

    git archive main src | tar -x -C /tmp/kenaz_base
    .venv/bin/python -m benchmarks.ab /tmp/kenaz_base/src src --cases decompositions
"""

from __future__ import annotations


def cases() -> dict[str, object]:
    """Eager calls and gradients of the decompositions, by name."""
    import numpy as np

    import kenaz
    import kenaz.numpy as knp

    la = knp.linalg
    rng = np.random.default_rng(0)
    cases = {}
    for n in (3, 64):
        a = rng.normal(size=(n, n))
        spd = a @ a.T + n * np.eye(n)
        b = rng.normal(size=(n, 2))
        t_spd, t_a, t_b = knp.array(spd), knp.array(a), knp.array(b)
        cases[f"cholesky {n}"] = lambda t=t_spd: la.cholesky(t)
        cases[f"eigh {n}"] = lambda t=t_spd: la.eigh(t)
        cases[f"svd {n}"] = lambda a=t_a: la.svd(a, full_matrices=False)
        cases[f"solve {n}"] = lambda a=t_spd, b=t_b: la.solve(a, b)
        cases[f"grad slogdet(cholesky) {n}"] = lambda s=spd: kenaz.grad(
            lambda s: knp.sum(knp.log(knp.diagonal(la.cholesky(s))))
        )(s)
        cases[f"grad eigh {n}"] = lambda s=spd: kenaz.grad(
            lambda s: knp.sum(la.eigh(s)[1] ** 2 * la.eigh(s)[0])
        )(s)
        cases[f"grad svd {n}"] = lambda a=a: kenaz.grad(
            lambda a: knp.sum(la.svd(a, full_matrices=False)[0] ** 2)
        )(a)
        cases[f"grad pinv {n}"] = lambda a=a: kenaz.grad(lambda a: knp.sum(la.pinv(a)))(a)
    return cases
