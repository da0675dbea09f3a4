"""Sample calls of every public function of kenaz.numpy, linalg, fft, kenaz.scipy and kenaz.nn.

``calls(name)`` gives the call(s) the sweeps make of the function ``name``
(``"numpy.sin"``, ``"scipy.special.gammainc"``...): positional arguments and
keywords, with every floating-point argument a float64 NumPy array or a
Python float at a point inside its domain, away from kinks and ties. Most
functions take the default made from their signature (one array argument per
required parameter); ``OVERRIDES`` gives the others. ``NOT_SWEPT`` lists
what has no floating-point argument to sweep, each with why.
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np

rng = np.random.default_rng(18)
# Inside (0, 1), away from 0 and 1 and from each other: in the domain of log, sqrt,
# arcsin, arctanh, logit, erfinv, ndtri, betainc; no ties for max, sort, median.
vec = np.array([0.31, 0.62, 0.47, 0.78])
vec2 = np.array([0.55, 0.24, 0.69, 0.41])
mat = np.array([[0.61, 0.22, 0.37], [0.15, 0.72, 0.28], [0.33, 0.19, 0.84]])
mat2 = np.array([[0.42, 0.27, 0.65], [0.58, 0.36, 0.21], [0.25, 0.71, 0.49]])
spd = mat @ mat.T + np.eye(3)
tall = np.array([[0.61, 0.22], [0.15, 0.72], [0.33, 0.19], [0.52, 0.44]])
above_one = vec + 1.3
positive = vec * 3 + 0.5
ints = np.array([2, 0, 1, 3])
mask = np.array([True, False, True, True])
image = rng.uniform(-1, 1, (1, 2, 5, 5))
kernel = rng.uniform(-1, 1, (3, 2, 3, 3))
logits = np.array([[0.3, -0.4, 1.1], [0.9, 0.2, -0.7]])
labels = np.array([2, 0])

Call = tuple[tuple, dict]


def c(*args: Any, **kwargs: Any) -> Call:
    return args, kwargs


OVERRIDES: dict[str, list[Call]] = {
    # -- numpy ------------------------------------------------------------------------
    "numpy.arccosh": [c(above_one)], "numpy.acosh": [c(above_one)],
    "numpy.clip": [c(vec, 0.4, 0.7), c(vec, a_min=vec2 * 0.8, a_max=0.7)],
    "numpy.full": [c((3,), 0.7)],
    "numpy.full_like": [c(vec, 0.7)],
    "numpy.where": [c(mask, vec, vec2), c(mask, vec, 0.3)],
    "numpy.interp": [c(np.array([0.3, 1.4, 2.2]), np.array([0.0, 1.1, 1.9, 3.0]),
                       np.array([0.5, 0.9, 0.2, 0.7])),
                     c(np.array([-0.5, 1.4, 3.5]), np.array([0.0, 1.1, 1.9, 3.0]),
                       np.array([0.5, 0.9, 0.2, 0.7]), left=0.15, right=0.95)],
    "numpy.quantile": [c(vec, 0.3), c(vec, np.array([0.3, 0.6]))],
    "numpy.nanquantile": [c(vec, 0.3)],
    "numpy.percentile": [c(vec, 30.0)],
    "numpy.nanpercentile": [c(vec, 30.0)],
    "numpy.average": [c(vec, weights=vec2)],
    "numpy.sum": [c(vec), c(vec, initial=0.4)],
    "numpy.prod": [c(vec), c(vec, initial=0.4)],
    "numpy.max": [c(vec), c(vec, initial=0.9), c(vec, where=~mask, initial=0.7)],
    "numpy.min": [c(vec), c(vec, initial=0.2), c(vec, where=~mask, initial=0.5)],
    "numpy.amax": [c(vec), c(vec, initial=0.9)],
    "numpy.amin": [c(vec), c(vec, initial=0.2)],
    "numpy.mean": [c(vec), c(vec, where=mask)],
    "numpy.pad": [c(vec, 2, constant_values=0.6)],
    "numpy.linspace": [c(0.2, 1.7, 5)],
    "numpy.logspace": [c(0.2, 1.7, 5)],
    "numpy.geomspace": [c(0.2, 1.7, 5)],
    "numpy.nan_to_num": [c(np.array([0.3, np.nan, np.inf, -np.inf]), nan=0.3, posinf=0.9,
                           neginf=0.1)],
    "numpy.power": [c(positive, vec2)], "numpy.pow": [c(positive, vec2)],
    "numpy.float_power": [c(positive, vec2)],
    "numpy.ldexp": [c(vec, ints)],
    "numpy.polyval": [c(vec, vec2)],
    "numpy.polyfit": [c(vec, vec2, 2)],
    "numpy.heaviside": [c(vec - 0.5, 0.5)],
    "numpy.isclose": [], "numpy.allclose": [],
    "numpy.take": [c(vec, ints)],
    "numpy.take_along_axis": [c(vec, ints, 0)],
    "numpy.choose": [c(np.array([0, 1, 0, 1]), [vec, vec2])],
    "numpy.stop_gradient": [c(vec)],
    "numpy.partition": [c(vec, 2)], "numpy.argpartition": [c(vec, 2)],
    "numpy.select": [c([mask, np.zeros(4, bool)], [vec, vec2], 0.3)],
    "numpy.compress": [c(mask, vec)],
    "numpy.extract": [c(mask, vec)],
    "numpy.insert": [c(vec, 1, 0.35)],
    "numpy.delete": [c(vec, 1)],
    "numpy.append": [c(vec, vec2)],
    "numpy.repeat": [c(vec, 2)],
    "numpy.tile": [c(vec, 2)],
    "numpy.resize": [c(vec, (6,))],
    "numpy.reshape": [c(vec, (2, 2))],
    "numpy.broadcast_to": [c(vec, (2, 4))],
    "numpy.expand_dims": [c(vec, 0)],
    "numpy.moveaxis": [c(mat, 0, 1)], "numpy.rollaxis": [c(mat, 1)],
    "numpy.swapaxes": [c(mat, 0, 1)],
    "numpy.roll": [c(vec, 1)],
    "numpy.rot90": [c(mat)],
    "numpy.split": [c(vec, 2)], "numpy.array_split": [c(vec, 3)],
    "numpy.hsplit": [c(vec, 2)], "numpy.vsplit": [c(mat.T[:2], 2)],
    "numpy.dsplit": [c(mat[None], 3)],
    "numpy.unstack": [c(mat)],
    "numpy.concatenate": [c([vec, vec2])], "numpy.concat": [c([vec, vec2])],
    "numpy.stack": [c([vec, vec2])], "numpy.hstack": [c([vec, vec2])],
    "numpy.vstack": [c([vec, vec2])], "numpy.row_stack": [c([vec, vec2])],
    "numpy.dstack": [c([vec, vec2])], "numpy.column_stack": [c([vec, vec2])],
    "numpy.block": [c([vec, vec2])],
    "numpy.broadcast_arrays": [c(vec, mat[:1, :1])],
    "numpy.meshgrid": [c(vec, vec2[:3])],
    "numpy.einsum": [c("ij,jk->ik", mat, mat2)],
    "numpy.tensordot": [c(mat, mat2)],
    "numpy.kron": [c(vec[:2], vec2)],
    "numpy.dot": [c(mat, vec[:3])], "numpy.matmul": [c(mat, mat2)],
    "numpy.inner": [c(vec, vec2)], "numpy.outer": [c(vec, vec2)],
    "numpy.vecmat": [c(vec[:3], mat)], "numpy.matvec": [c(mat, vec[:3])],
    "numpy.vdot": [c(vec, vec2)], "numpy.vecdot": [c(vec, vec2)],
    "numpy.convolve": [c(vec, vec2[:3])], "numpy.correlate": [c(vec, vec2[:3])],
    "numpy.trace": [c(mat)], "numpy.diagonal": [c(mat)], "numpy.diag": [c(vec)],
    "numpy.diagflat": [c(vec)], "numpy.tril": [c(mat)], "numpy.triu": [c(mat)],
    "numpy.matrix_transpose": [c(mat)], "numpy.transpose": [c(mat)],
    "numpy.permute_dims": [c(mat, (1, 0))],
    "numpy.vander": [c(vec)],
    "numpy.cov": [c(mat)], "numpy.corrcoef": [c(mat)],
    "numpy.gradient": [c(vec * vec), c(vec * vec, 0.7)],
    "numpy.trapezoid": [c(vec * vec), c(vec, x=np.array([0.0, 0.4, 1.1, 1.5]))],
    "numpy.sum_to": [c(mat, (3, 1))],
    "numpy.scatter": [c(vec, np.array([1, 3]), vec2[:2])],
    "numpy.getitem": [c(vec, 1)],
    "numpy.divmod": [c(vec * 3 + 2, positive)], "numpy.fmod": [c(vec * 3 + 2, positive)],
    "numpy.remainder": [c(vec * 3 + 2, positive)], "numpy.mod": [c(vec * 3 + 2, positive)],
    "numpy.floor_divide": [c(vec * 3 + 2, positive)],
    "numpy.modf": [c(vec * 3)], "numpy.frexp": [c(vec * 3)],
    "numpy.diff": [c(vec)], "numpy.ediff1d": [c(vec)],
    "numpy.trim_zeros": [c(vec)],
    "numpy.astype": [c(vec, np.complex128)],
    "numpy.cumulative_sum": [c(vec)], "numpy.cumulative_prod": [c(vec)],
    "numpy.logsumexp": [c(vec)],
    "numpy.copysign": [c(vec, vec2 - 0.5)],
    "numpy.nextafter": [c(vec, vec2)],
    "numpy.var": [c(vec), c(vec, ddof=1)], "numpy.std": [c(vec), c(vec, ddof=1)],
    # -- numpy.linalg -------------------------------------------------------------------
    "numpy.linalg.cholesky": [c(spd)], "numpy.linalg.eigh": [c(spd)],
    "numpy.linalg.eigvalsh": [c(spd)], "numpy.linalg.eig": [c(spd)],
    "numpy.linalg.eigvals": [c(spd)],
    "numpy.linalg.solve": [c(spd, vec[:3])], "numpy.linalg.lstsq": [c(tall, vec)],
    "numpy.linalg.matrix_power": [c(mat, 3)], "numpy.linalg.multi_dot": [c([mat, mat2, mat])],
    "numpy.linalg.tensorinv": [c(spd, ind=1)], "numpy.linalg.tensorsolve": [c(spd, vec[:3])],
    "numpy.linalg.qr": [c(tall)], "numpy.linalg.svd": [c(tall, full_matrices=False)],
    "numpy.linalg.cond": [c(spd)], "numpy.linalg.det": [c(mat)], "numpy.linalg.inv": [c(mat)],
    "numpy.linalg.slogdet": [c(mat)], "numpy.linalg.pinv": [c(tall)],
    "numpy.linalg.svdvals": [c(tall)], "numpy.linalg.matrix_norm": [c(mat)],
    "numpy.linalg.diagonal": [c(mat)], "numpy.linalg.trace": [c(mat)],
    "numpy.linalg.matrix_transpose": [c(mat)], "numpy.fliplr": [c(mat)],
    "scipy.linalg.det": [c(mat)], "scipy.linalg.inv": [c(mat)], "scipy.linalg.pinv": [c(tall)],
    "numpy.linalg.cross": [c(vec[:3], vec2[:3])],
    "numpy.linalg.outer": [c(vec, vec2)], "numpy.linalg.vecdot": [c(vec, vec2)],
    "numpy.linalg.tensordot": [c(mat, mat2)], "numpy.linalg.matmul": [c(mat, mat2)],
    "numpy.linalg.norm": [c(vec), c(mat, ord="fro")],
    "numpy.linalg.matrix_rank": [],
    # -- numpy.fft ------------------------------------------------------------------------
    "numpy.fft.fft2": [c(mat)], "numpy.fft.ifft2": [c(mat)], "numpy.fft.rfft2": [c(mat)],
    "numpy.fft.irfft2": [c(mat)], "numpy.fft.fftn": [c(mat)], "numpy.fft.ifftn": [c(mat)],
    "numpy.fft.rfftn": [c(mat)], "numpy.fft.irfftn": [c(mat)],
    "numpy.fft.fftfreq": [c(4, 0.3)], "numpy.fft.rfftfreq": [c(4, 0.3)],
    # -- scipy.special ----------------------------------------------------------------------
    "scipy.special.betainc": [c(positive, positive[::-1], vec)],
    "scipy.special.gammainc": [c(positive, vec2)], "scipy.special.gammaincc": [c(positive, vec2)],
    "scipy.special.polygamma": [c(np.array([0, 1, 2, 1]), positive)],
    "scipy.special.multigammaln": [c(positive + 2, 2)],
    "scipy.special.jn": [c(np.array([0, 1, 2, 1]), positive)],
    "scipy.special.yn": [c(np.array([0, 1, 2, 1]), positive)],
    "scipy.special.jv": [c(np.array([0.0, 1.0, 2.0, 1.0]), positive)],
    "scipy.special.yv": [c(np.array([0.0, 1.0, 2.0, 1.0]), positive)],
    "scipy.special.iv": [c(np.array([0.0, 1.0, 2.0, 1.0]), positive)],
    "scipy.special.ive": [c(np.array([0.0, 1.0, 2.0, 1.0]), positive)],
    "scipy.special.y0": [c(positive)], "scipy.special.y1": [c(positive)],
    "scipy.special.stdtr": [c(positive + 1, vec2)],
    "scipy.special.gamma": [c(positive)], "scipy.special.rgamma": [c(positive)],
    "scipy.special.logsumexp": [c(vec), c(vec, b=vec2)],
    "scipy.special.kl_div": [c(vec, vec2)], "scipy.special.rel_entr": [c(vec, vec2)],
    "scipy.special.xlogy": [c(vec, vec2)], "scipy.special.xlog1py": [c(vec, vec2)],
    # -- scipy.signal ---------------------------------------------------------------------------
    "scipy.signal.convolve": [c(mat, mat2[:2, :2]), c(vec, vec2[:3], mode="same")],
    "scipy.signal.correlate": [c(mat, mat2[:2, :2]), c(vec, vec2[:3], mode="valid")],
    "scipy.signal.convolve2d": [c(mat, mat2[:2, :2], fillvalue=0.3)],
    "scipy.signal.correlate2d": [c(mat, mat2[:2, :2], mode="same", fillvalue=0.3)],
    "numpy.cross": [c(vec[:3], vec2[:3]), c(mat, mat2, axisa=0, axisb=1, axisc=0)],
    # -- issue 24: kenaz's own in place of NumPy's pass-throughs ------------------------------
    "numpy.piecewise": [c(vec, [vec > 0.5], [lambda t: t * t, 0.25])],
    "numpy.bincount": [c(np.array([0, 1, 1, 3]), weights=vec)],
    "numpy.apply_along_axis": [c(lambda row: row * row, 0, mat)],
    "numpy.apply_over_axes": [c(lambda a, axis: a * 2.0, mat, [0])],
    # -- scipy.linalg -------------------------------------------------------------------------
    "scipy.linalg.cholesky": [c(spd)], "scipy.linalg.eigh": [c(spd)],
    "scipy.linalg.cho_factor": [c(spd)],
    "scipy.linalg.cho_solve": [c((np.linalg.cholesky(spd), True), vec[:3])],
    "scipy.linalg.solve": [c(spd, vec[:3])], "scipy.linalg.lstsq": [c(tall, vec)],
    "scipy.linalg.solve_triangular": [c(np.triu(mat) + np.eye(3), vec[:3])],
    "scipy.linalg.sqrtm": [c(spd)], "scipy.linalg.qr": [c(tall, mode="economic")],
    "scipy.linalg.svd": [c(tall, full_matrices=False)],
    "scipy.linalg.expm": [c(mat * 0.5)],
    # -- scipy.stats ----------------------------------------------------------------------------
    "scipy.stats.beta.pdf": [c(vec, 2.3, 1.7)], "scipy.stats.beta.logpdf": [c(vec, 2.3, 1.7)],
    "scipy.stats.beta.cdf": [c(vec, 2.3, 1.7)], "scipy.stats.beta.logcdf": [c(vec, 2.3, 1.7)],
    "scipy.stats.gamma.pdf": [c(positive, 2.3)], "scipy.stats.gamma.logpdf": [c(positive, 2.3)],
    "scipy.stats.gamma.cdf": [c(positive, 2.3)], "scipy.stats.gamma.logcdf": [c(positive, 2.3)],
    "scipy.stats.chi2.pdf": [c(positive, 2.3)], "scipy.stats.chi2.logpdf": [c(positive, 2.3)],
    "scipy.stats.chi2.cdf": [c(positive, 2.3)], "scipy.stats.chi2.logcdf": [c(positive, 2.3)],
    "scipy.stats.t.pdf": [c(vec, 2.3)], "scipy.stats.t.logpdf": [c(vec, 2.3)],
    "scipy.stats.t.cdf": [c(vec, 2.3)], "scipy.stats.t.logcdf": [c(vec, 2.3)],
    "scipy.stats.norm.pdf": [c(vec, 0.2, 1.3)], "scipy.stats.norm.logpdf": [c(vec, 0.2, 1.3)],
    "scipy.stats.norm.cdf": [c(vec, 0.2, 1.3)], "scipy.stats.norm.logcdf": [c(vec, 0.2, 1.3)],
    "scipy.stats.norm.sf": [c(vec, 0.2, 1.3)], "scipy.stats.norm.logsf": [c(vec, 0.2, 1.3)],
    "scipy.stats.norm.ppf": [c(vec, 0.2, 1.3)],
    "scipy.stats.poisson.pmf": [c(ints, 2.3)], "scipy.stats.poisson.logpmf": [c(ints, 2.3)],
    "scipy.stats.poisson.cdf": [c(ints, 2.3)], "scipy.stats.poisson.logcdf": [c(ints, 2.3)],
    "scipy.stats.dirichlet.pdf": [c(vec[:3] / vec[:3].sum(), positive[:3])],
    "scipy.stats.dirichlet.logpdf": [c(vec[:3] / vec[:3].sum(), positive[:3])],
    "scipy.stats.multivariate_normal.pdf": [c(vec[:3], vec2[:3], spd)],
    "scipy.stats.multivariate_normal.logpdf": [c(vec[:3], vec2[:3], spd)],
    "scipy.stats.multivariate_normal.entropy": [c(vec2[:3], spd)],
    # -- nn -------------------------------------------------------------------------------------
    "nn.conv2d": [c(image, kernel, vec2[:3])],
    "nn.avg_pool2d": [c(image, 2)], "nn.max_pool2d": [c(image, 2)],
    "nn.linear": [c({"weight": mat, "bias": vec[:3]}, mat2)],
    "nn.layer_norm": [c(mat, vec[:3], vec2[:3])],
    "nn.batch_norm": [c(mat, vec[:3], vec2[:3], {"mean": np.zeros(3), "var": np.ones(3)}, True)],
    "nn.embedding": [c({"weight": mat}, np.array([0, 2]))],
    "nn.softmax_cross_entropy": [c(logits, labels)],
    "nn.binary_cross_entropy": [c(vec - 0.5, mask.astype(float))],
    "nn.mse": [c(vec, vec2)], "nn.mae": [c(vec, vec2)], "nn.huber": [c(vec, vec2 * 3)],
    "nn.dot_product_attention": [c(logits, logits, logits)],
    "nn.leaky_relu": [c(vec - 0.5, 0.2)], "nn.elu": [c(vec - 0.5, 1.3)],
    "nn.dropout": [],
}  # fmt: skip

# Functions with no floating-point argument to sweep, or none whose derivative exists.
NOT_SWEPT: dict[str, str] = {
    **{f"scipy.linalg.{n}": "structured arguments (factors, bands, functions, selections): "
       "tests/namespaces/test_scipy_linalg.py checks it against SciPy and with check_grads"
       for n in ("lu", "lu_factor", "lu_solve", "solve_banded", "solveh_banded", "eigh_tridiagonal",
                 "eigvalsh", "funm", "expm_frechet", "polar", "solve_sylvester",
                 "solve_continuous_lyapunov", "solve_discrete_lyapunov", "logm", "cosm", "sinm",
                 "tanm", "coshm", "sinhm", "tanhm", "block_diag", "toeplitz", "hankel",
                 "circulant", "svdvals")},
    **{f"scipy.linalg.{n}": "not differentiable (values only; refuses tracked tensors)"
       for n in ("schur", "rsf2csf", "hessenberg", "hilbert")},
    **{f"numpy.{n}": "writes into its first argument in place, as NumPy's (the sample arrays "
       "are shared); tests/numpy_api/test_keywords_and_writes.py checks its derivatives"
       for n in ("put", "place", "put_along_axis", "fill_diagonal")},
    **{f"numpy.{n}": "integers only" for n in (
        "bitwise_and", "bitwise_invert", "bitwise_left_shift", "bitwise_not", "bitwise_or",
        "bitwise_right_shift", "bitwise_xor", "gcd", "lcm", "invert", "left_shift",
        "right_shift")},
    "numpy.arange": "integer range (its float arguments are piecewise constant in the length)",
    "numpy.array_equal": "returns a bool", "numpy.array_equiv": "returns a bool",
    "numpy.allclose": "returns a bool", "numpy.isclose": "returns bools",
    "numpy.can_cast": "dtypes", "numpy.result_type": "dtypes", "numpy.isdtype": "dtypes",
    "numpy.shape": "a tuple of ints", "numpy.ndim": "an int", "numpy.size": "an int",
    "numpy.isscalar": "a bool", "numpy.iscomplexobj": "a bool", "numpy.isrealobj": "a bool",
    "numpy.holds_tensor": "a bool", "numpy.indices": "ints", "numpy.ravel_multi_index": "ints",
    "numpy.unravel_index": "ints", "numpy.zeros": "no array argument",
    "numpy.ones": "no array argument", "numpy.empty": "no array argument",
    "numpy.eye": "no array argument", "numpy.identity": "no array argument",
    "numpy.tri": "no array argument", "numpy.linalg.matrix_rank": "an integer",
    "numpy.linalg.NamedTuple": "a class", "nn.dropout": "random (kenaz.nn tests cover it)",
    "nn.as_generator": "a random generator", "nn.causal_mask": "bools",
    "nn.count_parameters": "an int", "nn.conv_output_size": "ints",
    "nn.one_hot": "ints in, 0/1 out", "nn.accuracy": "a fraction of integer counts",
    "nn.top_k_accuracy": "a fraction of integer counts",
    "nn.split": "splits a data set (not differentiated)",
    "nn.multi_head_attention": "a parameter dict (kenaz.nn tests check it)",
}  # fmt: skip


def _default_call(f: Any) -> list[Call]:
    """One float vector per required positional parameter: the first arity that runs."""
    pool = [vec, vec2, positive]
    for count in (1, 2, 3):
        try:
            f(*pool[:count])
        except Exception:  # noqa: BLE001, S112 - try the next arity
            continue
        return [c(*pool[:count])]
    return []


def _float_defaults(f: Any, positional: int) -> dict[str, float]:
    """The parameters of ``f`` after the first ``positional`` whose default is a Python
    float (``eps``, ``alpha``, ``rtol``...): swept too, at their default."""
    try:
        parameters = list(inspect.signature(f).parameters.values())[positional:]
    except (TypeError, ValueError):
        return {}
    return {
        p.name: p.default
        for p in parameters
        if type(p.default) is float and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    }


def numpy_utility(f: Any) -> str | None:
    """How ``kenaz.numpy`` passes a NumPy utility through (``"pass-through"``,
    ``"values"``, NumPy's own): not kenaz's to differentiate (see numpy/_utilities.py);
    tests/sweep checks the pass-throughs refuse tracked tensors by name instead."""
    tag = getattr(f, "__kenaz_numpy__", None)
    if tag is None and (getattr(f, "__module__", None) or "").split(".")[0] == "numpy":
        return "NumPy's own"
    return tag


def calls(name: str, f: Any) -> list[Call]:
    """The sample calls of the function ``f`` named ``name`` (each with the parameters
    that default to a float given explicitly, so that they are swept too)."""
    if name in NOT_SWEPT or numpy_utility(f) is not None:
        return []
    chosen = OVERRIDES.get(name) or _default_call(f)
    if f is None:
        return chosen
    return [(args, {**_float_defaults(f, len(args)), **kwargs}) for args, kwargs in chosen]
