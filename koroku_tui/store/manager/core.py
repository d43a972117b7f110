"""The state every part of ``SessionManager`` shares, and the helpers around it.

One connection, one lock guarding it, the current session (reserved or
stored) and its context in memory. Every other part of the manager is a mixin
over ``StoreCore`` and reaches that state through the helpers here: the
connection (or ``StoreNotInitializedError``), transactions, writes that finish
even if their caller is cancelled, and session lookups that raise the store's
errors.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, TypeVar

import aiosqlite

from koroku_tui.store import queries
from koroku_tui.store.context import SessionContext
from koroku_tui.store.errors import (
    SessionInTrashError,
    SessionNotFoundError,
    StoreNotInitializedError,
    StoreReadError,
    StoreWriteError,
    translate_errors,
)
from koroku_tui.store.lease import Holder
from koroku_tui.store.records import SessionInfo, StoredMessage

if TYPE_CHECKING:  # numpy: loaded with the first vector, after the app's first frame
    from koroku_tui.store.vector_index import Vector, VectorIndex

__all__ = ["QueryVectors", "StoreCore", "Unsaved", "VectorSide", "clean_title", "now"]

logger = logging.getLogger(__name__)

_T = TypeVar("_T")


def now() -> float:
    """The store's clock: what new rows, sessions and leases are stamped with.

    One function, so every part of the manager reads the same clock (a test
    stands in for this module's ``time``).
    """
    return time.time()


def clean_title(title: str | None) -> str | None:
    """A title on one line with single spaces; blank is ``None`` (the derived title)."""
    if title is None:
        return None
    return " ".join(title.split()) or None


class QueryVectors(Protocol):
    """Turns a search's words into a vector: the run's embedder, which the store does not know."""

    @property
    def embedder(self) -> str:
        """The embedder's id: which vectors of the file compare with its own."""

    @property
    def dims(self) -> int:
        """The length of its vectors."""

    async def query_vector(self, text: str) -> Vector | None:
        """``text``'s vector, computed off the event loop; ``None`` when it has none now."""


class Coverage(NamedTuple):
    """An embedder's coverage of the rows to embed, and the state of the file it was read at."""

    changes: int
    """The connection's ``total_changes`` then (this process wrote since if it moved)."""
    version: int
    """The file's ``data_version`` then (another process wrote since if it moved)."""
    newest: int
    """The newest indexed row counted."""
    done: int
    """Rows with a vector."""
    total: int
    """Rows to embed."""


@dataclass(slots=True)
class VectorSide:
    """One embedder's side of hybrid search: its query vectors, its weight, its rows in memory."""

    source: QueryVectors
    weight: float
    """How much its ranks count against the words' in the fusion (``store.hybrid``)."""
    index: VectorIndex | None = None
    """Its vectors in memory, read on the first search."""
    read_to: int = 0
    """Every indexed row up to this id had its vector in the file, and it is in ``index``."""
    fills_in_for: str | None = None
    """The embedder whose missing rows this side ranks (its rows only: ``use_vectors``)."""
    ranks: bool = True
    """Whether searches rank its rows (``rank_side``; else its vectors only serve
    ``unembedded_near``)."""
    counted: Coverage | None = None
    """Its coverage when last counted; rows added since past the newest are counted alone
    (``VectorsMixin.has_every_row``)."""


@dataclass(frozen=True, slots=True)
class Unsaved:
    """A new current session waiting for its first message to be stored."""

    title: str | None
    since: float
    forked_from: tuple[int | None, int | None] = (None, None)
    """A fork's source session and message (a fork made before the source's first message)."""
    model: str | None = None
    """The model it chose before its first message (a fork's: its source's)."""

    def info(self, session_id: int) -> SessionInfo:
        """The session's summary as the list would show it once stored: empty."""
        source, message = self.forked_from
        return SessionInfo(
            session_id, self.title, self.since, self.since, 0, 0, source, message, model=self.model
        )


class StoreCore:
    """The shared state of a ``SessionManager`` and the helpers every part uses."""

    def __init__(
        self,
        path: Path,
        requested_session: int | None,
        busy_timeout_ms: int,
        lease_wait: float,
        read_only: bool = False,
    ) -> None:
        self._path = path
        self._read_only = read_only
        self._lease_wait = lease_wait
        self._holder = Holder.for_this_process()
        self._leased: int | None = None
        """The session whose lease this manager holds (a turn runs on it)."""
        self._caught_up: list[StoredMessage] = []
        """Other processes' rows found while starting a turn, not yet handed out."""
        self._requested_session = requested_session
        self._busy_timeout_ms = busy_timeout_ms
        self._conn: aiosqlite.Connection | None = None
        self._init_lock = asyncio.Lock()
        # Guards the single connection: SQLite transactions cannot nest,
        # switching sessions must not interleave with an insert, and a read
        # must not see another task's write before it commits (same connection).
        self._lock = asyncio.Lock()
        self._session_id: int | None = None
        self._unsaved: Unsaved | None = None
        """Set while the current session has no row: it is stored with its first message."""
        self._unsaved_forks: dict[int, Unsaved] = {}
        """Forks with nothing to copy, made here and not opened yet: their ids are reserved."""
        # None: not read yet. The context is read on first use, so opening the
        # file costs the same whatever the session's length (the TUI shows the
        # tail of the history before the agent asks for the whole context).
        self._context: SessionContext | None = None
        self._skipped: list[tuple[int, str]] = []
        self._vector_sides: dict[str, VectorSide] = {}
        """The embedders searched beside the words, by name (``use_vectors``); none: full
        text alone."""

    @property
    def path(self) -> Path:
        """The database file."""
        return self._path

    @property
    def read_only(self) -> bool:
        """Opened to read only (a read-only home): every write raises ``StoreWriteError``."""
        return self._read_only

    def _reread_vectors(self) -> None:
        """Rows were indexed behind every side's cursor (a fork's copies): read from the start."""
        for side in self._vector_sides.values():
            side.read_to = 0

    def _unindexed(self, message_ids: Sequence[int]) -> None:
        """Rows left the search index (the trash emptied, a fork's copies unindexed): each
        side's index in memory lets their vectors go, so it holds what the file's coverage
        counts (``has_every_row``). Called once their transaction is committed."""
        for side in self._vector_sides.values():
            if side.index is not None and message_ids:
                side.index.remove(message_ids)

    def _recount_coverage(self) -> None:
        """Rows left or joined the search index below its newest (trash, rewind, fork): every
        side's coverage is counted again at the next search (``has_every_row``)."""
        for side in self._vector_sides.values():
            side.counted = None

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

    def _unsaved_info(self, session_id: int) -> SessionInfo | None:
        """The summary of ``session_id`` if it is the new current session, not stored yet."""
        unsaved = self._unsaved
        if unsaved is None or session_id != self._session_id:
            return None
        return unsaved.info(session_id)

    async def _shielded(self, work: Awaitable[_T]) -> _T:
        task = asyncio.ensure_future(work)
        # If our caller is cancelled, the task still finishes; fetch its
        # outcome so a late failure is logged rather than "never retrieved".
        task.add_done_callback(_log_orphan_failure)
        return await asyncio.shield(task)

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

    async def _session_info(self, conn: aiosqlite.Connection, session_id: int) -> SessionInfo:
        with translate_errors(self._path, StoreReadError):
            info = await queries.fetch_session(conn, session_id)
        if info is None:
            raise SessionNotFoundError(self._path, session_id)
        return info

    async def _live_session_info(self, conn: aiosqlite.Connection, session_id: int) -> SessionInfo:
        """``_session_info`` of a session to continue, fork or recall: not one in the trash."""
        info = await self._session_info(conn, session_id)
        if info.trashed_at is not None:
            raise SessionInTrashError(self._path, session_id)
        return info

    async def _require_session(self, conn: aiosqlite.Connection, session_id: int) -> None:
        with translate_errors(self._path, StoreReadError):
            exists = await queries.session_exists(conn, session_id)
        if not exists:
            raise SessionNotFoundError(self._path, session_id)

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


def _log_orphan_failure(task: asyncio.Future[Any]) -> None:
    if not task.cancelled() and task.exception() is not None:
        logger.debug("store write finished with an error: %r", task.exception())
