"""kenaz.numpy.fft: values against NumPy, derivatives against finite differences, vmap."""

import numpy as np
import pytest
from _check import check, check_vmap

import kenaz.numpy as knp

kfft = knp.fft
rng = np.random.default_rng(2)
real = rng.standard_normal((3, 4, 5))
cplx = rng.standard_normal((3, 4, 5)) + 1j * rng.standard_normal((3, 4, 5))
half = rng.standard_normal((3, 4, 4)) + 1j * rng.standard_normal((3, 4, 4))

CASES = [
    ("fft", (cplx,), {}),
    ("fft", (real,), {"n": 7, "axis": 1}),
    ("fft", (cplx,), {"n": 3, "norm": "ortho"}),
    ("ifft", (cplx,), {"axis": 0, "norm": "forward"}),
    ("rfft", (real,), {}),
    ("rfft", (real,), {"n": 8, "axis": 0, "norm": "ortho"}),
    ("irfft", (half,), {}),
    ("irfft", (half,), {"n": 7}),
    ("irfft", (half,), {"n": 4, "axis": 1, "norm": "forward"}),
    ("hfft", (half,), {}),
    ("ihfft", (real,), {"norm": "ortho"}),
    ("fft2", (cplx,), {}),
    ("ifft2", (cplx,), {"s": (3, 6)}),
    ("rfft2", (real,), {}),
    ("irfft2", (half,), {}),
    ("irfft2", (half,), {"s": (5, 5), "norm": "ortho"}),
    ("fftn", (cplx,), {"axes": (0, 2)}),
    ("ifftn", (real,), {}),
    ("rfftn", (real,), {"s": (2, 4, 6), "axes": (0, 1, 2)}),
    ("irfftn", (half,), {"axes": (0, 2)}),
    ("irfftn", (half,), {"s": (3, 4, 5), "axes": (0, 1, 2)}),
    ("fftshift", (real,), {}),
    ("ifftshift", (real,), {"axes": 1}),
    ("fftshift", (cplx,), {"axes": (0, 2)}),
]


@pytest.mark.parametrize("name, args, kwargs", CASES, ids=[c[0] for c in CASES])
def test_values_derivatives_vmap(name, args, kwargs):
    expected = getattr(np.fft, name)(*args, **kwargs)
    ours = getattr(kfft, name)
    np.testing.assert_allclose(ours(*args, **kwargs).numpy(), expected, atol=1e-12)
    check(f"fft.{name}", lambda x: ours(x, **kwargs), *args)
    batch = np.stack([args[0], 0.5 * args[0] + 1], axis=1)
    check_vmap(f"fft.{name}", lambda x: ours(x, **kwargs), batch, in_axes=1)


def test_numpy_fft_dispatches_and_frequencies():
    import kenaz

    g = kenaz.grad(lambda x: np.abs(np.fft.rfft(x)).sum())(real[0, 0])
    assert g.shape == (5,)
    np.testing.assert_allclose(kfft.fftfreq(4), np.fft.fftfreq(4))
    with pytest.raises(TypeError, match="out="):
        kfft.fft(cplx, out=np.zeros(5))
