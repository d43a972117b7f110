"""``SessionManager``: the crash-safe store of Koroku's conversations.

Nothing outside the store runs SQL: the UI and the agent get events and plain
records (``koroku_tui.store.records``) from here. Each ``add_message`` is one
transaction (the row, its session's counters and title, the search index)
committed before it returns, so a crash or SIGKILL loses at most the message
being written and never leaves half of one. (WAL with ``synchronous=NORMAL``:
a process crash loses nothing committed; a power cut may roll back the last
few commits, never corrupt the file.)
"""

from __future__ import annotations

import asyncio
import logging
import os
import sqlite3
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

import aiosqlite

from koroku_tui.events import Event, RewindEvent, TurnErrorEvent
from koroku_tui.events.turns import in_spans
from koroku_tui.store import branching, queries
from koroku_tui.store.context import SessionContext, load_context, read_rows_after
from koroku_tui.store.errors import (
    SessionBusyError,
    SessionNotFoundError,
    StoreError,
    StoreNotInitializedError,
    StoreReadError,
    StoreWriteError,
    translate_errors,
)
from koroku_tui.store.lease import (
    Holder,
    holder_is_alive,
    read_lease,
    release_lease,
    renew_lease,
    take_lease,
)
from koroku_tui.store.lifecycle import OpenedWithAsync
from koroku_tui.store.opening import open_connection, prepare_database, translate_open_errors
from koroku_tui.store.records import (
    SearchHit,
    SearchPage,
    SessionExcerpt,
    SessionInfo,
    StoredMessage,
    SummaryRecord,
)
from koroku_tui.store.replay import ReplayedPage, ReplayHandler, replay
from koroku_tui.store.schema import MigrationProgress
from koroku_tui.store.search import (
    SearchQuery,
    build_match_query,
    count_matches,
    originals_of_copies,
    ranked_hits,
    trim_snippet,
)

__all__ = ["DEFAULT_BUSY_TIMEOUT_MS", "DEFAULT_LEASE_WAIT", "SessionManager"]

logger = logging.getLogger(__name__)

DEFAULT_BUSY_TIMEOUT_MS = 5000
DEFAULT_LEASE_WAIT = 3.0
"""Seconds a turn waits for another process's turn on the same session to end."""
_LEASE_POLL = (0.02, 0.25)
"""First and longest pause between looks at a busy session's lease."""

_T = TypeVar("_T")

MAX_HISTORY_HITS = 50
"""The most hits ``search_history`` returns at once."""
MAX_EXCERPT_ROWS = 200
"""The most rows ``read_session`` returns at once."""
SNIPPET_TOKENS = 64
"""FTS5's limit; the snippet is then cut to ``SNIPPET_CHARS`` around the match."""
SNIPPET_CHARS = 300
LIST_SNIPPET_TOKENS = 12
"""Tokens around a match in the history screen's one-line results."""


def _clean_title(title: str | None) -> str | None:
    if title is None:
        return None
    return " ".join(title.split()) or None


