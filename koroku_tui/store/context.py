"""The model's context of one session, loaded once and kept in memory.

The rule (``koroku_tui.events.turns``, shared with the in-memory history):
after the session's latest compaction row C, the context is ``[C]`` followed
by every non-compaction row of the session with ``id >= C.kept_from_id``
(when set) or ``id > C.id`` (when not), in id order. With no compaction it is
every row. Rows that cannot be read are left out and reported.

Loading costs two index seeks plus reading the tail: it does not depend on how
many rows precede the compaction.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import aiosqlite

from koroku_tui.events import CompactionEvent, Event
from koroku_tui.events.turns import compacted, context_floor
from koroku_tui.store.records import StoredMessage
from koroku_tui.store.rows import MESSAGE_COLUMNS, message_from_row

__all__ = ["SessionContext", "load_context", "read_rows_after"]

_LATEST_COMPACTION_SQL = f"""
SELECT {MESSAGE_COLUMNS} FROM messages
WHERE session_id = ? AND kind = 'compaction' AND id < ?
ORDER BY id DESC LIMIT 1
"""

# INDEXED BY: the planner could otherwise pick (session_id, kind, id) for the
# session_id equality and scan the whole session; the tail must be a range.
_TAIL_SQL = f"""
SELECT {MESSAGE_COLUMNS} FROM messages INDEXED BY messages_by_session
WHERE session_id = ? AND id >= ? AND kind != 'compaction'
ORDER BY id
"""

# Rows another process may have added since this one last looked (catch-up).
_AFTER_SQL = f"""
SELECT {MESSAGE_COLUMNS} FROM messages INDEXED BY messages_by_session
WHERE session_id = ? AND id > ?
ORDER BY id
"""


@dataclass
class SessionContext:
    """The context rows and, in parallel, their events (copied cheaply per request)."""

    messages: list[StoredMessage] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    floor_id: int = 0
    """Every readable non-compaction row with ``id >= floor_id`` is in ``messages``."""
    seen_id: int = 0
    """Every row of the session up to this id has been read (or written) here."""
    own_ids: set[int] = field(default_factory=set)
    """Rows above ``seen_id`` that this process wrote itself (not to be read back)."""

    def append(self, message: StoredMessage) -> bool:
        """Apply a newly stored row; ``False`` means the context must be reloaded.

        A compaction keeps rows from memory when its split point lies within
        what memory holds (the normal case); a split point further back needs
        rows that an earlier compaction had dropped, so only a reload is exact.
        """
        event = message.event
        if event is None:
            return True
        if isinstance(event, CompactionEvent):
            start = context_floor(message.id, event.kept_from_id)
            if start < self.floor_id:
                return False
            self.messages = compacted(self.messages, message)
            self.events = [m.event for m in self.messages if m.event is not None]
            self.floor_id = start
            return True
        # A kept_from_id pointing past the compaction leaves a gap the rule
        # excludes; honour it for rows added later too.
        if message.id >= self.floor_id:
            self.messages.append(message)
            self.events.append(event)
        return True

    def absorb(
        self, rows: list[StoredMessage]
    ) -> tuple[list[StoredMessage], list[tuple[int, str]], bool]:
        """Apply the rows read above ``seen_id``: those another process wrote.

        Returns the other process's readable rows, its unreadable ones, and
        whether the context is exact; when it is not (a foreign row that sorts
        before one of ours, or a compaction reaching back past memory) the
        caller must reload it.
        """
        own = self.own_ids
        foreign = [m for m in rows if m.id not in own]
        # Our rows are already in memory, in the order we wrote them; a foreign
        # row older than one of them belongs before it, which appending cannot do.
        exact = not (foreign and own and foreign[0].id < max(own))
        if rows:
            self.seen_id = max(self.seen_id, rows[-1].id)
        self.own_ids = set()
        readable = [m for m in foreign if m.event is not None]
        skipped = [(m.id, m.error or "unreadable") for m in foreign if m.event is None]
        for message in readable:
            if exact and not self.append(message):
                exact = False
        return readable, skipped, exact


async def read_rows_after(
    conn: aiosqlite.Connection, session_id: int, after_id: int
) -> list[StoredMessage]:
    """Every row of ``session_id`` with an id above ``after_id``, oldest first."""
    rows = await conn.execute_fetchall(_AFTER_SQL, (session_id, after_id))
    return [message_from_row(row) for row in rows]


async def load_context(
    conn: aiosqlite.Connection, session_id: int
) -> tuple[SessionContext, list[tuple[int, str]]]:
    """Read the context of ``session_id``; also return the rows skipped as unreadable.

    An unreadable compaction row is skipped like any other, so the previous
    readable compaction decides the context: the model then sees more history,
    never less.
    """
    skipped: list[tuple[int, str]] = []
    compaction: StoredMessage | None = None
    context = SessionContext()
    before = 2**63 - 1
    while True:
        rows = list(await conn.execute_fetchall(_LATEST_COMPACTION_SQL, (session_id, before)))
        if not rows:
            break
        candidate = message_from_row(rows[0])
        context.seen_id = max(context.seen_id, candidate.id)
        if candidate.event is not None:
            compaction = candidate
            break
        skipped.append((candidate.id, candidate.error or "unreadable"))
        before = candidate.id

    if compaction is not None:
        assert isinstance(compaction.event, CompactionEvent)
        context.floor_id = context_floor(compaction.id, compaction.event.kept_from_id)
        context.messages.append(compaction)
        context.events.append(compaction.event)
    for row in await conn.execute_fetchall(_TAIL_SQL, (session_id, context.floor_id)):
        message = message_from_row(row)
        context.seen_id = max(context.seen_id, message.id)
        if message.event is None:
            skipped.append((message.id, message.error or "unreadable"))
            continue
        context.messages.append(message)
        context.events.append(message.event)
    skipped.sort()
    return context, skipped
