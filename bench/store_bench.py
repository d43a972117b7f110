"""How the session store's costs scale with history length. Prints figures and ratios.

Run: ``uv run python bench/store_bench.py`` (about 20 s; no assertions).

1. Per-step persistence cost of one agent step: append a user SessionEvent,
   take the context (``load_messages()``), append a model SessionEvent.
   Median over many steps with 30, 3,000 and 30,000 events after the latest
   compaction (starting sizes: each step adds two). Goal: 30,000 within 1.3x
   of 30. ``load_messages()`` is served from memory but returns a fresh list,
   an O(n) pointer copy; its own median is shown so the one size-dependent
   part of a step is visible.
2. Time to open a session (``initialize()`` + ``load_messages()``) whose
   1,000-event tail follows a compaction preceded by ~99,000 events, versus
   the same tail after a compaction preceded by 10 events. Goal: ~1.0x.

Databases are built directly with sqlite3 (executemany, one transaction) and
read back only through ``SessionManager``.
"""

from __future__ import annotations

import asyncio
import sqlite3
import statistics
import sys
import tempfile
import time
from contextlib import closing
from pathlib import Path

from koroku_tui.events import CompactionEvent, SessionEvent, TextPart, encode_signature
from koroku_tui.store import SessionManager
from koroku_tui.store.schema import migrate
from koroku_tui.store.search import searchable_text

STEP_SIZES = (30, 3_000, 30_000)
ROUNDS = 20
BLOCK_STEPS = 25  # timed steps per block; ROUNDS * BLOCK_STEPS per size
WARMUP_STEPS = 5
OPEN_REPEATS = 41
BIG_PREFIX = 98_999  # + 1 compaction + 1,000 tail = 100,000 events
SMALL_PREFIX = 10
TAIL = 1_000

_FILLER = (
    "The quick brown fox reads the build log, finds the failing test, and proposes "
    "a fix with a short explanation of the cause. "
)
_SIGNATURE = encode_signature(bytes(range(64)) * 4)


def make_event(index: int) -> SessionEvent:
    """Alternating user / model events of realistic size (a signed model reply)."""
    if index % 2 == 0:
        return SessionEvent(role="user", parts=[TextPart(text=f"Question {index}: {_FILLER}")])
    return SessionEvent(
        role="model",
        parts=[
            TextPart(text=f"Thinking about {index}.", thought=True),
            TextPart(text=f"Answer {index}: {_FILLER * 2}", thought_signature_b64=_SIGNATURE),
        ],
    )


def build_sessions(path: Path, shapes: list[tuple[int, int]]) -> list[int]:
    """One session per ``(prefix, tail)``: prefix events, a compaction, tail events."""
    with closing(sqlite3.connect(path, isolation_level=None)) as conn:
        conn.execute("PRAGMA journal_mode = WAL")
        migrate(conn)
        conn.execute("BEGIN")
        now = time.time() - 200_000
        next_id = 1
        session_ids: list[int] = []
        for prefix, tail in shapes:
            session_id = conn.execute(
                "INSERT INTO sessions(title, created_at, updated_at) VALUES ('bench', ?, ?) "
                "RETURNING id",
                (now, now),
            ).fetchone()[0]
            session_ids.append(session_id)
            events: list[SessionEvent | CompactionEvent] = [make_event(i) for i in range(prefix)]
            events.append(CompactionEvent.from_summary("Summary of everything before."))
            events.extend(make_event(prefix + i) for i in range(tail))
            ids = range(next_id, next_id + len(events))
            next_id += len(events)
            conn.executemany(
                "INSERT INTO messages(id, session_id, kind, event_json, created_at) "
                "VALUES (?, ?, ?, ?, ?)",
                [
                    (row_id, session_id, e.event_type, e.model_dump_json(), now + row_id)
                    for row_id, e in zip(ids, events, strict=True)
                ],
            )
            conn.executemany(
                "INSERT INTO messages_fts(rowid, text, role) VALUES (?, ?, ?)",
                [
                    (row_id, searchable_text(e), e.role if isinstance(e, SessionEvent) else None)
                    for row_id, e in zip(ids, events, strict=True)
                ],
            )
            conn.execute(
                "UPDATE sessions SET message_count = ?, compaction_count = 1, updated_at = ? "
                "WHERE id = ?",
                (len(events), now + next_id, session_id),
            )
        conn.execute("COMMIT")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return session_ids


class StepCosts:
    """Seconds per step and per ``load_messages()`` call, kept per round and size."""

    def __init__(self, sizes: tuple[int, ...]) -> None:
        self.rounds: list[dict[int, list[float]]] = []
        self.loads: dict[int, list[float]] = {size: [] for size in sizes}

    def steps(self, size: int) -> list[float]:
        return [t for one_round in self.rounds for t in one_round[size]]

    def paired_ratio(self, size: int, baseline: int) -> float:
        """Median over rounds of (median step at ``size`` / median step at ``baseline``)."""
        return statistics.median(
            statistics.median(r[size]) / statistics.median(r[baseline]) for r in self.rounds
        )