class SessionManager(OpenedWithAsync):
    """Sessions and their messages in one SQLite file, with the model's context in memory.

    ``SessionManager(path)`` continues the session with the most recent
    activity (a new file starts one); ``SessionManager(path, session_id=n)``
    continues session ``n``. The path is always given: the file ``koroku-tui``
    uses (``koroku.db`` in the Koroku home) is chosen by the settings, at the
    one assembly point above the store. Use ``await initialize()`` /
    ``await close()`` or ``async with``. Public methods raise only ``StoreError`` subclasses (plus
    ``ValueError``/``TypeError`` for bad arguments).
    """

    def __init__(
        self,
        db_path: str | os.PathLike[str],
        session_id: int | None = None,
        *,
        busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS,
        lease_wait: float = DEFAULT_LEASE_WAIT,
    ) -> None:
        self._path = Path(db_path)
        self._lease_wait = lease_wait
        self._holder = Holder.for_this_process()
        self._leased: int | None = None
        """The session whose lease this manager holds (a turn runs on it)."""
        self._caught_up: list[StoredMessage] = []
        """Other processes' rows found while starting a turn, not yet handed out."""
        self._requested_session = session_id
        self._busy_timeout_ms = busy_timeout_ms
        self._conn: aiosqlite.Connection | None = None
        self._init_lock = asyncio.Lock()
        # Guards the single connection: SQLite transactions cannot nest,
        # switching sessions must not interleave with an insert, and a read
        # must not see another task's write before it commits (same connection).
        self._lock = asyncio.Lock()
        self._session_id: int | None = None
        self._unsaved: _Unsaved | None = None
        """Set while the current session has no row: it is stored with its first message."""
        # None: not read yet. The context is read on first use, so opening the
        # file costs the same whatever the session's length (the TUI shows the
        # tail of the history before the agent asks for the whole context).
        self._context: SessionContext | None = None
        self._skipped: list[tuple[int, str]] = []

    # -- lifecycle -------------------------------------------------------

    @property
    def path(self) -> Path:
        """The database file."""
        return self._path

    async def initialize(self, *, progress: MigrationProgress | None = None) -> None:
        """Open (creating or migrating) the file and pick the current session.

        ``progress`` is told ``(done, total)`` from a worker thread while a
        long migration step runs (see ``upgrade_pending``).

        The session's context is read on first use (``load_messages``,
        ``add_message``...), so opening does not depend on its length.

        Safe to call concurrently and repeatedly: only the first call opens.
        Raises ``StoreOpenError`` (one line: the file, and what to do),
        ``SchemaTooNewError`` or ``SessionNotFoundError``.
        """
        if self._conn is not None:
            return
        async with self._init_lock:
            if self._conn is not None:
                return
            await asyncio.to_thread(prepare_database, self._path, self._busy_timeout_ms, progress)
            conn = await open_connection(self._path, self._busy_timeout_ms)
            try:
                with translate_open_errors(self._path, self._busy_timeout_ms):
                    session_id = await self._starting_session(conn)
            except BaseException:
                await conn.close()
                raise
            self._conn = conn
            self._set_current(session_id, None, [])

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

    async def db(self) -> aiosqlite.Connection:
        """The open connection, as in the seed: ``conn = await store.db()``.

        Raises ``StoreNotInitializedError`` before ``initialize()`` and after
        ``close()``. Writing through it bypasses the store's lock and lease:
        it is there for inspection (PRAGMAs, tracing), not for changes.
        """
        return self._connection()

    def _connection(self) -> aiosqlite.Connection:
        if self._conn is None:
            raise StoreNotInitializedError()
        return self._conn

    @property
    def session_id(self) -> int:
        """The id of the current session (reserved, not stored, until its first message)."""
        if self._session_id is None:
            raise StoreNotInitializedError()
        return self._session_id

    @property
    def session_saved(self) -> bool:
        """False while the current session is new: no row until its first message is stored.

        A new session's id is reserved (no other process can get it) but the
        session list, ``get_session`` and ``fork`` do not know it yet.
        """
        return self._unsaved is None

    async def current_session(self) -> SessionInfo:
        """The current session's summary (a new one reads as empty, untitled unless named)."""
        return await self.get_session(self.session_id)

    def _unsaved_info(self, session_id: int) -> SessionInfo | None:
        """The summary of ``session_id`` if it is the new current session, not stored yet."""
        unsaved = self._unsaved
        if unsaved is None or session_id != self._session_id:
            return None
        return SessionInfo(session_id, unsaved.title, unsaved.since, unsaved.since, 0, 0)

    @property
    def skipped_rows(self) -> list[tuple[int, str]]:
        """Unreadable rows left out of the current context: ``(row id, one-line reason)``.

        Known once the context has been read (``load_messages`` and friends).
        They stay in the database untouched; ``load_all`` returns them with
        ``event=None``.
        """
        return list(self._skipped)

    # -- the model's context ---------------------------------------------

    async def load_messages(self) -> list[Event]:
        """The model's context: the latest compaction first, then what follows it.

        Served from memory, never from the file (a new list each call; the
        events are shared and must not be mutated). ``reload()`` re-reads what
        another process wrote to this session.
        """
        return (await self._loaded_context()).events.copy()

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
        when = time.time() if created_at is None else float(created_at)
        return await self._shielded(self._insert(conn, event, when))

    async def _insert(self, conn: aiosqlite.Connection, event: Event, when: float) -> int:
        async with self._lock:
            session_id = self.session_id
            async with self._transaction(conn):
                await self._store_unsaved(conn, session_id, when)
                await self._check_lease(conn, session_id, when)
                message_id = await queries.insert_message(conn, session_id, event, when)
            self._unsaved = None
            self._remember(StoredMessage(message_id, session_id, event.event_type, when, event))
            return message_id

    async def add_turn_error(self, error: TurnErrorEvent) -> int:
        """Store why a turn ended in an error, as a row the model never sees; return its id.

        Written under the session's lease like a message (``SessionBusyError``
        when another live process holds it); no search entry, no title, and
        the model's context is untouched (readers show it, loaders skip it).
        """
        conn = self._connection()
        return await self._shielded(self._insert_turn_error(conn, error, time.time()))

    async def _insert_turn_error(
        self, conn: aiosqlite.Connection, error: TurnErrorEvent, when: float
    ) -> int:
        async with self._lock:
            session_id = self.session_id
            async with self._transaction(conn):
                # Any row makes a session exist (its message was refused, say).
                await self._store_unsaved(conn, session_id, when)
                await self._check_lease(conn, session_id, when)
                row_id = await branching.insert_turn_error(conn, session_id, error, when)
            self._unsaved = None
            if self._context is not None:
                self._context.own_ids.add(row_id)  # ours: catching up must not show it again
            return row_id

    async def add_messages(
        self, events: Sequence[Event], created_at: Sequence[float] | None = None
    ) -> list[int]:
        """Store many events in the current session in ONE transaction; return their ids.

        For imports and benchmarks: ``add_message`` for each, without a
        commit per row. ``created_at`` gives each event's time (default now).
        """
        if not all(isinstance(event, Event) for event in events):
            raise TypeError("expected events of koroku_tui.events")
        if created_at is not None and len(created_at) != len(events):
            raise ValueError(f"{len(created_at)} times given for {len(events)} events")
        now = time.time()
        times = [now] * len(events) if created_at is None else [float(t) for t in created_at]
        conn = self._connection()
        return await self._shielded(self._insert_many(conn, events, times))

    async def _insert_many(
        self, conn: aiosqlite.Connection, events: Sequence[Event], times: list[float]
    ) -> list[int]:
        async with self._lock:
            session_id = self.session_id
            stored: list[StoredMessage] = []
            async with self._transaction(conn):
                if stored_any := bool(events):
                    await self._store_unsaved(conn, session_id, min(times))
                await self._check_lease(conn, session_id, max(times, default=0.0))
                for event, when in zip(events, times, strict=True):
                    row_id = await queries.insert_message(conn, session_id, event, when)
                    stored.append(StoredMessage(row_id, session_id, event.event_type, when, event))
            if stored_any:
                self._unsaved = None
            for message in stored:
                self._remember(message)
            return [message.id for message in stored]

    def _remember(self, stored: StoredMessage) -> None:
        """Add a row this manager wrote to the in-memory context (hold ``_lock``)."""
        # A context not read yet will find the row in the file when it is.
        if self._context is None:
            return
        self._context.own_ids.add(stored.id)
        if not self._context.append(stored):
            self._context = None  # read again, exactly, on next use

    # -- one writer per session -------------------------------------------

    @property
    def holds_turn(self) -> bool:
        """Whether this manager holds the current session's lease (a turn runs here)."""
        return self._leased is not None and self._leased == self._session_id

    async def begin_turn(self, event: Event | None = None) -> int | None:
        """Take the current session's lease and store ``event`` in the same transaction.

        While another process runs a turn on the session, waits up to
        ``lease_wait`` seconds for it to end, then raises ``SessionBusyError``
        having written nothing. A lease whose holder died is taken over. Rows
        other processes wrote meanwhile are read first, so ``event`` follows
        them in the context (``catch_up`` hands them out). Returns the row id
        of ``event``, if one was given.
        """
        conn = self._connection()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._lease_wait
        pause = _LEASE_POLL[0]
        while True:
            busy = await self._shielded(self._try_begin(conn, event))
            if isinstance(busy, SessionBusyError):
                if loop.time() + pause > deadline:
                    raise busy
                await asyncio.sleep(pause)
                pause = min(pause * 2, _LEASE_POLL[1])
                continue
            return busy

    async def _try_begin(
        self, conn: aiosqlite.Connection, event: Event | None
    ) -> int | SessionBusyError | None:
        await self._loaded_context()
        async with self._lock:
            session_id = self.session_id
            when = time.time()
            if self._unsaved is not None and event is None:
                # Nobody else can know a reserved id, so nobody can write to
                # it: the lease row is taken with the session's first message.
                self._leased = session_id
                return None
            async with self._transaction(conn):
                if self._unsaved is not None:
                    await self._store_unsaved(conn, session_id, when)
                else:
                    # Deleted in another window: say so, rather than the foreign
                    # key failure the lease or the message would hit.
                    await self._require_session(conn, session_id)
                lease = await read_lease(conn, session_id)
                if (
                    lease is not None
                    and lease.holder.token != self._holder.token
                    and holder_is_alive(lease, self._holder, when)
                ):
                    return SessionBusyError(session_id, lease.holder.pid)
                await take_lease(conn, session_id, self._holder, when)
                self._caught_up += await self._absorb_foreign_rows(conn, session_id)
                message_id = None
                if event is not None:
                    message_id = await queries.insert_message(conn, session_id, event, when)
            self._unsaved = None
            self._leased = session_id
            if event is not None and message_id is not None:
                self._remember(StoredMessage(message_id, session_id, event.event_type, when, event))
            return message_id

    async def end_turn(self) -> None:
        """Give the current session's lease back (a no-op if this manager does not hold it)."""
        if self._leased is None or self._conn is None:
            return
        conn = self._conn

        async def release() -> None:
            async with self._lock:
                await self._release(conn)

        await self._shielded(release())

    async def _leave_session(self, conn: aiosqlite.Connection) -> None:
        """Before the current session changes: give its lease, or its unused id, back.

        Hold ``_lock``. An id given back is handed out again only if no later
        one was, so ids stay in step with what was stored. Should the id be
        taken again before this manager stores under it (a failed switch), its
        first message fails on the existing row: it never joins another session.
        """
        self._caught_up = []
        await self._release(conn)
        if self._unsaved is not None:
            async with self._transaction(conn):
                await self._give_back_unsaved(conn)

    async def _give_back_unsaved(self, conn: aiosqlite.Connection) -> None:
        """Give back the current id if no session was stored under it (in a transaction)."""
        if self._unsaved is not None and self._session_id is not None:
            await queries.return_session_id(conn, self._session_id)

    async def _release(self, conn: aiosqlite.Connection) -> None:
        """Delete our lease row, if any (hold ``_lock``)."""
        leased, self._leased = self._leased, None
        if leased is None:
            return
        async with self._transaction(conn):
            await release_lease(conn, leased, self._holder)

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

    async def _absorb_foreign_rows(
        self, conn: aiosqlite.Connection, session_id: int
    ) -> list[StoredMessage]:
        """Read rows above what this manager has seen into the context (hold ``_lock``)."""
        context = self._context
        if context is None:
            return []
        rows = await read_rows_after(conn, session_id, context.seen_id)
        readable, skipped, exact = context.absorb(rows)
        if not exact:
            fresh, all_skipped = await load_context(conn, session_id)
            self._set_current(session_id, fresh, all_skipped)
        elif skipped:
            self._skipped += skipped
            self._log_skipped(session_id, skipped)
        return readable

    async def _store_unsaved(
        self, conn: aiosqlite.Connection, session_id: int, when: float
    ) -> None:
        """Insert the new current session's row before its first message (in that transaction).

        Hold ``_lock``; the caller clears ``_unsaved`` once the transaction commits.
        """
        unsaved = self._unsaved
        if unsaved is None:
            return
        await queries.insert_session_as(conn, session_id, unsaved.title, when)
        if self._leased == session_id:  # a turn began before the first message
            await take_lease(conn, session_id, self._holder, when)

    async def _check_lease(self, conn: aiosqlite.Connection, session_id: int, when: float) -> None:
        """Refuse a write while another live process holds the session (in a transaction)."""
        lease = await read_lease(conn, session_id)
        if lease is None:
            return
        if lease.holder.token == self._holder.token:
            await renew_lease(conn, session_id, self._holder, when)
        elif holder_is_alive(lease, self._holder, when):
            raise SessionBusyError(session_id, lease.holder.pid)

    # -- sessions --------------------------------------------------------

    async def new_session(self, title: str | None = None) -> SessionInfo:
        """Start a new session, make it current, and return it.

        Its id is reserved at once, but it is stored with its first message:
        a session left without one never reaches the list (``session_saved``).
        """
        conn = self._connection()
        async with self._lock:
            self._caught_up = []
            await self._release(conn)
            # One transaction: were the id given back and the next reservation
            # to fail, this manager would hold an id another could reserve.
            async with self._transaction(conn):
                await self._give_back_unsaved(conn)
                session_id = await queries.reserve_session_id(conn, time.time())
            self._set_current(session_id, SessionContext(), [])
            self._unsaved = _Unsaved(_clean_title(title), time.time())
        return await self.current_session()

    async def switch_session(self, session_id: int) -> SessionInfo:
        """Make ``session_id`` current (its context is read on first use)."""
        conn = self._connection()
        async with self._lock:
            info = await self._session_info(conn, session_id)
            await self._leave_session(conn)
            self._set_current(session_id, None, [])
            self._unsaved = None
        return info

    async def rename_session(self, session_id: int, title: str | None) -> SessionInfo:
        """Set a session's title; ``None`` or blank goes back to the derived title.

        An explicit title is kept for good: later messages never replace it.
        A rename is not activity: the session keeps its place in the list.
        """
        conn = self._connection()
        clean = _clean_title(title)
        unsaved = self._unsaved
        if session_id == self._session_id and unsaved is not None:
            self._unsaved = replace(unsaved, title=clean)  # stored with the first message
            return await self.current_session()
        async with self._lock, self._transaction(conn):
            await self._require_session(conn, session_id)
            if clean is None:
                clean = await queries.first_user_title(conn, session_id)
            await conn.execute("UPDATE sessions SET title = ? WHERE id = ?", (clean, session_id))
        return await self.get_session(session_id)

    async def delete_session(self, session_id: int) -> None:
        """Delete a session and all its messages; deleting the current one starts a fresh one."""
        conn = self._connection()
        async with self._lock:
            if session_id == self._session_id and self._unsaved is not None:
                return  # not stored: nothing to delete, and already fresh
            replacement: int | None = None
            async with self._transaction(conn):
                await self._require_session(conn, session_id)
                # Deleting a conversation another window is writing would pull
                # the rows from under its turn.
                await self._check_lease(conn, session_id, time.time())
                await branching.index_copies_of(conn, session_id)
                await queries.delete_session_rows(conn, session_id)
                if session_id == self._session_id:
                    replacement = await queries.reserve_session_id(conn, time.time())
            if replacement is not None:
                self._leased = None  # its lease row went with the session
                self._caught_up = []
                self._set_current(replacement, SessionContext(), [])
                self._unsaved = _Unsaved(None, time.time())

    async def delete(self) -> None:
        """The seed's "clear": delete the current session (messages and row), start a fresh one.

        Unlike the seed, other sessions are untouched, and the fresh session
        gets a new id (ids are never reused).
        """
        await self.delete_session(self.session_id)

    async def get_session(self, session_id: int) -> SessionInfo:
        """One session's summary; raises ``SessionNotFoundError`` if it does not exist.

        The new current session exists (empty) before it is stored.
        """
        conn = self._connection()
        async with self._lock:
            if (unsaved := self._unsaved_info(session_id)) is not None:
                return unsaved
            return await self._session_info(conn, session_id)

    async def list_sessions(self, limit: int = 50, offset: int = 0) -> list[SessionInfo]:
        """Sessions, most recent activity first, a page at a time (no message is read)."""
        if limit < 0 or offset < 0:
            raise ValueError("limit and offset must not be negative")
        conn = self._connection()
        async with self._lock:
            with translate_errors(self._path, StoreReadError):
                return await queries.fetch_sessions(conn, limit, offset)

    # -- history for browsing --------------------------------------------

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
        """Hand one page of stored events to ``handler(event=...)``; see :func:`replay.replay`.

        ``replay(handler, limit=n)`` is the newest page; ``before=page.oldest_id``
        the one above it.
        """
        return await replay(self, handler, before=before, after=after, limit=limit, errors=errors)

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

    async def search(
        self, query: str, limit: int = 50, *, session_id: int | None = None
    ) -> list[SearchHit]:
        """Messages and summaries matching ``query`` across all sessions (or one).

        The same matching and ranking as ``search_history`` (any meaningful
        word, stems, phrases, bm25 with recent rows a little higher), with
        nothing excluded and the last word matched as a prefix while the user
        types. Any input is safe; nothing searchable returns ``[]``.
        """
        match = build_match_query(query, prefix_last=True)
        if match is None or limit <= 0:
            return []
        conn = self._connection()
        async with self._lock:
            with translate_errors(self._path, StoreReadError):
                return await ranked_hits(
                    conn,
                    SearchQuery(match, session_id=session_id),
                    limit,
                    snippet_tokens=LIST_SNIPPET_TOKENS,
                )

    async def search_page(self, query: str, limit: int = 100) -> SearchPage:
        """``search`` across all sessions, with how many rows matched in all.

        The rows are counted only when the hits fill ``limit`` (else ``total``
        is their number): a list of the best hits can say it shows a part.
        """
        hits = await self.search(query, limit)
        total = len(hits)
        if hits and total >= limit:
            match = build_match_query(query, prefix_last=True)
            assert match is not None  # there are hits
            conn = self._connection()
            async with self._lock:
                with translate_errors(self._path, StoreReadError):
                    total, _ = await count_matches(conn, SearchQuery(match))
        return SearchPage(hits=hits, total=max(total, len(hits)))

    async def search_history(self, query: str, limit: int = 10) -> SearchPage:
        """Every session's messages and summaries matching ``query``, best first.

        What the model already sees (the rows of the current session's
        context) is left out; rows a compaction or a rewind took out of it
        are past and found. Natural language works: a hit needs any meaningful word of
        the query (ranked by how many and how rare, recent ones a little
        higher); words match on their stems; quotes keep a phrase; any input
        is safe. ``limit`` is clamped to 1..50; ``total`` counts every match
        outside the context. Snippets are about 300 characters.
        """
        limit = min(max(limit, 1), MAX_HISTORY_HITS)
        match = build_match_query(query)
        if match is None:
            return SearchPage(hits=[], total=0)
        context = await self._loaded_context()
        conn = self._connection()
        async with self._lock:
            # Exactly the rows the model sees: after a rewind that is not "every
            # row from the floor on" (an abandoned branch is past, searchable).
            seen = {m.id for m in context.messages}
            with translate_errors(self._path, StoreReadError):
                # In a fork, the source rows its context copies are seen too.
                times = {m.created_at for m in context.messages}
                seen |= await originals_of_copies(conn, match, self.session_id, times)
                search = SearchQuery(match, exclude_ids=frozenset(seen))
                total, in_context = await count_matches(conn, search)
                hits = await ranked_hits(
                    conn, search, limit, snippet_tokens=SNIPPET_TOKENS, skip=in_context
                )
        hits = [replace(hit, snippet=trim_snippet(hit.snippet, SNIPPET_CHARS)) for hit in hits]
        return SearchPage(hits=hits, total=total - in_context)

    async def read_session(
        self, session_id: int, around_message_id: int | None = None, limit: int = 40
    ) -> SessionExcerpt:
        """Up to ``limit`` rows of a session, oldest first, centred on ``around_message_id``.

        Without ``around_message_id``: the newest ``limit`` rows. ``limit`` is
        clamped to 1..200. Raises ``SessionNotFoundError`` for an unknown
        session and ``ValueError`` for a message id that is not in it. Reads
        only the rows it returns (two index seeks), whatever the session's length.
        """
        limit = min(max(limit, 1), MAX_EXCERPT_ROWS)
        conn = self._connection()
        async with self._lock:
            if (unsaved := self._unsaved_info(session_id)) is not None:
                if around_message_id is not None:
                    raise ValueError(f"message {around_message_id} is not in session {session_id}.")
                return SessionExcerpt(unsaved, [], False, False)
            session = await self._session_info(conn, session_id)
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

    # -- rewind and fork -------------------------------------------------

    async def rewind(self, before_message_id: int) -> StoredMessage:
        """Take the current session back to just before user message M; return M's row.

        Nothing is deleted: a rewind row is stored (under the session's lease,
        as ``add_message``), after which the model's context is the one it had
        before M (``turns.view_before``); the rows from M on stay in the
        session, abandoned (``abandoned_spans``). M must be a message the user
        typed, on the session's current line; otherwise ``ValueError`` (one
        sentence) and nothing is written. The caller then calls
        ``Agent.refresh()`` and may put M's text back in the prompt.
        """
        message_id = _message_id(before_message_id)
        conn = self._connection()
        return await self._shielded(self._rewind(conn, message_id))

    async def _rewind(self, conn: aiosqlite.Connection, message_id: int) -> StoredMessage:
        async with self._lock:
            session_id = self.session_id
            when = time.time()
            async with self._transaction(conn):
                target = await self._user_turn(conn, session_id, message_id)
                if in_spans(message_id, await branching.fetch_abandoned_spans(conn, session_id)):
                    raise ValueError(
                        f"Message {message_id} was already taken back by an earlier rewind; "
                        "fork at it to continue from there."
                    )
                await self._check_lease(conn, session_id, when)
                rewind = RewindEvent(before_message_id=message_id)
                await branching.insert_rewind(conn, session_id, rewind, when)
            # The context goes back: read it again, exactly, on next use.
            self._context = None
            return target

    async def fork(self, session_id: int, before_message_id: int | None = None) -> SessionInfo:
        """A new session starting with copies of ``session_id``'s context before message M.

        Without M, the whole current context is copied. M must be a message
        the user typed in that session (one on an abandoned branch too: the
        fork then continues that branch). Copies keep their JSON (thought
        signatures included) and timestamps, with new ids; a copied summary
        leads the fork and keeps everything after it. One transaction, rows
        copied in SQL. The fork is titled "<title> (fork)" and records its
        source (``forked_from_session``/``forked_from_message``); it is not
        made current (``switch_session`` then ``Agent.refresh()``). Raises
        ``SessionNotFoundError`` or ``ValueError`` (one sentence), writing nothing.
        """
        source_id = _message_id(session_id, what="session")
        message_id = None if before_message_id is None else _message_id(before_message_id)
        conn = self._connection()
        return await self._shielded(self._fork(conn, source_id, message_id))

    async def _fork(
        self, conn: aiosqlite.Connection, source_id: int, message_id: int | None
    ) -> SessionInfo:
        async with self._lock:
            if source_id == self._session_id and self._unsaved is not None:
                raise ValueError("There is nothing to fork yet: this session has no messages.")
            async with self._transaction(conn):
                source = await self._session_info(conn, source_id)
                if message_id is not None:
                    await self._user_turn(conn, source_id, message_id)
                title = _clean_title(f"{source.display_title} (fork)")
                fork_id = await branching.copy_context(
                    conn, source_id, message_id, title, time.time()
                )
            return await self._session_info(conn, fork_id)

    async def user_turns(
        self, session_id: int | None = None, *, limit: int = 500
    ) -> list[StoredMessage]:
        """The messages the user typed on a session's current line, newest first.

        Messages a rewind abandoned are left out; those a compaction hid are
        not (a rewind may go back past a summary). The candidates to rewind to.
        """
        if limit < 0:
            raise ValueError("limit must not be negative")
        return await self._read_session_rows(
            session_id, lambda conn, sid: branching.fetch_user_turns(conn, sid, limit)
        )

    async def abandoned_spans(self, session_id: int | None = None) -> list[tuple[int, int]]:
        """Inclusive ``(first, last)`` row-id spans rewinds took out of the model's line.

        In id order, merged. The rows stay stored; a history view marks them.
        """
        return await self._read_session_rows(session_id, branching.fetch_abandoned_spans)

    async def _read_session_rows(
        self,
        session_id: int | None,
        fetch: Callable[[aiosqlite.Connection, int], Awaitable[_T]],
    ) -> _T:
        """``fetch(conn, sid)`` for a session (the current one by default) that must exist."""
        conn = self._connection()
        async with self._lock:
            sid = self.session_id if session_id is None else session_id
            # The new current session has no row yet, and no rows to fetch.
            if sid != self._session_id or self._unsaved is None:
                await self._require_session(conn, sid)
            with translate_errors(self._path, StoreReadError):
                return await fetch(conn, sid)

    async def _user_turn(
        self, conn: aiosqlite.Connection, session_id: int, message_id: int
    ) -> StoredMessage:
        """Row ``message_id`` if the user typed it in ``session_id``, else ``ValueError``."""
        with translate_errors(self._path, StoreReadError):
            message = await branching.fetch_message(conn, message_id)
        if message is None or message.session_id != session_id:
            raise ValueError(f"Message {message_id} is not in session {session_id}.")
        if not branching.is_user_turn(message):
            raise ValueError(
                f"Message {message_id} is not a message the user typed "
                "(only those can be rewound to or forked at)."
            )
        return message

    # -- internals -------------------------------------------------------

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

    async def _shielded(self, work: Awaitable[_T]) -> _T:
        task = asyncio.ensure_future(work)
        # If our caller is cancelled, the task still finishes; fetch its
        # outcome so a late failure is logged rather than "never retrieved".
        task.add_done_callback(_log_orphan_failure)
        return await asyncio.shield(task)

    async def _starting_session(self, conn: aiosqlite.Connection) -> int:
        # Raw queries here: initialize() turns their sqlite3 errors into StoreOpenError.
        if self._requested_session is not None:
            if not await queries.session_exists(conn, self._requested_session):
                raise SessionNotFoundError(self._path, self._requested_session)
            return self._requested_session
        found = await queries.most_recent_session_id(conn)
        if found is not None:
            return found
        now = time.time()
        await conn.execute("BEGIN IMMEDIATE")
        try:
            session_id = await queries.reserve_session_id(conn, now)
            await conn.execute("COMMIT")
        except BaseException:
            with suppress(sqlite3.Error):
                await conn.execute("ROLLBACK")
            raise
        self._unsaved = _Unsaved(None, now)
        return session_id

    async def _session_info(self, conn: aiosqlite.Connection, session_id: int) -> SessionInfo:
        with translate_errors(self._path, StoreReadError):
            info = await queries.fetch_session(conn, session_id)
        if info is None:
            raise SessionNotFoundError(self._path, session_id)
        return info

    async def _require_session(self, conn: aiosqlite.Connection, session_id: int) -> None:
        with translate_errors(self._path, StoreReadError):
            exists = await queries.session_exists(conn, session_id)
        if not exists:
            raise SessionNotFoundError(self._path, session_id)

    @asynccontextmanager
    async def _transaction(self, conn: aiosqlite.Connection) -> AsyncIterator[None]:
        """``BEGIN IMMEDIATE`` ... ``COMMIT``, rolled back on any error; hold ``_lock``."""
        with translate_errors(self._path, StoreWriteError):
            await conn.execute("BEGIN IMMEDIATE")
            try:
                yield
                await conn.execute("COMMIT")
            except BaseException:
                # SQLite may have ended the transaction itself (disk full).
                with suppress(sqlite3.Error):
                    await conn.execute("ROLLBACK")
                raise


@dataclass(frozen=True, slots=True)
class _Unsaved:
    """A new current session waiting for its first message to be stored."""

    title: str | None
    since: float


def _message_id(value: object, what: str = "message") -> int:
    """``value`` as a row id, or a one-sentence ``ValueError``."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value < 2**63:
        raise ValueError(f"A {what} id is a whole number from 1, not {value!r}.")
    return value


def _log_orphan_failure(task: asyncio.Future[Any]) -> None:
    if not task.cancelled() and task.exception() is not None:
        logger.debug("store write finished with an error: %r", task.exception())
