"""kenaz.make_program: the flat, typed, readable program of one run of a function."""

from __future__ import annotations

import numpy as np
import pytest

import kenaz
import kenaz.numpy as knp
from kenaz.compiler.codegen import generate_source
from kenaz.compiler.interpreter import interpret
from kenaz.compiler.passes import common_subexpressions, dead_code, optimize
from kenaz.compiler.program import Const, Equation, Program, Var, replay
from kenaz.compiler.staged import split_program


def loss(w, x):
    return knp.sum(knp.tanh(x @ w) ** 2)


W = knp.array([[0.1, -0.2], [0.3, 0.4], [0.5, -0.6]])
X = knp.array([[1.0, 2.0, 3.0]])


def test_a_program_is_a_flat_typed_list_of_equations() -> None:
    program = kenaz.make_program(loss)(W, X)
    assert isinstance(program, Program)
    assert [v.type_name for v in program.inputs] == ["float64[3,2]", "float64[1,3]"]
    names = [eq.op.name for eq in program.equations]
    assert names == ["matmul", "tanh", "square", "sum"]
    for eq in program.equations:
        for v in eq.outputs:
            assert isinstance(v, Var) and isinstance(v.shape, tuple)
    assert program.outputs[0].type_name == "float64[]"


def test_str_is_one_equation_per_line() -> None:
    text = str(kenaz.make_program(loss)(W, X))
    lines = text.splitlines()
    assert lines[0] == "program loss(v0:float64[3,2], v1:float64[1,3]) {"
    assert lines[1] == "  v2:float64[1,2] = matmul(v1, v0)"
    assert lines[2] == "  v3:float64[1,2] = tanh(v2)"
    assert lines[-2] == "  return (v5)"
    assert lines[-1] == "}"


def test_the_program_of_grad_holds_forward_and_backward() -> None:
    program = kenaz.make_program(kenaz.grad(loss))(W, X)
    names = [eq.op.name for eq in program.equations]
    assert "tanh" in names  # forward
    assert "dtanh" in names or names.count("mul") >= 1  # backward of tanh
    assert names.count("matmul") >= 2  # forward and the cotangent of w
    (out,) = program.outputs
    assert out.shape == (3, 2)
    # replaying it gives the gradient
    (value,) = replay(program, [W, X])
    np.testing.assert_allclose(value.numpy(), kenaz.grad(loss)(W, X).numpy())


def test_transformations_inside_are_traced_through() -> None:
    program = kenaz.make_program(kenaz.vmap(kenaz.grad(lambda x: knp.sum(knp.sin(x) ** 3))))(
        knp.ones((4, 3))
    )
    assert all(v.shape[0] == 4 for eq in program.equations for v in eq.outputs if v.shape)
    program = kenaz.make_program(kenaz.hessian(lambda x: knp.sum(knp.exp(x))))(knp.ones(2))
    assert program.outputs[0].shape == (2, 2)


def test_pytree_inputs_and_outputs_and_static_arguments() -> None:
    def f(params, x, n):
        return {"out": params["w"] * x**n, "n": n}

    program = kenaz.make_program(f, static_argnums=2)({"w": knp.ones(2)}, 3.0, 2)
    assert len(program.inputs) == 2
    assert program.inputs[1].weak is float  # a Python number keeps its weak type
    assert 2 in program.outputs  # the static output, kept as it is


def test_constants_are_folded_while_tracing() -> None:
    table = np.arange(3.0)
    program = kenaz.make_program(lambda x: x * knp.exp(knp.asarray(table) * 2.0))(knp.ones(3))
    assert [eq.op.name for eq in program.equations] == ["mul"]
    const = program.equations[0].inputs[1]
    assert isinstance(const, Const)
    np.testing.assert_allclose(const.value, np.exp(table * 2.0))


def test_calls_are_one_equation_with_a_body() -> None:
    @kenaz.custom_vjp
    def clip_gradient(x):
        return x

    clip_gradient.defvjp(lambda x: (x, None), lambda _, g: (knp.clip(g, -1.0, 1.0),))
    program = kenaz.make_program(lambda x: knp.sum(clip_gradient(x * 3.0)))(knp.ones(2))
    call = next(eq for eq in program.equations if eq.body is not None)
    assert call.op.name == "custom_vjp[clip_gradient]"
    assert "custom_vjp[clip_gradient](v1) {" in str(program)
    inner = kenaz.jit(lambda x: x * 2.0)
    program = kenaz.make_program(lambda x: inner(x) + 1.0)(knp.ones(2))
    assert program.equations[0].op.name == "jit[<lambda>]"
    # The trace notes that it recorded calls, so that optimize inlines their bodies (and need
    # not look for one in a program without).
    assert program.calls is True
    assert [eq.op.name for eq in optimize(program).equations] == ["mul", "add"]
    assert kenaz.make_program(lambda x: x * 2.0)(knp.ones(2)).calls is False


