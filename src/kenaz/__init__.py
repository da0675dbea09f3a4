"""kenaz: automatic differentiation for Python and NumPy, built on effect handlers.

Every tensor operation performs an effect; ``grad``, ``jvp``, ``vjp``,
``debug`` and the other transformations are handlers that intercept those
effects, and they compose in any order.

>>> import kenaz
>>> import kenaz.numpy as knp
>>> kenaz.grad(lambda x: knp.sum(knp.sin(x) ** 2))(knp.zeros(2))
Tensor([0., 0.])
"""

# In the order of the layers (docs/architecture.md): Tensor, the effects, then the
# primitives and the NumPy namespace, whose import binds Tensor's operators to them.
from .tensor import Tensor  # noqa: I001
from .effects import Handler, Op, each_argument, handler, identity, perform, perform_args
from . import numpy
from .ops.elementwise import stop_gradient
from .reverse import grad, value_and_grad, vjp
from .forward import jvp, linearize
from .debugging import debug
from .custom_jvp_rule import custom_jvp
from .custom_vjp_rule import custom_vjp
from .rematerialize import checkpoint
from .root import custom_root, fixed_point
from .no_grad_handler import no_grad
from .graphing import graph
from .vectorize import vmap
from .jacobians import hessian, hvp, jacfwd, jacrev
from .checks import float0
from .compiler.program import Program, make_program
from .compiler.api import jit
from . import backend, errors, tree
from .backend import default_backend, materialize

__version__ = "0.1.0"

# Heavier layers load on first use: `kenaz.nn`, `kenaz.optim`, ...
_SUBMODULES_ON_DEMAND = ("nn", "optim", "data", "train", "io", "scipy", "testing")


def __getattr__(name: str):
    if name in _SUBMODULES_ON_DEMAND:
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'kenaz' has no attribute {name!r}")


__all__ = [
    "Tensor",
    "Op",
    "Handler",
    "perform",
    "perform_args",
    "identity",
    "handler",
    "each_argument",
    "grad",
    "value_and_grad",
    "vjp",
    "float0",
    "jvp",
    "linearize",
    "stop_gradient",
    "debug",
    "custom_jvp",
    "custom_vjp",
    "checkpoint",
    "custom_root",
    "fixed_point",
    "no_grad",
    "graph",
    "vmap",
    "jacfwd",
    "jacrev",
    "hessian",
    "hvp",
    "jit",
    "make_program",
    "Program",
    "numpy",
    "tree",
    "errors",
    "backend",
    "default_backend",
    "materialize",
]

