"""The context rule with rewinds: the reference over rows, the store's loader, the agent.

Random histories interleave messages, unreadable rows, compactions (with any
split point), rewinds (to any user turn still on the line) and turns' errors
(rows the model never sees); three ways of computing the model's context must
agree on every one of them.
"""

from __future__ import annotations

import asyncio
import tempfile
from dataclasses import dataclass
from pathlib import Path

from helpers.events import model, user
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from koroku_tui.events import CompactionEvent, Event, RewindEvent, SessionEvent, TurnErrorEvent
from koroku_tui.events.turns import (
    abandoned_spans,
    compacted,
    context_of,
    in_spans,
    merge_spans,
    view_before,
)
from koroku_tui.store import SessionManager
from koroku_tui.store.context import load_context


@dataclass(frozen=True)
class Row:
    id: int
    event: Event | None
    rewind: RewindEvent | None = None
    turn_error: TurnErrorEvent | None = None


def _is_user(row: Row) -> bool:
    return isinstance(row.event, SessionEvent) and row.event.is_real_user_turn


@st.composite
def branching_rows(draw: st.DrawFn) -> list[Row]:
    """Rows of one session in id order; a rewind goes to a user turn on the line."""
    rows: list[Row] = []
    spans: list[tuple[int, int]] = []
    kinds = ["user", "model", "unreadable", "compaction", "rewind", "rewind", "error"]
    for row_id in range(1, draw(st.integers(min_value=0, max_value=18)) + 1):
        kind = draw(st.sampled_from(kinds))
        if kind == "rewind":
            line = [r.id for r in rows if _is_user(r) and not in_spans(r.id, spans)]
            if line:
                target = draw(st.sampled_from(line))
                rows.append(Row(row_id, None, RewindEvent(before_message_id=target)))
                spans = merge_spans([*spans, (target, row_id - 1)])
                continue
            kind = "user"
        if kind == "error":
            rows.append(Row(row_id, None, turn_error=TurnErrorEvent(message=f"e{row_id}")))
            continue
        event: Event | None
        if kind == "compaction":
            kept = draw(st.none() | st.integers(min_value=1, max_value=row_id + 1))
            event = CompactionEvent.from_summary(f"s{row_id}", kept_from_id=kept)
        elif kind == "unreadable":
            event = None
        else:
            event = user(f"u{row_id}") if kind == "user" else model(f"m{row_id}")
        rows.append(Row(row_id, event))
    return rows


def grown_row_by_row(rows: list[Row]) -> list[Row]:
    """The context as a live session grows it: a rewind restores an earlier snapshot."""
    context: list[Row] = []
    snapshots: dict[int, list[Row]] = {}
    history: list[Row] = []
    for row in rows:
        snapshots[row.id] = list(context)
        history.append(row)
        if row.rewind is not None:
            context = list(snapshots[row.rewind.before_message_id])
        elif isinstance(row.event, CompactionEvent):
            spans = abandoned_spans(history)
            line = [r for r in history if not in_spans(r.id, spans)]
            context = compacted(line, row)
        elif row.event is not None:
            context.append(row)
    return context


@settings(max_examples=300, deadline=None)
@given(branching_rows())
def test_the_rule_equals_the_context_grown_row_by_row(rows: list[Row]) -> None:
    assert [r.id for r in context_of(rows)] == [r.id for r in grown_row_by_row(rows)]
    for row in rows:  # and at every point of the history
        assert [r.id for r in view_before(rows, row.id)] == [
            r.id for r in grown_row_by_row([r for r in rows if r.id < row.id])
        ]


async def _write(store: SessionManager, rows: list[Row]) -> None:
    for row in rows:
        if row.rewind is not None:
            await store.rewind(row.rewind.before_message_id)
        elif row.turn_error is not None:
            assert await store.add_turn_error(row.turn_error) == row.id
        else:
            assert await store.add_message(row.event or user("to be broken")) == row.id
    assert [m.id for m in await store.load_all()] == [r.id for r in rows]


async def _break_unreadable(store: SessionManager, rows: list[Row]) -> None:
    """Hand-edit the rows meant to be unreadable (written readable by ``_write``)."""
    broken = [(r.id,) for r in rows if r.event is None and r.rewind is None and not r.turn_error]
    conn = await store.db()
    await conn.executemany("UPDATE messages SET event_json = '{' WHERE id = ?", broken)
    await conn.commit()


@settings(max_examples=60, deadline=None)
@given(branching_rows())
def test_the_store_loads_what_the_rule_says(rows: list[Row]) -> None:
    """Live context, fresh load (index seeks), user turns and spans all follow the rule.

    Unreadable rows are written readable, then broken by a hand edit: the
    live context grew while they were readable, a fresh load skips them.
    """
    written = [
        Row(r.id, r.event or (None if r.rewind or r.turn_error else user("to be broken")), r.rewind)
        for r in rows
    ]

    async def stored() -> tuple[list[int], list[int], list[int], list[tuple[int, int]], list[int]]:
        with tempfile.TemporaryDirectory() as folder:
            async with SessionManager(Path(folder) / "k.db") as store:
                await _write(store, rows)
                live = [m.id for m in await store.context_messages()]
                await _break_unreadable(store, rows)
                context, skipped = await load_context(await store.db(), store.session_id)
                turns = [m.id for m in await store.user_turns()]
                spans = await store.abandoned_spans()
                return live, [m.id for m in context.messages], turns, spans, [i for i, _ in skipped]

    live, loaded, turns, spans, skipped = asyncio.run(stored())
    # A turn's error is no message: passed over, never reported as unreadable.
    assert not {r.id for r in rows if r.turn_error} & set(skipped)
    assert live == [r.id for r in context_of(written)]
    assert loaded == [r.id for r in context_of(rows)]
    assert spans == abandoned_spans(rows)
    assert turns == [r.id for r in reversed(rows) if _is_user(r) and not in_spans(r.id, spans)]


@settings(max_examples=40, deadline=None)
@given(branching_rows())
def test_a_fork_holds_the_context_before_each_user_turn(rows: list[Row]) -> None:
    """Forking before any user turn (abandoned ones too) copies ``view_before`` it."""
    assume(rows)  # a session without messages is not stored: nothing to fork
    targets = [r.id for r in rows if _is_user(r)]

    def texts(events: list[Event]) -> list[str]:
        return [e.summary if isinstance(e, CompactionEvent) else e.text for e in events]

    async def forks() -> list[tuple[list[str], list[str]]]:
        pairs = []
        with tempfile.TemporaryDirectory() as folder:
            async with SessionManager(Path(folder) / "k.db") as store:
                await _write(store, rows)
                await _break_unreadable(store, rows)
                source = store.session_id
                for target in [*targets, None]:
                    fork = await store.fork(source, target)
                    await store.switch_session(fork.id)
                    got = texts(await store.load_messages())
                    await store.switch_session(source)
                    want = [r.event for r in view_before(rows, target) if r.event is not None]
                    pairs.append((got, texts(want)))
        return pairs

    for got, want in asyncio.run(forks()):
        assert got == want