def test_graph_draws_the_program() -> None:
    drawing = kenaz.make_program(loss)(W, X).graph()
    dot = drawing.to_dot()
    assert "tanh" in dot and "matmul" in dot
    assert [n.label for n in drawing.ops()] == ["matmul", "tanh", "square", "sum"]


def test_dead_code_and_common_subexpressions() -> None:
    def f(x):
        unused = knp.exp(x)  # noqa: F841 - dead
        return knp.sin(x) + knp.sin(x)

    program = kenaz.make_program(f)(knp.ones(3))
    assert [eq.op.name for eq in program.equations] == ["exp", "sin", "sin", "add"]
    optimized = optimize(program)
    assert [eq.op.name for eq in optimized.equations] == ["sin", "add"]
    add = optimized.equations[-1]
    assert add.inputs[0] is add.inputs[1]
    substitutions: dict = {}
    assert len(common_subexpressions(program.equations, substitutions)) == 3
    assert len(dead_code(program.equations, program.outputs)) == 3


def _reference_common_subexpressions(equations: list, substitutions: dict) -> list:
    """Common subexpressions the plain way: every equation keyed in full at once (op, sorted
    parameters, operands substituted: a variable by id, a number by type and value, another
    constant by identity); identity ops forwarded; unhashable parameters never merged."""
    from kenaz.compiler.passes import IDENTITY_OPS

    def atom(a):
        a = substitutions.get(a.id, a) if type(a) is Var else a
        return a

    def key_of(a):
        if type(a) is Var:
            return ("v", a.id)
        kind = type(a.value)
        numbers = (int, float, bool, complex, str)
        return ("c", kind, a.value) if kind in numbers else ("o", id(a.value))

    seen: dict = {}
    kept = []
    for eq in equations:
        inputs = [atom(a) for a in eq.inputs]
        if eq.op in IDENTITY_OPS and not eq.params and len(inputs) == 1:
            substitutions[eq.outputs[0].id] = inputs[0]
            continue
        try:
            key = (eq.op, tuple(sorted(eq.params.items())), *map(key_of, inputs))
            hash(key)
        except TypeError:
            kept.append((eq.op, inputs, eq.params, eq.outputs))
            continue
        if key in seen:
            for mine, theirs in zip(eq.outputs, seen[key].outputs, strict=True):
                substitutions[mine.id] = theirs
        else:
            seen[key] = eq
            kept.append((eq.op, inputs, eq.params, eq.outputs))
    return kept


@pytest.mark.parametrize("seed", range(4))
def test_common_subexpressions_merge_as_a_full_key_would(seed: int) -> None:
    # The pass keys an equation by its op and operands, and its parameters only when two
    # meet: the same merges as keying every equation in full, on random equations over
    # a few ops, operands (variables, numbers of several types, arrays by identity) and
    # parameters (equal in another order, different, unhashable).
    from kenaz.ops.elementwise import add, alias, stop_gradient, tanh

    rng = np.random.default_rng(seed)
    f64 = np.dtype("float64")
    first_array, second_array = np.ones(3), np.ones(3)
    constants = [2.0, 2, True, first_array, second_array, None]
    parameters = [
        {},
        {},
        {"axis": 0},
        {"axis": 1},
        {"axis": 0, "keepdims": False},
        {"keepdims": False, "axis": 0},
        {"index": np.array([1])},
    ]
    variables = [Var(i, (3,), f64) for i in range(3)]
    equations = []
    for _ in range(60):
        op = [add, tanh, alias, stop_gradient][rng.integers(4)]
        count = 1 if op is not add else 2
        inputs = []
        for _ in range(count):
            if rng.random() < 0.75:
                inputs.append(variables[rng.integers(len(variables))])
            else:
                inputs.append(Const(constants[rng.integers(len(constants))]))
        params = parameters[rng.integers(len(parameters))] if op is not alias else {}
        out = Var(len(variables), (3,), f64)
        variables.append(out)
        equations.append(Equation(op, inputs, params, [out], False))
    mine: dict = {}
    kept = common_subexpressions(equations, mine, identities=True)
    theirs: dict = {}
    expected = _reference_common_subexpressions(equations, theirs)
    assert mine == theirs
    assert len(kept) == len(expected) < 60
    for eq, (op, inputs, params, outputs) in zip(kept, expected, strict=True):
        assert (eq.op, eq.params, eq.outputs) == (op, params, outputs)
        assert [a.id if type(a) is Var else id(a.value) for a in eq.inputs] == [
            a.id if type(a) is Var else id(a.value) for a in inputs
        ]


