"""Where a turn starts, and what the model sees after a compaction.

Two rules every part of Koroku must agree on, written once:

* **A turn** starts with an event that reaches Gemini as a new user message:
  a message the user typed, or a compaction summary (the model receives it as
  a user text message). Tool responses also have role "user" but continue the
  turn of the calls they answer. The repair (thought signatures), the tool
  budget (calls per turn), the request cache and the compaction split all
  read ``current_turn_opener``.
* **The context** is ``view_before(rows, X)`` for X past the session's last
  row: what the model sees just before row X, decided by the latest *reset*
  row below X (a readable compaction or rewind):

  - none: every readable message row below X;
  - a compaction C: C, then every readable message row with
    ``context_floor(C) <= id < X`` that no rewind abandoned;
  - a rewind R to before message M: ``view_before(rows, M)``, then every
    readable message row with ``R < id < X``. Rewinding past a compaction
    thus rebuilds the context from the older summary, or the raw rows.

  A rewind R to before M *abandons* the rows ``M .. R-1``
  (``abandoned_spans``): they stay stored, hidden from the model. The store
  (``store.context.load_context``, with index seeks) and the in-memory
  history agree with ``context_of``; while appending, both apply
  ``compacted``; the history screen marks rows below ``context_floor``.

The fake Gemini server has its own ``current_turn_start``: it works on wire
dicts and plays Gemini's part, so it must not share Koroku's code.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol, TypeVar

from koroku_tui.events import CompactionEvent, Event, RewindEvent

__all__ = [
    "EventRow",
    "abandoned_spans",
    "compacted",
    "context_floor",
    "context_of",
    "current_turn_opener",
    "in_spans",
    "merge_spans",
    "opens_turn",
    "view_before",
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
        """``None`` for a rewind row or one that could not be read: never part of the context."""
        ...

    @property
    def rewind(self) -> RewindEvent | None:
        """The rewind a readable rewind row holds (``None`` for every other row)."""
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


def merge_spans(spans: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """Inclusive ``(first, last)`` id spans, overlapping or touching ones merged, in order."""
    merged: list[tuple[int, int]] = []
    for first, last in sorted(spans):
        if merged and first <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], last))
        else:
            merged.append((first, last))
    return merged


def abandoned_spans(rows: Iterable[EventRow]) -> list[tuple[int, int]]:
    """The inclusive id spans the readable rewinds among ``rows`` took out of the line.

    A rewind stored as row R to before message M abandons ``M .. R-1``.
    """
    return merge_spans(
        (row.rewind.before_message_id, row.id - 1) for row in rows if row.rewind is not None
    )


def in_spans(row_id: int, spans: Sequence[tuple[int, int]]) -> bool:
    """True when ``row_id`` lies in one of ``spans``."""
    return any(first <= row_id <= last for first, last in spans)


def _is_reset(row: EventRow) -> bool:
    return row.rewind is not None or isinstance(row.event, CompactionEvent)


def view_before(rows: Sequence[RowT], end: int | None = None) -> list[RowT]:
    """The model's context just before row id ``end`` (after every row when ``None``).

    ``rows`` are every row of one session in id order. The reference form of
    the rule (module docstring), over rows in memory; the store reaches the
    same rows with index seeks (``store.context.load_context``).
    """
    tail: list[RowT] = []
    while True:
        below = [row for row in rows if end is None or row.id < end]
        reset = next((row for row in reversed(below) if _is_reset(row)), None)
        if reset is None:
            return [row for row in below if row.event is not None] + tail
        if reset.rewind is not None:
            after = [row for row in below if row.id > reset.id and row.event is not None]
            tail = after + tail
            end = reset.rewind.before_message_id
            continue
        spans = abandoned_spans(row for row in below if row.id < reset.id)
        kept = [row for row in compacted(below, reset)[1:] if not in_spans(row.id, spans)]
        return [reset, *kept, *tail]


def context_of(rows: Sequence[RowT]) -> list[RowT]:
    """The model's context among every row of a session (given in id order)."""
    return view_before(rows)
