"""``SessionManager``: the crash-safe store of Koroku's conversations.

Nothing outside the store runs SQL: the UI and the agent get events and plain
records (``koroku_tui.store.records``) from here. Each ``add_message`` is one
transaction (the row, its session's counters and title, the search index)
committed before it returns, so a crash or SIGKILL loses at most the message
being written and never leaves half of one. (WAL with ``synchronous=NORMAL``:
a process crash loses nothing committed; a power cut may roll back the last
few commits, never corrupt the file.)

This module is the seed's facade: opening and closing, and the seed's own
methods (``db``, ``add_message``, ``load_messages``, ``delete``). The rest of
the API comes from the parts in ``koroku_tui.store.manager`` (its docstring
says which part does what, and why they are mixins).
"""

from __future__ import annotations

import asyncio
import logging
import os
import sqlite3
from contextlib import suppress
from pathlib import Path

import aiosqlite

from koroku_tui.events import Event
from koroku_tui.store import queries
from koroku_tui.store.errors import SessionInTrashError, SessionNotFoundError, StoreError
from koroku_tui.store.lifecycle import OpenedWithAsync
from koroku_tui.store.manager.at_exit import ExitGuard
from koroku_tui.store.manager.core import Unsaved, now
from koroku_tui.store.manager.file_history import FileHistoryMixin
from koroku_tui.store.manager.history_search import HistorySearchMixin
from koroku_tui.store.manager.memories import MemoriesMixin
from koroku_tui.store.manager.pages import PagesMixin
from koroku_tui.store.manager.rewind_fork import RewindForkMixin
from koroku_tui.store.manager.sessions import SessionsMixin
from koroku_tui.store.manager.turns import DEFAULT_LEASE_WAIT
from koroku_tui.store.manager.usage import UsageMixin
from koroku_tui.store.opening import (
    open_connection,
    prepare_database,
    read_only_uri,
    translate_open_errors,
)
from koroku_tui.store.records import StoredMessage
from koroku_tui.store.schema import MigrationProgress

__all__ = ["DEFAULT_BUSY_TIMEOUT_MS", "DEFAULT_LEASE_WAIT", "SessionManager"]

logger = logging.getLogger(__name__)

DEFAULT_BUSY_TIMEOUT_MS = 5000