def _merging_cases() -> list:
    x = knp.array([0.3, -0.7, 1.1])
    w = np.array([2.0, 0.5, -1.0])
    return [
        (lambda x: knp.sin(x) * 2.0 + knp.cos(x) @ w, (x,), True),
        (lambda x: knp.sin(x) + knp.sin(x), (x,), False),  # a repeat
        (lambda x: kenaz.stop_gradient(x) * x, (x,), False),  # an identity op
        (lambda x: knp.sum(x, axis=0) + knp.sum(x, axis=0, keepdims=True), (x,), False),
        (lambda x: knp.exp(x * 2.0) - knp.exp(2.0 * x), (x,), True),  # not the same operands
        (lambda x: (x * w + w * x, x * w), (x,), False),
        (kenaz.grad(lambda x: knp.sum(knp.tanh(x * w) ** 2)), (x,), None),
        (kenaz.vmap(kenaz.grad(loss), in_axes=(0, None)), (knp.ones((4, 3, 2)), X), None),
    ]


@pytest.mark.parametrize("case", range(8))
def test_a_trace_notes_whether_its_equations_may_merge(case: int) -> None:
    # A trace keys each equation by its op and operands: one whose equations are distinct
    # (no repeat, no identity op) needs no common subexpressions, and optimize skips them:
    # the same program as merging them.
    f, args, distinct = _merging_cases()[case]
    program = kenaz.make_program(f)(*args)
    if distinct is not None:
        assert program.distinct is distinct, str(program)
    unknown = program.with_equations(program.equations)
    unknown.calls = program.calls
    assert unknown.distinct is None
    assert str(optimize(program)) == str(optimize(unknown))


def test_optimize_notes_each_variables_last_read() -> None:
    def f(x, y):
        a = knp.sin(x) * y
        unused = knp.exp(a)  # noqa: F841 - dead: its read of `a` must not count
        b = knp.cos(a) + a
        return b * y, a

    optimized = optimize(kenaz.make_program(f)(knp.ones(3), knp.ones(3)), plan=False)
    expected: dict = {}
    for index, eq in enumerate(optimized.equations):
        for atom in eq.inputs:
            if isinstance(atom, Var):
                expected[atom.id] = index
    for atom in optimized.outputs:
        expected[atom.id] = len(optimized.equations)
    assert optimized.last_reads == expected
    assert optimized.last_reads[optimized.inputs[1].id] == len(optimized.equations) - 1


_CONSTANT = np.array([0.5, -1.5, 2.0])


def _plans() -> list:
    """Programs whose plans exercise the slot scan: reuse, constants, several results,
    outputs repeated or passed through, dead results."""

    def chain(x, y):
        a = knp.sin(x) * y
        unused = knp.exp(a)  # noqa: F841 - dead
        b = knp.cos(a) + a * _CONSTANT
        return b * y, a, x, a

    def several(m, x):
        w, v = knp.linalg.eigh(m)  # two results: only `w` read (v's write is the scratch slot)
        u = knp.linalg.eigh(m + 1.0)[1]  # only the second read
        return knp.sum(w) * x + u[0], x * x + x

    def reuse(x):
        for _ in range(6):
            x = knp.tanh(x) * 2.0 + knp.sin(x)
        return x, 3.0

    m = knp.array([[2.0, 0.5, 0.0], [0.5, 1.0, 0.2], [0.0, 0.2, 3.0]])
    x = knp.array([0.3, -0.7, 1.1])
    return [(chain, (x, x + 1.0)), (several, (m, x)), (reuse, (x,))]


@pytest.mark.parametrize("case", range(3))
def test_the_plan_made_with_dead_code_runs_as_the_forward_scans(case: int) -> None:
    # `optimize` makes the interpreter's plan in its backward walk (live_plan); the same
    # equations without it are planned forward (last reads first): the same results, the
    # same equations kept as `dead_code` keeps, and as few slots.
    f, args = _plans()[case]
    program = kenaz.make_program(f)(*args)
    optimized = optimize(program)
    assert optimized.plan is not None
    unplanned = optimize(program, plan=False)
    assert unplanned.plan is None
    assert [eq.op for eq in optimized.equations] == [eq.op for eq in unplanned.equations]
    values = [np.asarray(a) for a in args]
    planned_results = interpret(optimized)(*values)
    forward_results = interpret(unplanned)(*values)
    assert len(planned_results) == len(forward_results) == len(program.outputs)
    for mine, theirs in zip(planned_results, forward_results, strict=True):
        assert type(mine) is type(theirs)
        np.testing.assert_array_equal(mine, theirs, strict=True)
    assert len(optimized.plan[0]) <= len(interpret.__globals__["_plan"](unplanned, False)[0])


