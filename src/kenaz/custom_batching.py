"""``vmap`` of a custom call: a custom call of the batched functions.

As in JAX, batching a function with a custom rule gives a function with a
custom rule: ``vmap`` of ``f`` with rule ``r`` performs, one level out, a
custom call of ``vmap(f)`` with rule ``vmap(r)``. Transformations outside the
``vmap`` therefore still use the user's rule, batched.

Outputs of the batched function have their batch axis first (an unbatched
output is broadcast, which NumPy does without copying). Residuals of a
``custom_vjp`` keep whatever batch axis they have (or none), so a residual
that does not depend on the batch is not repeated.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from . import tree
from .checkpoint import Checkpointed
from .custom import CallInfo, CustomCall, custom_jvp, custom_vjp, dispatch, register_rule
from .custom_rules import cotangent_leaves, tangent_leaves
from .effects import handler
from .ops import reduction
from .ops import shape as shape_ops
from .ops.elementwise import alias
from .tensor import Tensor
from .vectorize import BatchedTensor, BatchHandler

__all__: list[str] = []


def vmap_flat(
    fn: Callable[..., Sequence[Any]], values: Sequence[Any], axes: Sequence[int | None], size: int
) -> list[tuple[Any, int | None]]:
    """Run ``fn`` on per-example views of ``values``; each output's batch and batch axis.

    Like ``vmap`` with the output axes left where the ops put them (``None``
    for an output that does not depend on the batch).
    """
    level = BatchHandler(size)
    views = [v if a is None else level.view(alias(v), a) for v, a in zip(values, axes)]
    try:
        with handler(level):
            outs = fn(*views)
        return [
            (o._batched, o._batch_axis)
            if type(o) is BatchedTensor and o._level is level
            else (o, None)
            for o in outs
        ]
    finally:
        level.alive = False


def _batch_first(value: Any, axis: int | None, size: int) -> Tensor:
    """``value`` with its batch axis at 0 (broadcast when it has none)."""
    value = value if isinstance(value, Tensor) else Tensor(value)
    if axis is None:
        expanded = shape_ops.expand_dims(value, 0)
        return shape_ops.broadcast_to(expanded, (size,) + value.shape)
    return shape_ops.moveaxis(value, axis, 0) if axis != 0 else value


def _example_meta(value: Any, axis: int | None) -> tuple:
    value = value if isinstance(value, Tensor) else Tensor(value)
    shape = value.shape if axis is None else value.shape[:axis] + value.shape[axis + 1 :]
    return shape, value.dtype


def _to_input_layout(ct: Any, ct_axis: int | None, value: Any, axis: int | None) -> Tensor:
    """A batched cotangent laid out like the batched input it belongs to."""
    if axis is None:  # a shared input: its cotangent sums over the batch
        return ct if ct_axis is None else reduction.sum(ct, axis=ct_axis)
    if ct_axis is None:
        shape = value.shape
        return shape_ops.broadcast_to(shape_ops.expand_dims(ct, axis), shape)
    return shape_ops.moveaxis(ct, ct_axis, axis) if ct_axis != axis else ct


class _Batched:
    """The batched versions of one custom call's functions, over flat leaves."""

    def __init__(self, call: CallInfo, values: list, axes: list, size: int) -> None:
        self.call, self.values, self.axes, self.size = call, values, axes, size
        self.name = f"vmap({call.function.__name__})"
        self.residual_layout: Any = None  # set by fwd: where the residuals' batch axes are

    def fun(self, *values: Any) -> tuple[Tensor, ...]:
        outs = vmap_flat(lambda *ls: self.call.run_primal(ls), values, self.axes, self.size)
        return tuple(_batch_first(o, a, self.size) for o, a in outs)

    # custom_jvp
    def jvp_rule(self, primals: tuple, tangents: tuple) -> tuple:
        call, n = self.call, len(primals)
        function = call.function
        metas: list = []

        def rule(*leaves: Any) -> list:
            out, t_out = function.jvp_rule(
                *call.nondiff_values(), call.diff_args(leaves[:n]), call.diff_args(leaves[n:])
            )
            outs = call.outputs(out, "the jvp rule")
            metas[:] = [(o.shape, o.dtype) for o in outs]
            return [*outs, *tangent_leaves(t_out, call, metas, "the jvp rule")]

        results = vmap_flat(rule, [*primals, *tangents], [*self.axes, *self.axes], self.size)
        results = [_batch_first(o, a, self.size) for o, a in results]
        half = len(results) // 2
        return tuple(results[:half]), tuple(results[half:])

    # custom_vjp
    def fwd(self, *values: Any) -> tuple:
        call, function = self.call, self.call.function
        layout: dict[str, Any] = {}

        def forward(*leaves: Any) -> list:
            out, residuals = function.fwd(*call.arguments(leaves))
            outs = call.outputs(out, "the fwd rule")
            res_leaves, res_tree = tree.flatten(residuals)
            is_tensor = [isinstance(r, Tensor) for r in res_leaves]
            layout.update(
                count=len(outs),
                tree=res_tree,
                is_tensor=is_tensor,
                static=[None if t else r for r, t in zip(res_leaves, is_tensor)],
            )
            return [*outs, *(r for r, t in zip(res_leaves, is_tensor) if t)]

        results = vmap_flat(forward, values, self.axes, self.size)
        count = layout["count"]
        outs = tuple(_batch_first(o, a, self.size) for o, a in results[:count])
        residual_values = [r for r, _ in results[count:]]
        layout["axes"] = [a for _, a in results[count:]]
        self.residual_layout = layout
        return outs, residual_values

    def bwd(self, residual_values: list, cotangents: tuple) -> tuple:
        call, function, layout = self.call, self.call.function, self.residual_layout
        n_res = len(residual_values)
        metas = [_example_meta(v, a) for v, a in zip(self.values, self.axes)]
        name = f"the bwd rule of {function.__name__!r}"

        def backward(*leaves: Any) -> list:
            tensors = iter(leaves[:n_res])
            res_leaves = [
                next(tensors) if t else s for t, s in zip(layout["is_tensor"], layout["static"])
            ]
            residuals = tree.unflatten(layout["tree"], res_leaves)
            g = tree.unflatten(call.out_tree, list(leaves[n_res:]))
            cts = function.bwd(*call.nondiff_values(), residuals, g)
            return cotangent_leaves(cts, call, metas, name)

        g_axes = [0] * len(cotangents)
        results = vmap_flat(
            backward, [*residual_values, *cotangents], [*layout["axes"], *g_axes], self.size
        )
        return tuple(
            _to_input_layout(ct, ct_axis, value, axis)
            for (ct, ct_axis), value, axis in zip(results, self.values, self.axes)
        )


def _batch_rule(level: BatchHandler, op: CustomCall, leaves: list, call: CallInfo) -> list:
    values, axes = [], []
    for x in leaves:
        if type(x) is BatchedTensor and x._level is level:
            values.append(x._batched)
            axes.append(x._batch_axis)
        else:
            values.append(x)
            axes.append(None)
    if all(a is None for a in axes):
        return dispatch(op, leaves, call)
    batched = _Batched(call, values, axes, level.axis_size)
    if op.kind == "custom_jvp":
        function: Any = custom_jvp(batched.fun)
        function.defjvp(batched.jvp_rule)
    elif op.kind == "custom_vjp":
        function = custom_vjp(batched.fun)
        function.defvjp(batched.fwd, batched.bwd)
    else:
        function = Checkpointed(batched.fun)
    function.__name__ = batched.name
    function.op.name = f"{op.kind}[{batched.name}]"
    outs = function(*values)
    return [level.view(o, 0) for o in outs]


for _kind in ("custom_jvp", "custom_vjp", "checkpoint"):
    register_rule(BatchHandler, _kind)(_batch_rule)
