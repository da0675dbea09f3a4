"""Reliability tests (issue 8): threads and tasks, exceptions, deep graphs, leaks, bad input,
numerical conventions and property tests."""
