"""The benchmark machinery: thread pinning, peer loading, timing, checking, reporting.

Kept free of imports here, so that ``harness.threads`` can pin the thread
count before NumPy, PyTorch or JAX is first imported.
"""
