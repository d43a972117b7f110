"""Keeping a file's state before ``write_file`` writes it: which call, and the store.

The call's model row is stored before its calls run (``loop/step.py``), so
the snapshot cannot share that row's transaction. It gets its own, committed
BEFORE the file is written: killed between the two, Koroku leaves a snapshot
of a write that never happened (harmless: a restore finds the file as the
snapshot says, or asks), never a write without its snapshot. The responses
row stored after the calls does not depend on it either.

``write_file`` runs in a worker thread (file I/O stays off the event loop);
:class:`StoreFileKeeper` hands the store's write to the loop and waits for
it. Which call is running is a context variable the step sets around each
call (:func:`running_call`), copied into the thread by ``asyncio.to_thread``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Protocol

from koroku_tui.agent.tools.result import ToolError
from koroku_tui.store.file_records import FileState

__all__ = ["CallPlace", "FileWrites", "StoreFileKeeper", "running_call"]

KEEP_TIMEOUT = 60.0
"""Seconds the tool's thread waits for the store to keep a snapshot before giving up."""


@dataclass(frozen=True, slots=True)
class CallPlace:
    """The running call: its model row, its place among that row's calls, the agent's loop."""

    message_id: int
    index: int
    loop: asyncio.AbstractEventLoop


_CURRENT: ContextVar[CallPlace | None] = ContextVar("koroku_running_call", default=None)


@contextmanager
def running_call(message_id: int | None, index: int) -> Iterator[None]:
    """Within: the call at ``index`` of model row ``message_id`` runs (``None``: not stored)."""
    if message_id is None:
        yield
        return
    token = _CURRENT.set(CallPlace(message_id, index, asyncio.get_running_loop()))
    try:
        yield
    finally:
        _CURRENT.reset(token)


class FileWrites(Protocol):
    """The store's side (``SessionManager`` is one)."""

    async def keep_file_write(
        self, path: bytes, before: FileState, after: FileState, message_id: int, call_index: int
    ) -> int:
        """Commit a snapshot of ``path`` for the call; returns its id."""
        ...


class StoreFileKeeper:
    """A ``ToolSettings.file_keeper`` over the session's store."""

    def __init__(self, store: FileWrites) -> None:
        self.store = store

    def keep_before_write(self, path: bytes, before: FileState, after: FileState) -> None:
        """Store the snapshot for the running call and wait until it is committed.

        Outside a stored call (a tool run by hand) nothing is kept. Raises
        ``ToolError`` when the store refuses or does not answer: the caller
        then writes nothing.
        """
        place = _CURRENT.get()
        if place is None:
            return
        work = self.store.keep_file_write(path, before, after, place.message_id, place.index)
        future = asyncio.run_coroutine_threadsafe(work, place.loop)
        try:
            future.result(timeout=KEEP_TIMEOUT)
        except (concurrent.futures.TimeoutError, concurrent.futures.CancelledError):
            future.cancel()
            raise ToolError(_not_kept("the database did not answer")) from None
        except Exception as exc:
            raise ToolError(_not_kept(str(exc) or type(exc).__name__)) from None


def _not_kept(reason: str) -> str:
    return (
        f"Could not keep the file's previous contents for rewind ({reason.rstrip('.')}), "
        "so it was not written."
    )