def test_an_alias_of_a_tracer_is_a_fresh_tracer_of_its_variable() -> None:
    # grad and vmap alias their inputs (fresh identities): no equation is recorded for that.
    program = kenaz.make_program(kenaz.vmap(kenaz.grad(loss), in_axes=(0, None)))(
        knp.ones((4, 3, 2)), X
    )
    assert "alias" not in [eq.op.name for eq in program.equations]
    x = knp.array([0.5, -1.0])
    f = kenaz.jit(kenaz.grad(lambda x: knp.sum(knp.sin(x) * x)))
    assert np.allclose(
        kenaz.grad(lambda x: knp.sum(f(x)))(x).numpy(),
        -np.sin(x.numpy()) * x.numpy() + 2 * np.cos(x.numpy()),
    )


def test_a_traced_values_error_writes_its_message_when_read() -> None:
    import pickle

    def f(x):
        return x if x > 0 else -x

    with pytest.raises(kenaz.errors.ConcretizationError) as caught:
        kenaz.jit(f)(knp.ones(()))
    error = caught.value
    assert "bool()" in error.args[0] and "static_argnums" in error.args[0]  # args read first
    assert str(error) == error.args[0] and "float64" not in str(error)  # bool[]: the comparison
    again = pickle.loads(pickle.dumps(error))
    assert isinstance(again, kenaz.errors.ConcretizationError) and str(again) == str(error)
    assert type(error).__name__ == "ConcretizationError"  # as messages naming it read


def test_generated_source_reuses_names_and_buffers() -> None:
    def chain(x):
        for _ in range(5):
            x = knp.sin(x) * 2.0 + 1.0
        return x

    program = optimize(kenaz.make_program(chain)(knp.ones(8)))
    source, _ = generate_source(program)
    assert "out=" in source  # elementwise chains write into their dead operand
    assert source.count("\n") == len(program.equations) + 2
    assert "x0" in source and "out=x0" not in source  # inputs are never overwritten
    x = knp.linspace(0.0, 1.0, 8)
    before = x.numpy().copy()
    np.testing.assert_allclose(kenaz.jit(chain)(x).numpy(), chain(x).numpy())
    np.testing.assert_array_equal(x.numpy(), before)


def test_split_of_a_vjp_program() -> None:
    def vjp_program(x, ct):
        out, pullback = kenaz.vjp(lambda x: knp.sin(x) * x, x)
        return out, pullback(ct)[0]

    x = knp.linspace(0.0, 1.0, 4)
    program = kenaz.make_program(vjp_program)(x, knp.ones(4))
    forward, backward = split_program(program, 1, 1)
    assert "cos" not in str(forward) and "sin" in str(forward)
    residuals = replay(forward, [x])
    (grad,) = replay(backward, [*residuals[1:], knp.ones(4)])
    np.testing.assert_allclose(grad.numpy(), np.sin(x.numpy()) + x.numpy() * np.cos(x.numpy()))


def test_make_program_errors_like_jit() -> None:
    with pytest.raises(kenaz.errors.ConcretizationError, match="static_argnums"):
        kenaz.make_program(lambda x: x if x.sum() > 0 else -x)(knp.ones(2))


def test_a_call_with_its_own_implementation_is_one_primitive_equation() -> None:
    def f(x):
        return knp.sum(knp.cumprod(x) * x)

    x = knp.array([0.5, 2.0, 0.0])
    program = kenaz.make_program(f)(x)
    assert [eq.op.name for eq in program.equations] == ["cumprod", "mul", "sum"]
    assert program.equations[0].body is None  # NumPy's cumprod runs, not its O(n^2) function
    expected = kenaz.grad(f)(x)
    np.testing.assert_allclose(kenaz.grad(kenaz.jit(f))(x).numpy(), expected.numpy())
    np.testing.assert_allclose(kenaz.jit(kenaz.grad(f))(x).numpy(), expected.numpy())


def test_a_long_trace_pauses_the_collector_until_it_ends_even_when_it_raises() -> None:
    # A short trace leaves the cyclic collector alone (pausing costs as much as an op); a
    # long one pauses it once it has made 500 variables, and resumes it when it ends.
    import gc

    from kenaz.compiler.program import trace

    seen = []

    def chain(x, steps, fail=False):
        seen.append(gc.isenabled())
        for _ in range(steps):
            x = knp.sin(x)
        seen.append(gc.isenabled())
        if fail:
            raise RuntimeError("stop")
        return x

    x = knp.ones(3)
    was = gc.isenabled()
    gc.enable()
    try:
        trace(chain, (x, 10), {}, {1: 10})
        assert seen == [True, True] and gc.isenabled()
        seen.clear()
        trace(chain, (x, 600), {}, {1: 600})
        assert seen == [True, False] and gc.isenabled()
        seen.clear()
        with pytest.raises(RuntimeError, match="stop"):
            trace(chain, (x, 600, True), {}, {1: 600, 2: True})
        assert seen == [True, False] and gc.isenabled()
    finally:
        if not was:
            gc.disable()