class SessionManager(
    SessionsMixin,
    RewindForkMixin,
    FileHistoryMixin,
    HistorySearchMixin,
    PagesMixin,
    MemoriesMixin,
    UsageMixin,
    OpenedWithAsync,
):
    """Sessions and their messages in one SQLite file, with the model's context in memory.

    ``SessionManager(path)`` continues the session with the most recent
    activity (a new file starts one); ``SessionManager(path, session_id=n)``
    continues session ``n``. ``read_only=True`` opens the file of a read-only
    home for browsing: nothing is created or migrated, and a write raises
    ``StoreWriteError`` ("read-only"). The path is always given: the file ``koroku-tui``
    uses (``koroku.db`` in the Koroku home) is chosen by the settings, at the
    one assembly point above the store (``koroku_tui.modes.wiring``). Use
    ``await initialize()`` / ``await close()`` or ``async with``. Public methods
    raise only ``StoreError`` subclasses (plus ``ValueError``/``TypeError`` for
    bad arguments).
    """

    def __init__(
        self,
        db_path: str | os.PathLike[str],
        session_id: int | None = None,
        *,
        busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS,
        lease_wait: float = DEFAULT_LEASE_WAIT,
        read_only: bool = False,
    ) -> None:
        path = Path(db_path)
        super().__init__(path, session_id, busy_timeout_ms, lease_wait, read_only)
        # The seed's program never calls close(): this closes the store when
        # its loop or the interpreter ends first, so the program can exit.
        self._exit_guard = ExitGuard()

    # -- lifecycle -------------------------------------------------------

    async def initialize(self, *, progress: MigrationProgress | None = None) -> None:
        """Open (creating or migrating) the file and pick the current session.

        ``progress`` is told ``(done, total)`` from a worker thread while a
        long migration step runs (see ``upgrade_pending``).

        The session's context is read on first use (``load_messages``,
        ``add_message``...), so opening does not depend on its length.

        Safe to call concurrently and repeatedly: only the first call opens.
        Raises ``StoreOpenError`` (one line: the file, and what to do),
        ``SchemaTooNewError`` or ``SessionNotFoundError`` (``SessionInTrashError``
        for a requested session the user deleted).
        """
        if self._conn is not None:
            return
        async with self._init_lock:
            if self._conn is not None:
                return
            uri = None
            if self._read_only:
                uri = await asyncio.to_thread(read_only_uri, self._path, self._busy_timeout_ms)
            else:
                await asyncio.to_thread(
                    prepare_database, self._path, self._busy_timeout_ms, progress
                )
            conn = await open_connection(self._path, self._busy_timeout_ms, uri)
            try:
                with translate_open_errors(self._path, self._busy_timeout_ms):
                    session_id = await self._starting_session(conn)
            except BaseException:
                await conn.close()
                raise
            self._conn = conn
            self._set_current(session_id, None, [])
            await self._exit_guard.arm(conn, self.close)

    async def close(self) -> None:
        """Close the file, after any write in progress; a no-op when not open."""
        async with self._init_lock, self._lock:
            if self._conn is not None:
                with suppress(StoreError):
                    await self._leave_session(self._conn)
            conn, self._conn = self._conn, None
            self._session_id = None
            self._unsaved = None
            self._context = None
            if conn is not None:
                try:
                    await conn.close()
                except sqlite3.Error as exc:
                    logger.warning("closing %s: %s", self._path, exc)
                finally:
                    # Even a failed or cancelled close() has queued the worker's stop.
                    self._exit_guard.disarm()

    async def db(self) -> aiosqlite.Connection:
        """The open connection, as in the seed: ``conn = await store.db()``.

        Raises ``StoreNotInitializedError`` before ``initialize()`` and after
        ``close()``. Writing through it bypasses the store's lock and lease:
        it is there for inspection (PRAGMAs, tracing), not for changes.
        """
        return self._connection()

    async def _starting_session(self, conn: aiosqlite.Connection) -> int:
        # Raw queries here: initialize() turns their sqlite3 errors into StoreOpenError.
        if self._requested_session is not None:
            info = await queries.fetch_session(conn, self._requested_session)
            if info is None:
                raise SessionNotFoundError(self._path, self._requested_session)
            if info.trashed_at is not None:
                raise SessionInTrashError(self._path, self._requested_session)
            return self._requested_session
        found = await queries.most_recent_session_id(conn)
        if found is not None:
            return found
        when = now()
        if self._read_only:  # nothing to show; an id no window can take from it
            self._unsaved = Unsaved(None, when)
            return await queries.next_session_id(conn)
        await conn.execute("BEGIN IMMEDIATE")
        try:
            session_id = await queries.reserve_session_id(conn, when)
            await conn.execute("COMMIT")
        except BaseException:
            with suppress(sqlite3.Error):
                await conn.execute("ROLLBACK")
            raise
        self._unsaved = Unsaved(None, when)
        return session_id

    # -- the seed's conversation ---------------------------------------------

    async def load_messages(self) -> list[Event]:
        """The model's context: the latest compaction first, then what follows it.

        Served from memory, never from the file (a new list each call; the
        events are shared and must not be mutated). ``reload()`` re-reads what
        another process wrote to this session.
        """
        return (await self._loaded_context()).events.copy()

    async def add_message(self, event: Event, created_at: float | None = None) -> int:
        """Store ``event`` in the current session and return its row id.

        One transaction: the row, the session's counters, updated time and
        title, and the search index; committed before returning. The event is
        appended to the in-memory context (a ``CompactionEvent`` restarts it).
        If the caller is cancelled meanwhile, the write still completes, so the
        file and the context never disagree.
        """
        if not isinstance(event, Event):
            raise TypeError(f"expected an event of koroku_tui.events, got {type(event)!r}")
        conn = self._connection()
        when = now() if created_at is None else float(created_at)
        return await self._shielded(self._insert(conn, event, when))

    async def _insert(self, conn: aiosqlite.Connection, event: Event, when: float) -> int:
        async with self._lock:
            session_id = self.session_id
            async with self._transaction(conn):
                await self._store_unsaved(conn, session_id, when)
                await self._check_writable(conn, session_id, when)
                message_id = await queries.insert_message(conn, session_id, event, when)
            self._unsaved = None
            self._remember(StoredMessage(message_id, session_id, event.event_type, when, event))
            return message_id

    async def delete(self) -> None:
        """The seed's "clear": move the current session to the trash and start a fresh one.

        Unlike the seed, nothing is removed: the session waits in the trash
        (``restore_session`` brings it back; only ``empty_trash`` removes it
        for good), other sessions are untouched, and the fresh session gets a
        new id (ids are never reused).
        """
        await self.delete_session(self.session_id)
