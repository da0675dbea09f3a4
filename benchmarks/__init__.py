"""Benchmarks of kenaz against hand-written NumPy and its peers (``make bench``)."""
