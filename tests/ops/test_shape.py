"""check_op for the shape primitives and the composites built on them, and their errors."""

from __future__ import annotations

import numpy as np
import pytest

import kenaz
import kenaz.numpy as knp

from .cases import OpCase, make_check_op_test, uniform


def _case(name, function, *shapes, seed=0) -> OpCase:
    args = tuple(uniform(shape, -2, 2, seed + i) for i, shape in enumerate(shapes))
    return OpCase(name, function, args)


def _split_outputs(x, sections, axis):
    return tuple(knp.split(x, sections, axis=axis))


CASES = [
    # reshape
    _case("reshape-flatten", lambda x: knp.reshape(x, (-1,)), (2, 3)),
    _case("reshape-infer", lambda x: knp.reshape(x, (3, -1)), (2, 3, 2)),
    _case("reshape-to-0d", lambda x: knp.reshape(x, ()), (1, 1)),
    _case("reshape-from-0d", lambda x: knp.reshape(x, (1, 1, 1)), ()),
    _case("reshape-fortran", lambda x: knp.reshape(x, (3, 2), order="F"), (2, 3)),
    _case("ravel", knp.ravel, (2, 2, 2)),
    # broadcast_to
    _case("broadcast_to-new-leading", lambda x: knp.broadcast_to(x, (2, 3)), (3,)),
    _case("broadcast_to-unit-axis", lambda x: knp.broadcast_to(x, (4, 3)), (1, 3)),
    _case("broadcast_to-from-0d", lambda x: knp.broadcast_to(x, (2, 2)), ()),
    _case("broadcast_to-both", lambda x: knp.broadcast_to(x, (2, 3, 4)), (3, 1)),
    # transpose and composites
    _case("transpose-reverse", knp.transpose, (2, 3, 4)),
    _case("transpose-perm", lambda x: knp.transpose(x, (1, 2, 0)), (2, 3, 4)),
    _case("transpose-0d", knp.transpose, ()),
    _case("T", lambda x: x.T, (2, 3)),
    _case("moveaxis", lambda x: knp.moveaxis(x, 0, -1), (2, 3, 4)),
    _case("swapaxes", lambda x: knp.swapaxes(x, 0, 2), (2, 3, 4)),
    # squeeze and expand_dims
    _case("squeeze-all", knp.squeeze, (1, 3, 1)),
    _case("squeeze-axis", lambda x: knp.squeeze(x, axis=2), (1, 3, 1)),
    _case("squeeze-to-0d", knp.squeeze, (1, 1)),
    _case("expand_dims-front", lambda x: knp.expand_dims(x, 0), (3,)),
    _case("expand_dims-back", lambda x: knp.expand_dims(x, -1), (2, 3)),
    _case("expand_dims-several", lambda x: knp.expand_dims(x, (0, 2)), (3,)),
    _case("expand_dims-0d", lambda x: knp.expand_dims(x, 0), ()),
    # concatenate, stack, split
    _case("concatenate-axis0", lambda x, y: knp.concatenate([x, y]), (2, 3), (4, 3)),
    _case("concatenate-axis1", lambda x, y: knp.concatenate([x, y], axis=1), (2, 3), (2, 1)),
    _case(
        "concatenate-three-axis-1",
        lambda x, y, z: knp.concatenate([x, y, z], axis=-1),
        (2, 1),
        (2, 2),
        (2, 3),
    ),
    _case("concatenate-axis-None", lambda x, y: knp.concatenate([x, y], axis=None), (2, 2), (3,)),
    _case("concatenate-same-twice", lambda x: knp.concatenate([x, x]), (3,)),
    _case("stack-axis0", lambda x, y: knp.stack([x, y]), (2, 3), (2, 3)),
    _case("stack-axis-last", lambda x, y: knp.stack([x, y], axis=-1), (3,), (3,)),
    _case("stack-0d", lambda x, y: knp.stack([x, y]), (), ()),
    _case("split-sections", lambda x: _split_outputs(x, 3, 0), (6, 2)),
    _case("split-indices", lambda x: _split_outputs(x, [1, 3], 1), (2, 5)),
    _case("split-empty-piece", lambda x: _split_outputs(x, [0, 2], 0), (3,)),
    # slicing (gather with basic indices)
    _case("slice-step", lambda x: x[1::2], (7,)),
    _case("slice-negative-step", lambda x: x[::-1, 1:], (3, 4)),
    _case("slice-ellipsis-newaxis", lambda x: x[..., None, 0], (2, 3)),
    # flip, pad, repeat, tile
    _case("flip-all", knp.flip, (2, 3)),
    _case("flip-axis", lambda x: knp.flip(x, 1), (2, 3)),
    _case("flip-axes", lambda x: knp.flip(x, (0, 2)), (2, 3, 2)),
    _case("pad-symmetric-width", lambda x: knp.pad(x, 1), (2, 3)),
    _case("pad-per-axis", lambda x: knp.pad(x, ((0, 2), (1, 0))), (2, 3)),
    _case("pad-constant", lambda x: knp.pad(x, (2, 1), constant_values=5.0), (3,)),
    _case("repeat-flat", lambda x: knp.repeat(x, 2), (2, 2)),
    _case("repeat-axis", lambda x: knp.repeat(x, 3, axis=1), (2, 2)),
    _case("repeat-per-element", lambda x: knp.repeat(x, [1, 0, 2], axis=0), (3, 2)),
    _case("tile-1d", lambda x: knp.tile(x, 3), (2,)),
    _case("tile-2d", lambda x: knp.tile(x, (2, 1)), (2, 3)),
    _case("tile-more-reps-than-dims", lambda x: knp.tile(x, (2, 2, 2)), (3,)),
    _case("tile-0d", lambda x: knp.tile(x, 4), ()),
]

