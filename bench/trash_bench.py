"""What leaving the trash out costs a search (schema 6). Prints figures, asserts nothing.

Run: ``uv run python bench/trash_bench.py`` (about a minute), or ``--quick``.

Every search leaves out the rows of the sessions in the trash with one
subquery (``search._LIVE``). This writes a history through the real
``SessionManager`` (sessions of 100 messages sharing everyday words), then
times the history screen's search (``search_page``) and the model's
(``search_history``) for a set of queries, with the trash empty and with a
fifth of the sessions in it, and the raw candidate query with and without
the filter, all in one run: the ratios are what to read.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from contextlib import closing
from pathlib import Path

from koroku_tui.events import SessionEvent, TextPart
from koroku_tui.store import SessionManager
from koroku_tui.store.search import _CANDIDATES_SQL, CANDIDATES, build_match_query

WORDS = [
    *("backup", "deploy", "certificate", "test", "server", "database", "nightly", "script"),
    *("release", "branch", "garden", "tomato", "budget", "invoice", "report", "meeting"),
    *("schedule", "migration", "index", "cache", "kernel", "network", "printer", "laptop"),
    *("keyboard", "holiday", "flight", "hotel", "museum", "recipe"),
]
QUERIES = [
    "nightly backup script",
    "certificate renewal",
    "deploy the release branch",
    "tomato garden",
    "flight and hotel",
    "database migration index",
]
ROUNDS = 5


def sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 30)))


async def build(path: Path, sessions: int, per_session: int) -> list[int]:
    rng = random.Random(22)
    ids: list[int] = []
    async with SessionManager(path) as store:
        for _ in range(sessions):
            ids.append(store.session_id)
            events = [
                SessionEvent(role=("user", "model")[n % 2], parts=[TextPart(text=sentence(rng))])
                for n in range(per_session)
            ]
            await store.add_messages(events)
            await store.new_session()
    return ids


async def timed(search: Callable[[str], Awaitable[object]], query: str) -> float:
    started = time.perf_counter()
    await search(query)
    return (time.perf_counter() - started) * 1000


async def searches(store: SessionManager) -> tuple[list[float], list[float]]:
    page: list[float] = []
    history: list[float] = []
    for _ in range(ROUNDS):
        for query in QUERIES:
            page.append(await timed(store.search_page, query))
            history.append(await timed(store.search_history, query))
    return page, history


def raw_candidates(path: Path) -> tuple[float, float]:
    """p50 ms of the candidate query with the trash filter, and without it."""
    unfiltered = _CANDIDATES_SQL.replace(
        _CANDIDATES_SQL[_CANDIDATES_SQL.index("AND rowid NOT IN") : _CANDIDATES_SQL.index(")\n")]
        + ")",
        "",
    )
    with closing(sqlite3.connect(path)) as conn:
        times: dict[str, list[float]] = {"with": [], "without": []}
        for _ in range(ROUNDS):
            for query in QUERIES:
                match = build_match_query(query)
                for name, sql in (("with", _CANDIDATES_SQL), ("without", unfiltered)):
                    started = time.perf_counter()
                    conn.execute(sql, (match, 0, CANDIDATES + 10)).fetchall()  # floor 0: all
                    times[name].append((time.perf_counter() - started) * 1000)
    return statistics.median(times["with"]), statistics.median(times["without"])


def p(values: list[float], q: float) -> float:
    return sorted(values)[min(len(values) - 1, int(q * len(values)))]


async def main(quick: bool) -> None:
    sessions, per_session = (20, 50) if quick else (400, 100)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "koroku.db"
        ids = await build(path, sessions, per_session)
        total = sessions * per_session
        print(f"{total:,} messages in {sessions:,} sessions")
        async with SessionManager(path) as store:
            empty_page, empty_history = await searches(store)
            with_filter, without = raw_candidates(path)
            for session_id in ids[::5]:
                await store.delete_session(session_id)
            full_page, full_history = await searches(store)
            trashed = len(await store.list_trash(len(ids)))
            with_full, without_full = raw_candidates(path)
        print(f"trash: empty, then {trashed:,} sessions ({trashed * per_session:,} messages)")
        for name, empty, full in (
            ("search_page (history screen)", empty_page, full_page),
            ("search_history (the model)", empty_history, full_history),
        ):
            before, after = statistics.median(empty), statistics.median(full)
            print(
                f"{name}: p50 {before:.1f} ms -> {after:.1f} ms (ratio {after / before:.2f}), "
                f"p95 {p(empty, 0.95):.1f} -> {p(full, 0.95):.1f} ms"
            )
        print(
            f"candidate query, empty trash: with the filter {with_filter:.2f} ms, without "
            f"{without:.2f} ms (ratio {with_filter / without:.2f})"
        )
        print(
            f"candidate query, a fifth in the trash: with the filter {with_full:.2f} ms, without "
            f"{without_full:.2f} ms (ratio {with_full / without_full:.2f})"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small smoke run")
    asyncio.run(main(parser.parse_args().quick))
    sys.exit(0)
