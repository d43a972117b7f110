"""One writer per session: the lease a turn holds, and the writes made under it.

A turn takes its session's lease (``begin_turn``) and gives it back
(``end_turn``); while another live process holds it, every write to the
session is refused with ``SessionBusyError`` and nothing is written. Each
write checks the lease, and that the session is not in the trash, inside its
own transaction (``_check_writable``) and
stores a new session's row with its first row (``_store_unsaved``). Besides
the seed's ``add_message`` (on ``SessionManager`` itself), the writes are
here: ``add_messages`` for imports, ``add_turn_error`` for a failed turn.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

import aiosqlite

from koroku_tui.events import Event, TurnErrorEvent
from koroku_tui.store import branching, queries
from koroku_tui.store.errors import BusyWatcher, SessionBusyError, SessionInTrashError
from koroku_tui.store.lease import (
    holder_is_alive,
    read_lease,
    release_lease,
    renew_lease,
    take_lease,
)
from koroku_tui.store.manager.context_cache import ContextCacheMixin
from koroku_tui.store.manager.core import now
from koroku_tui.store.records import StoredMessage

__all__ = ["DEFAULT_LEASE_WAIT", "TurnsMixin"]

_T = TypeVar("_T")

DEFAULT_LEASE_WAIT = 3.0
"""Seconds a turn waits for another process's turn on the same session to end."""
_LEASE_POLL = (0.02, 0.25)
"""First and longest pause between looks at a busy session's lease."""


