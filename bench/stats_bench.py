"""How long the usage statistics take on a year of history. Prints figures, asserts nothing.

Run: ``uv run python bench/stats_bench.py`` (100,000 messages; about a
minute to write them), or ``--quick``.

Writes a history through the real ``SessionManager``: sessions of turns
(a question, a reply calling a tool with its usage, model and waiting time,
the tool's answer of 0.5 to 3 KB, one in ten a failure, a final answer),
two models, a compaction every 250 rows. Then times ``usage_report`` (one
session and all history, as the screen asks) and, for scale, what reading
every row's JSON in Python would cost before any counting: ``json.loads``
alone, and the store's own event parsing (pydantic), on the same rows.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from contextlib import closing
from pathlib import Path

from koroku_tui.events import (
    CompactionEvent,
    Event,
    FCMetadata,
    FunctionCallData,
    FunctionCallPart,
    FunctionResponseData,
    FunctionResponsePart,
    SessionEvent,
    StoredEventAdapter,
    TextPart,
    TokenUsage,
)
from koroku_tui.store import SessionManager

MODELS = ("gemini-3-pro-preview", "gemini-3-flash-preview")
WORDS = ("the", "backup", "script", "failed", "last", "night", "because", "disk", "was", "full")
ROUNDS = 5
COMPACT_EVERY = 250


def text(rng: random.Random, chars: int) -> str:
    out: list[str] = []
    size = 0
    while size < chars:
        word = rng.choice(WORDS)
        out.append(word)
        size += len(word) + 1
    return " ".join(out)


def reply(rng: random.Random, model: str, parts: list[TextPart | FunctionCallPart]) -> SessionEvent:
    usage = TokenUsage(
        prompt_token_count=rng.randint(1_000, 90_000),
        candidates_token_count=rng.randint(10, 900),
        thoughts_token_count=rng.randint(0, 400),
        cached_content_token_count=rng.choice((None, rng.randint(0, 800))),
    )
    return SessionEvent(
        role="model",
        parts=list(parts),
        usage=usage,
        model=model,
        wait_seconds=round(rng.uniform(0.4, 9.0), 3),
        finish_reason="STOP",
    )


def turn(rng: random.Random, model: str) -> list[Event]:
    tool = rng.choice(("read_file", "run_command", "search_history", "write_file"))
    call = FunctionCallPart(function_call=FunctionCallData(name=tool, args={"path": "notes.md"}))
    failed = rng.random() < 0.1
    answer = {"error": "no such file"} if failed else {"output": text(rng, rng.randint(500, 3000))}
    response = FunctionResponsePart(
        function_response=FunctionResponseData(name=tool, response=answer),
        fc_metadata=FCMetadata(name=tool, args={"path": "notes.md"}),
    )
    return [
        SessionEvent(role="user", parts=[TextPart(text=text(rng, 200))]),
        reply(rng, model, [call]),
        SessionEvent(role="user", parts=[response]),
        reply(rng, model, [TextPart(text=text(rng, 1200))]),
    ]


async def build(path: Path, sessions: int, per_session: int) -> int:
    rng = random.Random(27)
    async with SessionManager(path) as store:
        for n in range(sessions):
            events: list[Event] = []
            while len(events) < per_session:
                events.extend(turn(rng, MODELS[n % 2]))
                if len(events) % COMPACT_EVERY < 4:
                    events.append(CompactionEvent.from_summary(text(rng, 2000)))
            await store.add_messages(events[:per_session])
            await store.new_session()
        return (await store.list_sessions(1))[0].id


def python_reads(path: Path) -> tuple[float, float]:
    """CPU ms to ``json.loads`` every row, and to parse every row as the store does (pydantic).

    The rows are read into memory first, not timed: the figures are the parsing alone.
    """
    with closing(sqlite3.connect(path)) as conn:
        rows = [raw for (raw,) in conn.execute("SELECT event_json FROM messages")]
    started = time.process_time()
    for raw in rows:
        json.loads(raw)
    loads = (time.process_time() - started) * 1000
    started = time.process_time()
    for raw in rows:
        StoredEventAdapter.validate_json(raw)
    return loads, (time.process_time() - started) * 1000


async def main(quick: bool) -> None:
    sessions, per_session = (4, 300) if quick else (200, 500)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "koroku.db"
        last = await build(path, sessions, per_session)
        size = path.stat().st_size / 1e6
        print(f"{sessions * per_session:,} messages in {sessions:,} sessions ({size:,.0f} MB)")
        times: dict[str, list[float]] = {"report": [], "session": [], "history": []}
        work: dict[str, list[float]] = {name: [] for name in times}
        async with SessionManager(path, session_id=last) as store:
            for _ in range(ROUNDS):
                for name, read in (
                    ("report", store.usage_report),
                    ("session", store.usage_stats),
                    ("history", lambda: store.usage_stats(all_history=True)),
                ):
                    started, cpu = time.perf_counter(), time.process_time()
                    await read()
                    times[name].append((time.perf_counter() - started) * 1000)
                    work[name].append((time.process_time() - cpu) * 1000)
            report = await store.usage_report()
        for name, what in (
            ("session", "usage_stats, the last session (the screen's first column)"),
            ("history", "usage_stats(all_history=True)"),
            ("report", "usage_report (both, one snapshot)"),
        ):
            ms, cpu = times[name], statistics.median(work[name])
            print(
                f"{what}: p50 {statistics.median(ms):,.1f} ms, max {max(ms):,.1f} ms "
                f"(CPU p50 {cpu:,.1f} ms)"
            )
        history = report.history
        print(
            f"  found {history.requests:,} requests, {history.tool_calls:,} tool calls "
            f"({history.tool_failures:,} failed), {history.compactions:,} compactions"
        )
        loads, validated = python_reads(path)
        print(
            f"for scale, parsing every row in Python (CPU): json.loads {loads:,.0f} ms, "
            f"as events {validated:,.0f} ms"
        )
        print(
            f"(over {ROUNDS} runs each; the screen reads them in a worker; CPU time, the "
            "worker thread's included, is what a busy shared machine does not inflate)"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small history (a smoke run)")
    asyncio.run(main(parser.parse_args().quick))
    sys.exit(0)