async def step_costs(path: Path, sessions: dict[int, int]) -> StepCosts:
    """Time agent steps for each context size.

    All sizes live in one file and run on one SessionManager (one SQLite
    thread), in rotating blocks: drift in the machine's state (CPU clocks,
    thread wake-up latency, page cache) then hits every size alike. Ratios
    are taken within a round and their median reported. Each block starts
    with untimed warm-up steps (switching sessions reloads the context).
    """
    costs = StepCosts(tuple(sessions))
    user = make_event(0)
    reply = make_event(1)
    async with SessionManager(path) as store:
        for _ in range(ROUNDS):
            this_round: dict[int, list[float]] = {}
            costs.rounds.append(this_round)
            for size, session_id in sessions.items():
                await store.switch_session(session_id)
                this_round[size] = []
                for step in range(WARMUP_STEPS + BLOCK_STEPS):
                    started = time.perf_counter()
                    await store.add_message(user)
                    before_load = time.perf_counter()
                    context = await store.load_messages()
                    after_load = time.perf_counter()
                    await store.add_message(reply)
                    finished = time.perf_counter()
                    assert isinstance(context[0], CompactionEvent)
                    if step >= WARMUP_STEPS:
                        this_round[size].append(finished - started)
                        costs.loads[size].append(after_load - before_load)
    return costs


async def open_once(path: Path) -> float:
    """Seconds to initialize and take the context (closing is not timed)."""
    store = SessionManager(path)
    started = time.perf_counter()
    await store.initialize()
    context = await store.load_messages()
    elapsed = time.perf_counter() - started
    assert len(context) == TAIL + 1
    await store.close()
    return elapsed


async def open_costs(big: Path, small: Path) -> tuple[list[float], list[float]]:
    """Open times of both files, in alternating pairs, after one untimed open of each."""
    await open_once(big)
    await open_once(small)
    big_times: list[float] = []
    small_times: list[float] = []
    for _ in range(OPEN_REPEATS):
        big_times.append(await open_once(big))
        small_times.append(await open_once(small))
    return big_times, small_times


def us(seconds: float) -> str:
    return f"{seconds * 1e6:9.0f} us"


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:8.2f} ms"


async def main() -> None:
    began = time.perf_counter()
    print(f"Python {sys.version.split()[0]}, SQLite {sqlite3.sqlite_version}")
    with tempfile.TemporaryDirectory(prefix="koroku-bench-") as folder:
        root = Path(folder)

        print(
            f"\n1. Per-step cost (append user + load_messages + append model), "
            f"{ROUNDS * BLOCK_STEPS} steps per size, in rotating blocks of {BLOCK_STEPS}"
        )
        print(
            f"{'events after compaction':>24} | {'step median':>12} | {'step p90':>12} |"
            f" {'load_messages median':>20}"
        )
        steps_db = root / "steps.db"
        ids = build_sessions(steps_db, [(SMALL_PREFIX, size) for size in STEP_SIZES])
        costs = await step_costs(steps_db, dict(zip(STEP_SIZES, ids, strict=True)))
        for size in STEP_SIZES:
            steps = costs.steps(size)
            p90 = statistics.quantiles(steps, n=10)[-1]
            print(
                f"{size:>24,} | {us(statistics.median(steps)):>12} | {us(p90):>12} |"
                f" {us(statistics.median(costs.loads[size])):>20}"
            )

        print(f"\n2. Open (initialize + load_messages), median of {OPEN_REPEATS}, tail {TAIL:,}")
        big = root / "open-big.db"
        small = root / "open-small.db"
        build_sessions(big, [(BIG_PREFIX, TAIL)])
        build_sessions(small, [(SMALL_PREFIX, TAIL)])
        big_times, small_times = await open_costs(big, small)
        big_open = statistics.median(big_times)
        small_open = statistics.median(small_times)
        open_ratio = statistics.median(b / s for b, s in zip(big_times, small_times, strict=True))
        print(f"{'events before compaction':>24} | {'events in db':>12} | {'open median':>12}")
        print(f"{BIG_PREFIX:>24,} | {BIG_PREFIX + 1 + TAIL:>12,} | {ms(big_open):>12}")
        print(f"{SMALL_PREFIX:>24,} | {SMALL_PREFIX + 1 + TAIL:>12,} | {ms(small_open):>12}")

    print("\nRatios (median of ratios within a round / an alternating pair)")
    print(
        f"  step cost, 3,000 vs 30 events after compaction:  {costs.paired_ratio(3_000, 30):.2f}x"
    )
    print(
        f"  step cost, 30,000 vs 30 events after compaction: "
        f"{costs.paired_ratio(30_000, 30):.2f}x  (goal <= 1.3x)"
    )
    print(f"  open, ~99,000 vs 10 events before compaction:    {open_ratio:.2f}x  (goal ~1.0x)")
    print(f"\nTotal bench time {time.perf_counter() - began:.1f} s")


if __name__ == "__main__":
    asyncio.run(main())
