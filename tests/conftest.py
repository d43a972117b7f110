"""Suite-wide guards."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest


def _sqlite_workers() -> set[threading.Thread]:
    return {
        t for t in threading.enumerate() if "_connection_worker_thread" in t.name and t.is_alive()
    }


@pytest.fixture(autouse=True)
def no_leaked_database_connection() -> Iterator[None]:
    """Fail the test that leaves an aiosqlite connection open.

    An unclosed connection keeps a non-daemon thread alive, which makes the
    whole pytest process hang at exit long after the last test passed.
    """
    before = _sqlite_workers()
    yield
    leaked = _sqlite_workers() - before
    for thread in leaked:
        thread.join(timeout=2)  # a close() in flight may still be finishing
    still = [t.name for t in leaked if t.is_alive()]
    assert not still, f"test left {len(still)} SQLite connection(s) open: {still}"
