"""Where a turn starts, and what the model sees after a compaction.

Two rules every part of Koroku must agree on, written once:

* **A turn** starts with an event that reaches Gemini as a new user message:
  a message the user typed, or a compaction summary (the model receives it as
  a user text message). Tool responses also have role "user" but continue the
  turn of the calls they answer. The repair (thought signatures), the tool
  budget (calls per turn), the request cache and the compaction split all
  read ``current_turn_opener``.
* **The context** after the latest compaction C of a session is C, then every
  readable non-compaction row with ``id >= C.kept_from_id`` (or ``id > C.id``
  when unset), in id order; with no compaction it is every readable row. The
  store (over SQLite rows) and the in-memory history (over a list) both apply
  ``compacted``; the history screen marks rows below ``context_floor``.

The fake Gemini server has its own ``current_turn_start``: it works on wire
dicts and plays Gemini's part, so it must not share Koroku's code.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol, TypeVar

from koroku_tui.events import CompactionEvent, Event

__all__ = [
    "EventRow",
    "compacted",
    "context_floor",
    "context_of",
    "current_turn_opener",
    "opens_turn",
]


def opens_turn(event: Event) -> bool:
    """True for an event that starts a turn: a message the user typed, or a summary.

    A compaction reaches the model as a user text message, so it opens a turn
    too; an event with no parts does not (the repair drops it).
    """
    if isinstance(event, CompactionEvent):
        return True
    return event.is_real_user_turn and bool(event.parts)


def current_turn_opener(events: Sequence[Event]) -> int | None:
    """Index of the event that opens the current turn; ``None`` when no event does."""
    for index in range(len(events) - 1, -1, -1):
        if opens_turn(events[index]):
            return index
    return None


class EventRow(Protocol):
    """A stored row as the context rule needs it (``StoredMessage`` has this shape)."""

    @property
    def id(self) -> int: ...

    @property
    def event(self) -> Event | None:
        """``None`` for a row that could not be read: never part of the context."""
        ...


RowT = TypeVar("RowT", bound=EventRow)


def context_floor(compaction_id: int, kept_from_id: int | None) -> int:
    """The first row id a compaction (stored as row ``compaction_id``) keeps verbatim."""
    return kept_from_id if kept_from_id is not None else compaction_id + 1


def compacted(rows: Iterable[RowT], compaction: RowT) -> list[RowT]:
    """The context once ``compaction`` is stored: itself, then the kept rows of ``rows``.

    ``rows`` may be the context before it (in memory) or every row of the
    session: the kept ones are the readable, non-compaction rows from the
    compaction's floor on, in the order given.
    """
    event = compaction.event
    if not isinstance(event, CompactionEvent):
        raise TypeError(f"row {compaction.id} holds no compaction")
    floor = context_floor(compaction.id, event.kept_from_id)
    kept = [
        row
        for row in rows
        if row.id >= floor and row.event is not None and not isinstance(row.event, CompactionEvent)
    ]
    return [compaction, *kept]


def context_of(rows: Sequence[RowT]) -> list[RowT]:
    """The model's context among every row of a session (given in id order).

    The reference form of the rule, over rows in memory; the store reaches the
    same rows with two index seeks (``store.context.load_context``).
    """
    for row in reversed(rows):
        if isinstance(row.event, CompactionEvent):
            return compacted(rows, row)
    return [row for row in rows if row.event is not None]