test_check_op = make_check_op_test(CASES)


# -- errors name the op and both shapes --------------------------------------------------------
@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: knp.reshape(np.ones(6), (4, 2)), r"kenaz\.reshape.*\(6,\).*\(4, 2\)"),
        (lambda: knp.broadcast_to(np.ones(3), (4,)), r"kenaz\.broadcast_to.*\(3,\).*\(4,\)"),
        (
            lambda: knp.concatenate([np.ones((2, 3)), np.ones((2, 4))]),
            r"kenaz\.concatenate.*\(2, 3\).*\(2, 4\)",
        ),
        (lambda: knp.stack([np.ones(2), np.ones(3)]), r"kenaz\.stack.*\(2,\).*\(3,\)"),
        (lambda: knp.transpose(np.ones((2, 3)), (0, 0)), r"kenaz\.transpose"),
        (lambda: knp.squeeze(np.ones((2, 3)), 0), r"kenaz\.squeeze.*\(2, 3\)"),
        (lambda: knp.split(np.ones(5), 2), r"kenaz\.split.*5"),
    ],
    ids=["reshape", "broadcast_to", "concatenate", "stack", "transpose", "squeeze", "split"],
)
def test_shape_errors_name_the_op_and_shapes(call, message):
    with pytest.raises(ValueError, match=message):
        call()


@pytest.mark.parametrize("value", [np.float64(2.0), np.asarray(2.0, dtype=np.float32)])
def test_broadcast_to_of_a_0d_value_is_a_read_only_view_as_numpys(value):
    out = knp.broadcast_to(kenaz.Tensor(value), (2, 3)).numpy()
    expected = np.broadcast_to(value, (2, 3))
    assert out.dtype == expected.dtype and out.strides == expected.strides == (0, 0)
    assert not out.flags.writeable
    np.testing.assert_array_equal(out, expected)
    for bad in [(-1,), (2, -3)]:
        with pytest.raises(ValueError, match="cannot broadcast"):
            knp.broadcast_to(kenaz.Tensor(value), bad)
