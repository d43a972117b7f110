"""The session list: start, switch, rename, delete, look up and list sessions; the trash.

A new session's id is reserved at once but its row is stored with its first
message (``Unsaved``), so a session left empty never reaches the list; the
methods here answer for such a session as if it existed, empty.

Deleting a session moves it to the trash (``trashed_at``): it keeps every
row but is no longer listed, searched, recalled or continued, until the user
restores it or empties the trash. Emptying the trash is the only way a
conversation is removed for good, and Koroku never does it by itself.
"""

from __future__ import annotations

from dataclasses import replace

from koroku_tui.store import branching, file_snapshots, queries
from koroku_tui.store.context import SessionContext
from koroku_tui.store.errors import StoreReadError, translate_errors
from koroku_tui.store.manager.core import Unsaved, clean_title, now
from koroku_tui.store.manager.turns import TurnsMixin
from koroku_tui.store.records import SessionInfo

__all__ = ["SessionsMixin"]


class SessionsMixin(TurnsMixin):
    """Sessions as a list: which one is current, their titles, their deletion."""

    async def current_session(self) -> SessionInfo:
        """The current session's summary (a new one reads as empty, untitled unless named)."""
        return await self.get_session(self.session_id)

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
                session_id = await queries.reserve_session_id(conn, now())
            self._set_current(session_id, SessionContext(), [])
            self._unsaved = Unsaved(clean_title(title), now())
        return await self.current_session()

    async def switch_session(self, session_id: int) -> SessionInfo:
        """Make ``session_id`` current (its context is read on first use).

        A session in the trash raises ``SessionInTrashError``: restore it first.
        """
        conn = self._connection()
        async with self._lock:
            fork = self._unsaved_forks.pop(session_id, None)  # an empty fork: stored when used
            if fork is not None:
                info = fork.info(session_id)
            else:
                info = await self._live_session_info(conn, session_id)
            await self._leave_session(conn)
            self._set_current(session_id, None if fork is None else SessionContext(), [])
            self._unsaved = fork
        return info

    async def rename_session(self, session_id: int, title: str | None) -> SessionInfo:
        """Set a session's title; ``None`` or blank goes back to the derived title.

        An explicit title is kept for good: later messages never replace it.
        A rename is not activity: the session keeps its place in the list.
        """
        conn = self._connection()
        clean = clean_title(title)
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

    async def set_model(self, model: str | None) -> SessionInfo:
        """Keep ``model`` as the current session's (``None``: back to the configured one).

        The session uses it from its next turn, after a restart too (the
        agent reads it: ``Agent.use_model``). Not activity: the session keeps
        its place in the list. A new session keeps it for its first message.
        """
        conn = self._connection()
        unsaved = self._unsaved
        if unsaved is not None:
            self._unsaved = replace(unsaved, model=model)  # stored with the first message
            return await self.current_session()
        async with self._lock, self._transaction(conn):
            await self._require_session(conn, self.session_id)
            await queries.set_model(conn, self.session_id, model)
        return await self.current_session()

    async def delete_session(self, session_id: int) -> None:
        """Move a session to the trash; moving the current one starts a fresh session.

        Nothing is removed: the session keeps its rows and waits in the trash
        (``list_trash``), left out of the session list, the searches,
        ``read_session`` and ``--session``, until ``restore_session`` brings
        it back or ``empty_trash`` removes it for good. Its forks' copies are
        indexed, so their words stay findable (as before a delete for good).
        Refused (``SessionBusyError``) while another window runs a turn on it.
        """
        conn = self._connection()
        async with self._lock:
            if session_id == self._session_id and self._unsaved is not None:
                return  # not stored: nothing to delete, and already fresh
            replacement: int | None = None
            when = now()
            self._recount_coverage()
            async with self._transaction(conn):
                info = await self._session_info(conn, session_id)
                if info.trashed_at is None:
                    # Another window writing it would go on in a deleted conversation.
                    await self._check_lease(conn, session_id, when)
                    if await branching.index_copies_of(conn, session_id):
                        self._reread_vectors()  # rows indexed behind: vectors from the start
                    await queries.set_trashed(conn, session_id, when)
                if session_id == self._session_id:
                    replacement = await queries.reserve_session_id(conn, when)
            if replacement is not None:
                await self._release(conn)
                self._caught_up = []
                self._set_current(replacement, SessionContext(), [])
                self._unsaved = Unsaved(None, now())

    async def restore_session(self, session_id: int) -> SessionInfo:
        """Take a session out of the trash: listed, found and continued again, as before.

        It goes back to its place by activity. The index entries its forks'
        copies got when it was deleted go again (its own rows say those
        words). Restoring a live session changes nothing.
        """
        conn = self._connection()
        async with self._lock:
            self._recount_coverage()
            async with self._transaction(conn):
                info = await self._session_info(conn, session_id)
                copies: list[int] = []
                if info.trashed_at is not None:
                    copies = await branching.unindex_copies_of(conn, session_id)
                    await queries.set_trashed(conn, session_id, None)
            self._unindexed(copies)
            return await self._session_info(conn, session_id)

    async def list_trash(self, limit: int = 50, offset: int = 0) -> list[SessionInfo]:
        """The sessions in the trash, the latest deleted first, a page at a time."""
        if limit < 0 or offset < 0:
            raise ValueError("limit and offset must not be negative")
        conn = self._connection()
        async with self._lock:
            with translate_errors(self._path, StoreReadError):
                return await queries.fetch_trash(conn, limit, offset)

    async def empty_trash(self) -> int:
        """Remove every session in the trash for good, rows and index entries, file
        snapshots and restores and the contents no other session keeps; return how many.

        The only way a conversation is removed, and only when the user asks.
        One transaction: while another window runs a turn on one of them,
        ``SessionBusyError`` and nothing is removed. Should the current
        session be among them (another window deleted it), a fresh one starts.
        """
        conn = self._connection()
        async with self._lock:
            replacement: int | None = None
            when = now()
            self._recount_coverage()
            gone: list[int] = []
            async with self._transaction(conn):
                doomed = await queries.trashed_ids(conn)
                for session_id in doomed:
                    await self._check_lease(conn, session_id, when)
                for session_id in doomed:
                    if await branching.index_copies_of(conn, session_id):
                        self._reread_vectors()
                    gone += await queries.delete_session_rows(conn, session_id)
                    await file_snapshots.forget_session(conn, session_id)
                if doomed:
                    await file_snapshots.drop_unused_contents(conn)
                if self._session_id in doomed and self._unsaved is None:
                    replacement = await queries.reserve_session_id(conn, when)
            self._unindexed(gone)
            if replacement is not None:
                self._leased = None  # its lease row went with the session
                self._caught_up = []
                self._set_current(replacement, SessionContext(), [])
                self._unsaved = Unsaved(None, now())
            return len(doomed)

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
