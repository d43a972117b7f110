"""Reading what a session stored, a page at a time.

The UI pages a long history up and down (``load_all``, ``load_after``,
``replay``), lists its tool calls and summaries, and the recall tools read
an excerpt around a search hit (``read_session``). Everything stored is read,
including what compaction or a rewind hid from the model; unreadable rows
come back with ``event=None``, never as an error.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable

from koroku_tui.events import TurnErrorEvent
from koroku_tui.store import queries
from koroku_tui.store.errors import StoreReadError, translate_errors
from koroku_tui.store.manager.core import StoreCore
from koroku_tui.store.records import SessionExcerpt, StoredMessage, SummaryRecord
from koroku_tui.store.replay import ReplayedPage, ReplayHandler

__all__ = ["MAX_EXCERPT_ROWS", "PagesMixin"]

MAX_EXCERPT_ROWS = 200
"""The most rows ``read_session`` returns at once."""


class PagesMixin(StoreCore):
    """A session's stored rows, read a page at a time."""

    async def load_all(
        self,
        session_id: int | None = None,
        *,
        before_id: int | None = None,
        limit: int | None = None,
    ) -> list[StoredMessage]:
        """A session's whole stored history in id order, including what compaction hid.

        With ``limit``: the newest ``limit`` rows older than ``before_id`` (of
        all rows when ``before_id`` is ``None``), still in id order, so a UI
        can show the tail and page back with ``before_id=page[0].id``.
        Unreadable rows come back with ``event=None``, their raw text and error.
        """
        if limit is not None and limit < 0:
            raise ValueError("limit must not be negative")
        return await self._read_session_rows(
            session_id, lambda conn, sid: queries.fetch_history(conn, sid, before_id, limit)
        )

    async def load_after(
        self, after_id: int, *, limit: int, session_id: int | None = None
    ) -> list[StoredMessage]:
        """The oldest ``limit`` rows stored after row ``after_id``, in id order.

        The way back down a history paged with ``load_all(before_id=)``: a UI
        that unmounted the newer rows reads them again with
        ``after_id=page[-1].id``. Unreadable rows come back as in ``load_all``.
        """
        if limit < 0 or after_id < 0:
            raise ValueError("after_id and limit must not be negative")
        return await self._read_session_rows(
            session_id, lambda conn, sid: queries.fetch_history_after(conn, sid, after_id, limit)
        )

    async def replay(
        self,
        handler: ReplayHandler,
        *,
        before: int | None = None,
        after: int | None = None,
        limit: int | None = None,
        errors: Callable[[TurnErrorEvent], Awaitable[None]] | None = None,
    ) -> ReplayedPage:
        """Hand the current session's stored events to ``handler(event=...)``, one page.

        The page is the newest ``limit`` rows older than ``before`` (all rows
        when ``limit`` is ``None``), keeping only those newer than ``after``;
        its events go to the handler oldest first. ``replay(handler, limit=n)``
        is the newest page; ``before=page.oldest_id`` the one above it.
        Everything stored is replayed, including what compaction hid from the
        model, so the user sees the conversation as it happened. Rewind rows
        are not events (they never reach the model) and are skipped like
        unreadable rows; a reader that marks them reads ``load_all``
        (``StoredMessage.rewind``). A turn's error row goes to ``errors`` when
        given (in its place among the events), else it is skipped too: the
        seed's handlers receive events only.
        """
        for name, value in (("before", before), ("after", after), ("limit", limit)):
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**63
            ):
                raise ValueError(f"replay's {name} must be a whole number from 0, not {value!r}")
        rows = await self.load_all(before_id=before, limit=limit)
        oldest = rows[0].id if rows else None
        newest = rows[-1].id if rows else None
        more = bool(rows) and limit is not None and len(rows) == limit
        replayed = 0
        for row in rows:
            if after is not None and row.id <= after:
                continue
            if row.turn_error is not None and errors is not None:
                await errors(row.turn_error)
                replayed += 1
                continue
            if row.event is None:
                continue
            result = handler(event=row.event)
            if inspect.isawaitable(result):
                await result
            replayed += 1
        return ReplayedPage(oldest, newest, more, replayed)

    async def tool_results(
        self, session_id: int | None = None, *, before_id: int | None = None
    ) -> list[StoredMessage]:
        """A session's rows holding tool results (older than ``before_id``), oldest first.

        Lets a UI list every tool call of a long session without reading
        all of its messages.
        """
        return await self._read_session_rows(
            session_id, lambda conn, sid: queries.fetch_tool_results(conn, sid, before_id)
        )

    async def compaction_summaries(self, session_id: int | None = None) -> list[SummaryRecord]:
        """Every readable compaction of a session (current by default), oldest first."""
        return await self._read_session_rows(session_id, queries.fetch_summaries)

    async def read_session(
        self, session_id: int, around_message_id: int | None = None, limit: int = 40
    ) -> SessionExcerpt:
        """Up to ``limit`` rows of a session, oldest first, centred on ``around_message_id``.

        Without ``around_message_id``: the newest ``limit`` rows. ``limit`` is
        clamped to 1..200. Raises ``SessionNotFoundError`` for an unknown
        session or one in the trash (``SessionInTrashError``: the recall
        tools treat it as gone) and ``ValueError`` for a message id that is
        not in it. Reads only the rows it returns (two index seeks), whatever
        the session's length.
        """
        limit = min(max(limit, 1), MAX_EXCERPT_ROWS)
        conn = self._connection()
        async with self._lock:
            if (unsaved := self._unsaved_info(session_id)) is not None:
                if around_message_id is not None:
                    raise ValueError(f"message {around_message_id} is not in session {session_id}.")
                return SessionExcerpt(unsaved, [], False, False)
            session = await self._live_session_info(conn, session_id)
            with translate_errors(self._path, StoreReadError):
                if around_message_id is not None:
                    owner = await queries.message_session_id(conn, around_message_id)
                    if owner != session_id:
                        raise ValueError(
                            f"message {around_message_id} is not in session {session_id}."
                        )
                rows, more_before, more_after = await queries.fetch_window(
                    conn, session_id, around_message_id, limit
                )
        return SessionExcerpt(session, rows, more_before, more_after)
