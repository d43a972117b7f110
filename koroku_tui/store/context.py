"""The model's context of one session, loaded once and kept in memory.

The rule is ``koroku_tui.events.turns.view_before`` (shared with the
in-memory history): the latest *reset* row (a readable compaction or rewind)
decides. After a compaction C the context is ``[C]`` followed by the
message rows from C's floor on that no rewind abandoned; after a rewind R to
before M it is the context before M followed by the rows after R, so the
loader walks back from rewind to rewind until it meets a compaction or the
start of the session. Rows that cannot be read are left out and reported.

Loading costs a few index seeks per rewind met on the way back, plus reading
the rows it returns: it does not depend on how many rows precede the
compaction, nor on how many rows the rewinds abandoned.
"""

from __future__ import annotations

from collections.abc import Container
from dataclasses import dataclass, field
from typing import Any

import aiosqlite

from koroku_tui.events import CompactionEvent, Event
from koroku_tui.events.turns import abandoned_spans, compacted, context_floor
from koroku_tui.store.records import StoredMessage
from koroku_tui.store.rows import MESSAGE_COLUMNS, message_from_row

__all__ = ["SessionContext", "ViewPlan", "load_context", "plan_view", "read_rows_after"]

# One seek each on messages_by_session_kind: the latest reset of each kind.
_LATEST_OF_KIND_SQL = f"""
SELECT {MESSAGE_COLUMNS} FROM messages INDEXED BY messages_by_session_kind
WHERE session_id = ? AND kind = ? AND id < ?
ORDER BY id DESC LIMIT 1
"""

# The rewinds between a compaction's floor and itself (their spans are left out).
_REWINDS_BETWEEN_SQL = f"""
SELECT {MESSAGE_COLUMNS} FROM messages INDEXED BY messages_by_session_kind
WHERE session_id = ? AND kind = 'rewind' AND id >= ? AND id < ?
ORDER BY id
"""

# INDEXED BY: the planner could otherwise pick (session_id, kind, id) for the
# session_id equality and scan the whole session; the tail must be a range.
_TAIL_SQL = f"""
SELECT {MESSAGE_COLUMNS} FROM messages INDEXED BY messages_by_session
WHERE session_id = ? AND id >= ? AND id < ? AND kind NOT IN ('compaction', 'rewind', 'error')
ORDER BY id
"""

# Rows another process may have added since this one last looked (catch-up).
_AFTER_SQL = f"""
SELECT {MESSAGE_COLUMNS} FROM messages INDEXED BY messages_by_session
WHERE session_id = ? AND id > ?
ORDER BY id
"""

_NO_UPPER_BOUND = 2**63 - 1


@dataclass
class SessionContext:
    """The context rows and, in parallel, their events (copied cheaply per request)."""

    messages: list[StoredMessage] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    floor_id: int = 0
    """Every readable message row on the current line (not abandoned by a rewind)
    with ``id >= floor_id`` is in ``messages``."""
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
        if message.rewind is not None:
            return False  # the context goes back: only a reload is exact
        event = message.event  # None too for a turn's error: never in the context
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
        self, foreign: list[StoredMessage], newest_id: int
    ) -> tuple[list[StoredMessage], list[tuple[int, str]], bool]:
        """Apply the rows another process wrote above ``seen_id``, up to ``newest_id``.

        Returns the other process's readable rows, its unreadable ones, and
        whether the context is exact; when it is not (a foreign row that sorts
        before one of ours, or a compaction reaching back past memory) the
        caller must reload it.
        """
        own = self.own_ids
        # Our rows are already in memory, in the order we wrote them; a foreign
        # row older than one of them belongs before it, which appending cannot do.
        exact = not (foreign and own and foreign[0].id < max(own))
        self.seen_id = max(self.seen_id, newest_id)
        self.own_ids = set()
        skipped = [(m.id, m.error or "unreadable") for m in foreign if not m.is_readable]
        for message in foreign:
            if message.is_readable and exact and not self.append(message):
                exact = False
        # A rewind is no event, but the other window's user must see that the
        # turns above it are no longer the conversation: it is returned too.
        readable = [m for m in foreign if m.is_readable]
        return readable, skipped, exact


async def read_rows_after(
    conn: aiosqlite.Connection, session_id: int, after_id: int, known: Container[int] = ()
) -> tuple[int, list[StoredMessage]]:
    """The rows of ``session_id`` with an id above ``after_id`` but those in ``known``,
    oldest first, and the newest id above ``after_id`` (``after_id`` if none).

    ``known``: rows this process wrote and holds already. They are not decoded
    again: after a step of 1,000 calls that was 2,000 events validated (~20 ms
    of the loop's time) only to be dropped.
    """
    rows = list(await conn.execute_fetchall(_AFTER_SQL, (session_id, after_id)))
    newest = rows[-1][0] if rows else after_id
    return newest, [message_from_row(row) for row in rows if row[0] not in known]


