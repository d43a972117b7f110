"""How long a fork takes: a 100,000-event session next to a 1,000-event one.

Run: ``uv run python bench/fork_bench.py`` (about a minute, mostly building),
or ``--quick`` for a smoke run (seconds; the figures mean little).

Each session alternates a user message and a signed model reply of realistic
size (a thought, ~250 characters of answer, a 256-byte thought signature),
every tenth turn a signed tool call and its result, stored through
``SessionManager.add_messages`` (so the search index is filled as in use).
Timed: ``SessionManager.fork`` of the whole session (the worst case: every
row is copied) and at a user message in the middle, median of a few runs, in
the same process and file. Goal: under 1 s at 100,000 events.

It also times what indexing the copies for search would add (the copies'
rows of ``messages_fts`` written from the source's, in SQL), which the store
does not do: see the ``store.branching`` docstring.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from koroku_tui.events import (
    Event,
    FCMetadata,
    FunctionCallData,
    FunctionCallPart,
    FunctionResponseData,
    FunctionResponsePart,
    SessionEvent,
    TextPart,
    encode_signature,
)
from koroku_tui.store import SessionManager

FULL = (100_000, 1_000)
QUICK = (2_000, 200)
REPEATS = 5
BATCH = 10_000

_FILLER = (
    "The quick brown fox reads the build log, finds the failing test, and proposes "
    "a fix with a short explanation of the cause. "
)
_SIGNATURE = encode_signature(bytes(range(256)))


def make_events(count: int) -> list[Event]:
    """``count`` events: user, signed reply; every tenth turn a signed call and its result."""
    events: list[Event] = []
    turn = 0
    while len(events) < count:
        events.append(SessionEvent(role="user", parts=[TextPart(text=f"Q{turn}: {_FILLER}")]))
        if turn % 10 == 9:
            call = FunctionCallData(name="read_file", args={"path": f"f{turn}.txt"}, id=f"c{turn}")
            events.append(
                SessionEvent(
                    role="model",
                    parts=[FunctionCallPart(function_call=call, thought_signature_b64=_SIGNATURE)],
                )
            )
            answer = FunctionResponseData(
                name="read_file", response={"output": _FILLER * 3}, id=f"c{turn}"
            )
            events.append(
                SessionEvent(
                    role="user",
                    parts=[
                        FunctionResponsePart(
                            function_response=answer,
                            fc_metadata=FCMetadata(name="read_file", args=call.args or {}),
                        )
                    ],
                )
            )
        events.append(
            SessionEvent(
                role="model",
                parts=[
                    TextPart(text=f"Thinking about {turn}.", thought=True),
                    TextPart(text=f"A{turn}: {_FILLER * 2}", thought_signature_b64=_SIGNATURE),
                ],
            )
        )
        turn += 1
    return events[:count]


async def build(store: SessionManager, count: int) -> int:
    """A new session of ``count`` events; returns its id."""
    info = await store.new_session(f"{count:,} events")
    events = make_events(count)
    base = time.time() - count
    for start in range(0, count, BATCH):
        chunk = events[start : start + BATCH]
        await store.add_messages(chunk, [base + start + i for i in range(len(chunk))])
    return info.id


async def time_forks(store: SessionManager, session_id: int, before: int | None) -> float:
    """Median seconds of ``REPEATS`` forks (each fork is deleted again after its run)."""
    times: list[float] = []
    for _ in range(REPEATS):
        started = time.perf_counter()
        fork = await store.fork(session_id, before)
        times.append(time.perf_counter() - started)
        await store.delete_session(fork.id)
    return statistics.median(times)


async def time_index_copy(store: SessionManager, session_id: int) -> float:
    """Seconds to write search rows for a whole-session fork's copies (not done by fork).

    The copies' rows are paired with their sources by position (two numbered
    temporary tables), and the source's index text is reused: the cheapest
    way to index them, rolled back afterwards.
    """
    fork = await store.fork(session_id)
    conn = await store.db()
    started = time.perf_counter()
    await conn.execute("BEGIN IMMEDIATE")
    for table, source in (("old_ids", session_id), ("new_ids", fork.id)):
        await conn.execute(f"CREATE TEMP TABLE {table}(k INTEGER PRIMARY KEY, id INTEGER)")
        await conn.execute(
            f"INSERT INTO {table}(id) SELECT id FROM messages WHERE session_id = ? ORDER BY id",
            (source,),
        )
    await conn.execute(
        "INSERT INTO messages_fts(rowid, text, role) "
        "SELECT new_ids.id, f.text, f.role FROM new_ids JOIN old_ids USING (k) "
        "JOIN messages_fts f ON f.rowid = old_ids.id"
    )
    elapsed = time.perf_counter() - started
    await conn.execute("ROLLBACK")
    await store.delete_session(fork.id)
    return elapsed


async def middle_user_turn(store: SessionManager, session_id: int) -> int:
    turns = await store.user_turns(session_id, limit=10**9)
    return turns[len(turns) // 2].id


async def main(quick: bool) -> None:
    big, small = QUICK if quick else FULL
    with tempfile.TemporaryDirectory() as folder:
        async with SessionManager(Path(folder) / "fork.db") as store:
            started = time.perf_counter()
            big_id = await build(store, big)
            small_id = await build(store, small)
            print(f"built {big:,} + {small:,} events in {time.perf_counter() - started:.1f} s")
            whole_big = await time_forks(store, big_id, None)
            whole_small = await time_forks(store, small_id, None)
            half_big = await time_forks(store, big_id, await middle_user_turn(store, big_id))
            index_big = await time_index_copy(store, big_id)
    print(f"fork of all {big:,} events: {whole_big * 1000:.0f} ms (median of {REPEATS})")
    print(f"fork of all {small:,} events: {whole_small * 1000:.1f} ms")
    print(f"ratio {big:,} vs {small:,} events: {whole_big / whole_small:.1f}x")
    print(f"fork at the middle user turn of {big:,} events: {half_big * 1000:.0f} ms")
    print(f"indexing the {big:,} copies for search would add: {index_big * 1000:.0f} ms")
    verdict = "under" if whole_big < 1.0 else "OVER"
    print(f"goal: a fork of {big:,} events under 1 s: {verdict}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small smoke run (seconds)")
    asyncio.run(main(parser.parse_args().quick))
