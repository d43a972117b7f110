"""The current session's context in memory: read once, then kept in step.

The model's context (the latest compaction and what follows it, as the
rewinds left it) is read from the file the first time a caller needs it and
then served from memory. Rows this manager writes are appended as they
commit; rows another process wrote are absorbed by ``catch_up`` (before each
request) and when a turn begins. Whenever memory and file could disagree, the
context is dropped and read again, exactly, on next use.
"""

from __future__ import annotations

import logging

import aiosqlite

from koroku_tui.store.context import SessionContext, load_context, read_rows_after
from koroku_tui.store.errors import StoreReadError, translate_errors
from koroku_tui.store.manager.core import StoreCore
from koroku_tui.store.records import StoredMessage

__all__ = ["ContextCacheMixin"]

logger = logging.getLogger(__name__)


class ContextCacheMixin(StoreCore):
    """The current session's context, read on first use and kept up to date."""

    @property
    def skipped_rows(self) -> list[tuple[int, str]]:
        """Unreadable rows left out of the current context: ``(row id, one-line reason)``.

        Known once the context has been read (``load_messages`` and friends).
        They stay in the database untouched; ``load_all`` returns them with
        ``event=None``.
        """
        return list(self._skipped)

    async def context_messages(self) -> list[StoredMessage]:
        """The same context as ``load_messages``, with row ids and timestamps."""
        return (await self._loaded_context()).messages.copy()

    async def reload(self) -> None:
        """Re-read the current session's context from the file."""
        conn = self._connection()
        async with self._lock:
            session_id = self.session_id
            with translate_errors(self._path, StoreReadError):
                context, skipped = await load_context(conn, session_id)
            self._set_current(session_id, context, skipped)

    async def catch_up(self) -> list[StoredMessage]:
        """Bring the context up to date with rows other processes wrote; return those rows.

        One indexed read when nothing changed. Called before each request, so
        a turn taken in another window is seen by the model (and, through the
        returned rows, by the user). A context not read yet has nothing to
        catch up: it will read everything on first use.
        """
        conn = self._connection()
        async with self._lock:
            found, self._caught_up = self._caught_up, []
            if self._context is None:
                return found
            session_id = self.session_id
            with translate_errors(self._path, StoreReadError):
                found += await self._absorb_foreign_rows(conn, session_id)
            return found

    async def _loaded_context(self) -> SessionContext:
        """The current session's context, read from the file the first time it is needed."""
        conn = self._connection()
        if self._context is None:
            async with self._lock:
                if self._context is None:
                    session_id = self.session_id
                    with translate_errors(self._path, StoreReadError):
                        context, skipped = await load_context(conn, session_id)
                    self._set_current(session_id, context, skipped)
        assert self._context is not None
        return self._context

    def _set_current(
        self, session_id: int, context: SessionContext | None, skipped: list[tuple[int, str]]
    ) -> None:
        self._session_id = session_id
        self._context = context
        self._skipped = skipped
        self._log_skipped(session_id, skipped)

    def _log_skipped(self, session_id: int, skipped: list[tuple[int, str]]) -> None:
        for row_id, reason in skipped:
            logger.warning(
                "%s: message %d of session %d left out of the context: %s",
                self._path,
                row_id,
                session_id,
                reason,
            )

    def _remember(self, stored: StoredMessage) -> None:
        """Add a row this manager wrote to the in-memory context (hold ``_lock``)."""
        # A context not read yet will find the row in the file when it is.
        if self._context is None:
            return
        self._context.own_ids.add(stored.id)
        if not self._context.append(stored):
            self._context = None  # read again, exactly, on next use

    async def _absorb_foreign_rows(
        self, conn: aiosqlite.Connection, session_id: int
    ) -> list[StoredMessage]:
        """Read rows above what this manager has seen into the context (hold ``_lock``)."""
        context = self._context
        if context is None:
            return []
        newest, rows = await read_rows_after(conn, session_id, context.seen_id, context.own_ids)
        readable, skipped, exact = context.absorb(rows, newest)
        if not exact:
            fresh, all_skipped = await load_context(conn, session_id)
            self._set_current(session_id, fresh, all_skipped)
        elif skipped:
            self._skipped += skipped
            self._log_skipped(session_id, skipped)
        return readable
