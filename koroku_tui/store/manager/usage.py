"""The usage statistics of a session and of all history (``koroku_tui.store.usage_stats``)."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable
from typing import TypeVar

from koroku_tui.store.errors import StoreReadError, translate_errors
from koroku_tui.store.manager.core import StoreCore
from koroku_tui.store.opening import read_only_uri, reading_uri
from koroku_tui.store.usage_stats import UsageReport, UsageStats, read_report, read_usage

__all__ = ["UsageMixin"]

_T = TypeVar("_T")
_R = TypeVar("_R")


class UsageMixin(StoreCore):
    """What was spent: tokens, requests, tool calls, compactions, time waiting for Gemini.

    Read on a connection of their own, in a thread (all history, 100,000
    messages, takes about 0.7 s of CPU: ``bench/stats_bench.py``): the store's
    connection, and a turn writing through it, never wait for them. A caller
    cancelled (the screen closed while counting) stops the scan too.
    Corrupted rows are skipped and counted (``UsageStats.unreadable``).
    Both raise ``StoreReadError``.
    """

    async def usage_stats(
        self, session_id: int | None = None, *, all_history: bool = False
    ) -> UsageStats:
        """A session's usage (the current one by default), or with ``all_history`` every session's.

        A session's own rows count, not those a fork copied from its source.
        """
        sid = None if all_history else self.session_id if session_id is None else session_id
        return await self._read_usage(read_usage, sid)

    async def usage_report(self, session_id: int | None = None) -> UsageReport:
        """The session's (the current one by default) usage and all history's, at one moment."""
        sid = self.session_id if session_id is None else session_id
        return await self._read_usage(read_report, sid)

    async def _read_usage(
        self, read: Callable[[str, _T, int, threading.Event], _R], scope: _T
    ) -> _R:
        self._connection()  # open (else StoreNotInitializedError), as for every method
        path, wait = self._path, self._busy_timeout_ms
        with translate_errors(path, StoreReadError):
            if self._read_only:  # the checks and the immutable fallback of a read-only home
                uri = await asyncio.to_thread(read_only_uri, path, wait)
            else:
                uri = reading_uri(path)
            stop = threading.Event()
            reading = asyncio.ensure_future(asyncio.to_thread(read, uri, scope, wait, stop))
            try:
                return await asyncio.shield(reading)
            except asyncio.CancelledError:
                # The reader is gone (the screen closed): a thread is not cancelled
                # with it, so the scan is told to stop, and ends before we do.
                stop.set()
                with contextlib.suppress(Exception, asyncio.CancelledError):
                    await reading
                raise
