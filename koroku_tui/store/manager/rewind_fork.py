"""Branching: rewind the current session to before a user message, or fork any session.

Nothing is deleted. A rewind stores a row that tells the context loader where
the model's line resumes; a fork is a new session starting with copies of
the source's context. The SQL lives in ``koroku_tui.store.branching``; this
part checks the target (a message the user typed, in that session), writes
under the session's lease and keeps the in-memory context in step.
"""

from __future__ import annotations

import aiosqlite

from koroku_tui.events import RewindEvent
from koroku_tui.events.turns import in_spans
from koroku_tui.store import branching, queries
from koroku_tui.store.errors import StoreReadError, translate_errors
from koroku_tui.store.manager.core import Unsaved, clean_title, now
from koroku_tui.store.manager.turns import TurnsMixin
from koroku_tui.store.records import SessionInfo, StoredMessage

__all__ = ["RewindForkMixin"]


class RewindForkMixin(TurnsMixin):
    """Rewind and fork, and the user turns they can start from."""

    async def rewind(self, before_message_id: int) -> StoredMessage:
        """Take the current session back to just before user message M; return M's row.

        Nothing is deleted: a rewind row is stored (under the session's lease,
        as ``add_message``), after which the model's context is the one it had
        before M (``turns.view_before``); the rows from M on stay in the
        session, abandoned (``abandoned_spans``). M must be a message the user
        typed, on the session's current line; otherwise ``ValueError`` (one
        sentence) and nothing is written. The caller then calls
        ``Agent.refresh()`` and may put M's text back in the prompt. While
        another process's turn holds the session, waits for it as a turn does
        (``lease_wait``), then raises ``SessionBusyError`` having written nothing.
        """
        message_id = _message_id(before_message_id)
        conn = self._connection()
        return await self._waiting_while_busy(
            lambda: self._shielded(self._rewind(conn, message_id))
        )

    async def _rewind(self, conn: aiosqlite.Connection, message_id: int) -> StoredMessage:
        async with self._lock:
            session_id = self.session_id
            when = now()
            self._recount_coverage()
            async with self._transaction(conn):
                target = await self._user_turn(conn, session_id, message_id)
                if in_spans(message_id, await branching.fetch_abandoned_spans(conn, session_id)):
                    raise ValueError(
                        f"Message {message_id} was already taken back by an earlier rewind; "
                        "fork at it to continue from there."
                    )
                await self._check_writable(conn, session_id, when)
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
        made current (``switch_session`` then ``Agent.refresh()``). A fork
        before the source's first message copies nothing: like a new session,
        its id is reserved and its row stored with its first message, once
        ``switch_session`` here opened it. Raises ``SessionNotFoundError``
        (``SessionInTrashError`` for a session in the trash) or ``ValueError``
        (one sentence), writing nothing.
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
            self._recount_coverage()
            async with self._transaction(conn):
                source = await self._live_session_info(conn, source_id)
                if message_id is not None:
                    await self._user_turn(conn, source_id, message_id)
                title = clean_title(f"{source.display_title} (fork)")
                when = now()
                fork_id = await branching.copy_context(conn, source_id, message_id, title, when)
                stored = await queries.session_exists(conn, fork_id)
            if not stored:  # nothing to copy: the id is reserved, as for a new session
                self._unsaved_forks[fork_id] = Unsaved(
                    title, when, (source_id, message_id), source.model
                )
                return self._unsaved_forks[fork_id].info(fork_id)
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


def _message_id(value: object, what: str = "message") -> int:
    """``value`` as a row id, or a one-sentence ``ValueError``."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value < 2**63:
        raise ValueError(f"A {what} id is a whole number from 1, not {value!r}.")
    return value
