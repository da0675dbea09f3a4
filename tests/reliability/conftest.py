"""Shared fixtures for the reliability tests.

Every test here must leave kenaz as it found it: no handler installed, no
transformation phase marked, and the cyclic garbage collector as it was. The
autouse fixture checks that before and after each test, so a leak shows up at
the test that caused it.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from kenaz.effects import current_handlers, current_scopes


@pytest.fixture(autouse=True)
def _no_handler_leaks() -> Iterator[None]:
    assert current_handlers() == (), f"a handler was installed before: {current_handlers()}"
    assert current_scopes() == ()
    gc_enabled = gc.isenabled()
    yield
    assert current_handlers() == (), f"the test leaked handlers: {current_handlers()}"
    assert current_scopes() == (), f"the test leaked scopes: {current_scopes()}"
    # Reverse passes pause the cyclic collector (process-wide, counted across threads);
    # threads, exceptions and cancellations must all leave it as it was.
    assert gc.isenabled() == gc_enabled, "the cyclic garbage collector was left paused"