class TurnsMixin(ContextCacheMixin):
    """The session's lease: taken for a turn, checked by every write, given back."""

    @property
    def holds_turn(self) -> bool:
        """Whether this manager holds the current session's lease (a turn runs here)."""
        return self._leased is not None and self._leased == self._session_id

    async def begin_turn(
        self, event: Event | None = None, *, busy: BusyWatcher | None = None
    ) -> int | None:
        """Take the current session's lease and store ``event`` in the same transaction.

        While another process runs a turn on the session, waits up to
        ``lease_wait`` seconds for it to end, then raises ``SessionBusyError``
        having written nothing; ``busy`` is told of each attempt that found
        it busy (a window says so while it waits). A lease whose holder died
        is taken over. Rows other processes wrote meanwhile are read first,
        so ``event`` follows them in the context (``catch_up`` hands them
        out). Returns the row id of ``event``, if one was given.
        """
        conn = self._connection()

        async def attempt() -> int | None:
            begun = await self._shielded(self._try_begin(conn, event))
            if isinstance(begun, SessionBusyError):
                raise begun
            return begun

        return await self._waiting_while_busy(attempt, busy)

    async def _waiting_while_busy(
        self, attempt: Callable[[], Awaitable[_T]], busy: BusyWatcher | None = None
    ) -> _T:
        """``attempt()``, again while another process's turn holds the session.

        Waits up to ``lease_wait`` seconds, as a turn does, then lets the last
        ``SessionBusyError`` through; ``busy`` hears of each one first. Each
        attempt must write nothing when it raises it (one transaction, rolled
        back).
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._lease_wait
        pause = _LEASE_POLL[0]
        while True:
            try:
                return await attempt()
            except SessionBusyError as refused:
                if busy is not None:
                    await busy(refused)
                if loop.time() + pause > deadline:
                    raise
            await asyncio.sleep(pause)
            pause = min(pause * 2, _LEASE_POLL[1])

    async def _try_begin(
        self, conn: aiosqlite.Connection, event: Event | None
    ) -> int | SessionBusyError | None:
        await self._loaded_context()
        async with self._lock:
            session_id = self.session_id
            when = now()
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
                    await self._refuse_trashed(conn, session_id)
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

    async def add_turn_error(self, error: TurnErrorEvent) -> int:
        """Store why a turn ended in an error, as a row the model never sees; return its id.

        Written under the session's lease like a message (``SessionBusyError``
        when another live process holds it); no search entry, no title, and
        the model's context is untouched (readers show it, loaders skip it).
        """
        conn = self._connection()
        return await self._shielded(self._insert_turn_error(conn, error, now()))

    async def _insert_turn_error(
        self, conn: aiosqlite.Connection, error: TurnErrorEvent, when: float
    ) -> int:
        async with self._lock:
            session_id = self.session_id
            async with self._transaction(conn):
                # Any row makes a session exist (its message was refused, say).
                await self._store_unsaved(conn, session_id, when)
                await self._check_writable(conn, session_id, when)
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
        when = now()
        times = [when] * len(events) if created_at is None else [float(t) for t in created_at]
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
                await self._check_writable(conn, session_id, max(times, default=0.0))
                for event, when in zip(events, times, strict=True):
                    row_id = await queries.insert_message(conn, session_id, event, when)
                    stored.append(StoredMessage(row_id, session_id, event.event_type, when, event))
            if stored_any:
                self._unsaved = None
            for message in stored:
                self._remember(message)
            return [message.id for message in stored]

    async def _store_unsaved(
        self, conn: aiosqlite.Connection, session_id: int, when: float
    ) -> None:
        """Insert the new current session's row before its first message (in that transaction).

        Hold ``_lock``; the caller clears ``_unsaved`` once the transaction commits.
        """
        unsaved = self._unsaved
        if unsaved is None:
            return
        await queries.insert_session_as(
            conn, session_id, unsaved.title, when, unsaved.forked_from, unsaved.model
        )
        if self._leased == session_id:  # a turn began before the first message
            await take_lease(conn, session_id, self._holder, when)

    async def _check_writable(
        self, conn: aiosqlite.Connection, session_id: int, when: float
    ) -> None:
        """Refuse a write to a session in the trash, or one another process holds."""
        await self._refuse_trashed(conn, session_id)
        await self._check_lease(conn, session_id, when)

    async def _refuse_trashed(self, conn: aiosqlite.Connection, session_id: int) -> None:
        """``SessionInTrashError`` when the session was deleted (in another window, say).

        Its rows would go on where no list or search shows them: the user
        restores it first, or starts a new conversation.
        """
        if await queries.is_trashed(conn, session_id):
            raise SessionInTrashError(self._path, session_id)

    async def _check_lease(self, conn: aiosqlite.Connection, session_id: int, when: float) -> None:
        """Refuse a write while another live process holds the session (in a transaction)."""
        lease = await read_lease(conn, session_id)
        if lease is None:
            return
        if lease.holder.token == self._holder.token:
            await renew_lease(conn, session_id, self._holder, when)
        elif holder_is_alive(lease, self._holder, when):
            raise SessionBusyError(session_id, lease.holder.pid)

    async def _leave_session(self, conn: aiosqlite.Connection) -> None:
        """Before the current session changes: give its lease, or its unused id, back.

        Hold ``_lock``. An id given back is handed out again only if no later
        one was, so ids stay in step with what was stored. Should the id be
        taken again before this manager stores under it (a failed switch), its
        first message fails on the existing row: it never joins another session.
        """
        self._caught_up = []
        await self._release(conn)
        if self._read_only:  # its ids were never reserved: nothing to give back
            self._unsaved_forks.clear()
            return
        if self._unsaved is not None or self._unsaved_forks:
            async with self._transaction(conn):
                await self._give_back_unsaved(conn)

    async def _give_back_unsaved(self, conn: aiosqlite.Connection) -> None:
        """Give back the current id if no session was stored under it (in a transaction)."""
        for fork_id in sorted(self._unsaved_forks, reverse=True):  # the newest first
            await queries.return_session_id(conn, fork_id)
        self._unsaved_forks.clear()
        if self._unsaved is not None and self._session_id is not None:
            await queries.return_session_id(conn, self._session_id)

    async def _release(self, conn: aiosqlite.Connection) -> None:
        """Delete our lease row, if any (hold ``_lock``)."""
        leased, self._leased = self._leased, None
        if leased is None:
            return
        async with self._transaction(conn):
            await release_lease(conn, leased, self._holder)
