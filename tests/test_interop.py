"""Exchange with other array libraries (DLPack) and the notebook display of tensors."""

from __future__ import annotations

import numpy as np
import pytest

import kenaz
import kenaz.numpy as knp
from kenaz import Tensor


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.complex128, np.bool_])
def test_numpy_to_kenaz_and_back_shares_memory(dtype):
    source = (np.arange(6) % 3).reshape(2, 3).astype(dtype)
    tensor = knp.from_dlpack(source)
    assert isinstance(tensor, Tensor)
    assert tensor.dtype == source.dtype and tensor.shape == (2, 3)
    np.testing.assert_array_equal(tensor.numpy(), source)
    assert np.shares_memory(tensor.numpy(), source)
    back = np.from_dlpack(tensor)
    np.testing.assert_array_equal(back, source)
    assert np.shares_memory(back, source)


def test_strided_views_and_zero_d_values():
    source = np.arange(12.0).reshape(3, 4)[:, ::2]  # not contiguous
    tensor = knp.from_dlpack(source)
    np.testing.assert_array_equal(np.from_dlpack(tensor), source)
    total = knp.sum(tensor)  # a reduction's value may be a NumPy scalar, not an array
    back = np.from_dlpack(total)
    assert back.shape == () and float(back) == source.sum()


def test_computed_tensors_export_their_values():
    x = knp.linspace(0.0, 1.0, 5)
    y = knp.sin(x) * 2
    np.testing.assert_allclose(np.from_dlpack(y), 2 * np.sin(np.linspace(0, 1, 5)))
    assert y.__dlpack_device__() == (1, 0)  # DLPack's kDLCPU, device 0


def test_copy_requests():
    source = np.arange(3.0)
    copied = knp.from_dlpack(source, copy=True)
    assert not np.shares_memory(copied.numpy(), source)
    np.testing.assert_array_equal(copied.numpy(), source)
    assert not np.shares_memory(np.from_dlpack(copied, copy=True), copied.numpy())


def test_read_only_values_reach_consumers_of_every_dlpack_version():
    source = np.arange(3.0)
    source.flags.writeable = False
    tensor = knp.from_dlpack(source)
    # A DLPack >= 1.0 consumer gets the read-only memory itself.
    modern = np.from_dlpack(tensor)
    assert np.shares_memory(modern, source) and not modern.flags.writeable
    # A consumer of DLPack before 1.0 cannot be told "read-only": it gets a copy ...
    capsule = tensor.__dlpack__()
    assert type(capsule).__name__ == "PyCapsule"
    # ... unless it forbids copies.
    with pytest.raises(BufferError):
        tensor.__dlpack__(copy=False)


def test_imported_values_are_constants_and_exported_values_obey_the_conversion_rule():
    """Exporting a tensor that grad differentiates would be a silent constant: refused
    (docs/conventions.md, "Conversions"); after stop_gradient it is the constant asked for."""
    from kenaz.convert import TrackedConversionError

    weights = knp.from_dlpack(np.array([1.0, 2.0, 3.0]))

    def f(x):
        exported = np.from_dlpack(kenaz.stop_gradient(x))  # plain NumPy: a constant
        return knp.sum(weights * x**2) + float(exported.sum())

    np.testing.assert_allclose(kenaz.grad(f)(knp.ones(3)), [2.0, 4.0, 6.0])
    with pytest.raises(TrackedConversionError, match="stop_gradient"):
        kenaz.grad(lambda x: knp.sum(x) * float(np.from_dlpack(x).sum()))(knp.ones(3))
    assert knp.from_dlpack(weights) is weights


def test_inside_vmap_a_per_example_view_refuses_to_export():
    def f(x):
        np.from_dlpack(x)
        return x

    with pytest.raises(Exception, match="method=\"loop\"|method='loop'"):
        kenaz.vmap(f)(knp.ones((2, 3)))


def test_from_dlpack_names_itself_on_bad_input():
    with pytest.raises(TypeError, match="kenaz.numpy.from_dlpack"):
        knp.from_dlpack([1.0, 2.0])


def test_round_trip_with_torch():
    torch = pytest.importorskip("torch")
    source = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    tensor = knp.from_dlpack(source)
    assert tensor.dtype == np.float32 and tensor.shape == (2, 3)
    np.testing.assert_array_equal(tensor.numpy(), source.numpy())
    assert tensor.numpy().ctypes.data == source.data_ptr()  # zero-copy
    doubled = torch.from_dlpack(tensor * 2)
    assert isinstance(doubled, torch.Tensor)
    np.testing.assert_array_equal(doubled.numpy(), 2 * source.numpy())
    back = torch.from_dlpack(tensor)
    assert back.data_ptr() == source.data_ptr()


def test_html_repr_for_notebooks():
    html = knp.array([[1.0, 2.0], [3.0, 4.0]], dtype=np.float32)._repr_html_()
    assert "shape (2, 2)" in html and "float32" in html
    assert "Tensor([[1., 2.]," in html and "dtype=float32" in html
    big = knp.arange(10_000.0)._repr_html_()
    assert "..." in big and len(big) < 2_000  # summarized like NumPy's repr
    assert "&lt;" not in knp.array(1.0)._repr_html_()
    # the values are escaped: a repr can never inject markup
    assert "<pre>Tensor(1.)</pre>" in knp.array(1.0)._repr_html_()


def test_html_repr_of_a_per_example_view_inside_vmap():
    shown = []

    def f(x):
        shown.append(x._repr_html_())
        return x

    kenaz.vmap(f)(knp.ones((4, 2)))
    assert "shape (2,)" in shown[0] and "BatchedTensor" in shown[0] and "batch_size=4" in shown[0]
