"""Pin every library to one thread, so that timings compare interpreters, not thread pools.

Call :func:`pin_to_one_thread` before NumPy, PyTorch or JAX is imported: the
BLAS libraries and XLA read these variables once, when they load.
"""

from __future__ import annotations

import os

THREAD_VARIABLES = {
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "VECLIB_MAXIMUM_THREADS": "1",
    "NUMEXPR_NUM_THREADS": "1",
}

# XLA's CPU backend: no Eigen thread pool, one intra-op thread.
XLA_SINGLE_THREAD_FLAGS = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"


def pin_to_one_thread() -> None:
    """Set the environment so that NumPy's BLAS, PyTorch and XLA each use one thread."""
    os.environ.update(THREAD_VARIABLES)
    existing = os.environ.get("XLA_FLAGS", "")
    if XLA_SINGLE_THREAD_FLAGS not in existing:
        os.environ["XLA_FLAGS"] = f"{existing} {XLA_SINGLE_THREAD_FLAGS}".strip()
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    # Silence TensorFlow-style C++ logging that XLA prints at start-up.
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