@dataclass
class ViewPlan:
    """Where the context before a row lies, found with index seeks only (no message read).

    The context is ``compaction`` (when set) followed by the message rows
    (kinds other than compaction and rewind) in ``ranges``, in order.
    """

    compaction: StoredMessage | None
    ranges: list[tuple[int, int]]
    """Half-open ``[first, end)`` id ranges of message rows, oldest first."""
    floor_id: int
    skipped: list[tuple[int, str]]
    """Unreadable compaction and rewind rows passed over on the way back."""
    seen_id: int
    """The newest reset row looked at."""


async def _latest_reset(
    conn: aiosqlite.Connection, session_id: int, end: int, plan: ViewPlan
) -> StoredMessage | None:
    """The latest readable compaction or rewind below ``end`` (one seek per kind).

    An unreadable reset row is skipped like any other row, so the previous
    readable one decides: the model then sees more history, never less.
    """
    bounds = {"compaction": end, "rewind": end}
    found: dict[str, StoredMessage | None] = {}
    while True:
        for kind, bound in bounds.items():
            if kind not in found:
                params = (session_id, kind, bound)
                rows = list(await conn.execute_fetchall(_LATEST_OF_KIND_SQL, params))
                found[kind] = message_from_row(rows[0]) if rows else None
        candidates = [m for m in found.values() if m is not None]
        if not candidates:
            return None
        latest = max(candidates, key=lambda m: m.id)
        plan.seen_id = max(plan.seen_id, latest.id)
        if latest.is_readable:
            return latest
        plan.skipped.append((latest.id, latest.error or "unreadable"))
        bounds[latest.kind] = latest.id
        del found[latest.kind]


def _without(first: int, end: int, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``[first, end)`` minus the inclusive ``spans`` (merged, in order), as ranges."""
    ranges: list[tuple[int, int]] = []
    for span_first, span_last in spans:
        if span_last < first or span_first >= end:
            continue
        if span_first > first:
            ranges.append((first, span_first))
        first = max(first, span_last + 1)
    if first < end:
        ranges.append((first, end))
    return ranges


async def plan_view(
    conn: aiosqlite.Connection, session_id: int, end: int | None = None
) -> ViewPlan:
    """Where the context of ``session_id`` just before row ``end`` (or now) lies.

    Walks back from ``end``: each rewind met sends the walk to the message it
    rewound to, keeping the rows after the rewind; a compaction or the start
    of the session ends it (``turns.view_before``, in index seeks).
    """
    plan = ViewPlan(None, [], 0, [], 0)
    pieces: list[list[tuple[int, int]]] = []
    bound = _NO_UPPER_BOUND if end is None else end
    while True:
        reset = await _latest_reset(conn, session_id, bound, plan)
        if reset is None:
            pieces.append([(0, bound)])
            break
        if reset.rewind is not None:
            pieces.append([(reset.id + 1, bound)])
            bound = reset.rewind.before_message_id
            continue
        assert isinstance(reset.event, CompactionEvent)
        floor = context_floor(reset.id, reset.event.kept_from_id)
        rewinds = [
            message_from_row(row)
            for row in await conn.execute_fetchall(
                _REWINDS_BETWEEN_SQL, (session_id, floor, reset.id)
            )
        ]
        pieces.append(_without(floor, bound, abandoned_spans(rewinds)))
        plan.compaction = reset
        plan.floor_id = floor
        break
    plan.ranges = [piece for group in reversed(pieces) for piece in group if piece[0] < piece[1]]
    return plan


async def load_context(
    conn: aiosqlite.Connection, session_id: int
) -> tuple[SessionContext, list[tuple[int, str]]]:
    """Read the context of ``session_id``; also return the rows skipped as unreadable."""
    plan = await plan_view(conn, session_id)
    skipped = list(plan.skipped)
    context = SessionContext(floor_id=plan.floor_id, seen_id=plan.seen_id)
    if plan.compaction is not None:
        context.messages.append(plan.compaction)
    row: Any
    for first, end in plan.ranges:
        for row in await conn.execute_fetchall(_TAIL_SQL, (session_id, first, end)):
            message = message_from_row(row)
            context.seen_id = max(context.seen_id, message.id)
            if message.event is None:
                skipped.append((message.id, message.error or "unreadable"))
                continue
            context.messages.append(message)
    context.events = [m.event for m in context.messages if m.event is not None]
    skipped.sort()
    return context, skipped
