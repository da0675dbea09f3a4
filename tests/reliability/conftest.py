"""Shared fixtures for the reliability tests.

Every test here must leave kenaz as it found it: no handler installed and no
transformation phase marked. The autouse fixture checks that before and after
each test, so a leak shows up at the test that caused it.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kenaz.effects import current_handlers, current_scopes


@pytest.fixture(autouse=True)
def _no_handler_leaks() -> Iterator[None]:
    assert current_handlers() == (), f"a handler was installed before: {current_handlers()}"
    assert current_scopes() == ()
    yield
    assert current_handlers() == (), f"the test leaked handlers: {current_handlers()}"
    assert current_scopes() == (), f"the test leaked scopes: {current_scopes()}"
