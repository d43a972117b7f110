"""The usage statistics, from rows the real agent stored while talking to the fake Gemini.

Two sessions on two models, a tool call that fails beside one that works, a
compaction; the figures must be the hand-added sums of what the fake
reported, a fork must not count its copies twice, and corrupted rows are
skipped and counted.
"""

from __future__ import annotations

import asyncio
import sqlite3
import sys
import time
import traceback
from collections.abc import AsyncIterator
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

import pytest
from helpers.agent_kit import open_agent
from test_store_migrations import SEED_WITH_KIND, build_seed

from koroku_tui.agent import Agent
from koroku_tui.events import (
    FCMetadata,
    FunctionResponseData,
    FunctionResponsePart,
    SessionEvent,
    TokenCounts,
)
from koroku_tui.fake_gemini import FakeGemini, Usage, call_reply, text_reply
from koroku_tui.store import SessionManager, ToolUsage, UsageStats
from koroku_tui.store.usage_stats import read_usage

pytestmark = pytest.mark.timeout(60)

SECOND_MODEL = "gemini-stats-second"


@dataclass
class History:
    """Two sessions the agent ran; ``agent`` is on the second (current) one."""

    agent: Agent
    store: SessionManager
    first: int
    second: int
    first_model: str


@pytest.fixture
async def history(fake: FakeGemini, tmp_path: Path) -> AsyncIterator[History]:
    (tmp_path / "notes.txt").write_text("buy milk\n")
    fake.add(
        call_reply(
            ("read_file", {"path": "notes.txt"}),
            ("read_file", {"path": "missing.txt"}),  # fails: no such file
            usage=Usage(
                prompt_tokens=100, candidates_tokens=10, thoughts_tokens=5, cached_tokens=40
            ),
        ),
        text_reply("One was there.", usage=Usage(prompt_tokens=200, candidates_tokens=20)),
        text_reply(
            "Sure.",
            usage=Usage(
                prompt_tokens=300, candidates_tokens=30, thoughts_tokens=7, cached_tokens=100
            ),
        ),
        text_reply("They talked about notes."),  # the compaction's summary
        text_reply(
            "Hello from B.", usage=Usage(prompt_tokens=400, candidates_tokens=40, thoughts_tokens=8)
        ),
    )
    async with open_agent(fake, tmp_path, auto_compact=True) as agent:
        store = agent.session_manager
        assert store is not None
        await agent.run_turn("Read notes.txt and missing.txt")
        await agent.run_turn("And again?")
        assert await agent.compact() is not None
        first, first_model = store.session_id, agent.model
        await store.new_session()
        await agent.refresh()
        await agent.use_model(SECOND_MODEL, window=1_000_000)
        await agent.run_turn("Hi")
        yield History(agent, store, first, store.session_id, first_model)


def only_model(stats: UsageStats, name: str) -> tuple[int, TokenCounts]:
    (model,) = [m for m in stats.models if m.model == name]
    assert model.timed == model.requests  # every reply was timed
    assert model.wait_seconds > 0
    return model.requests, model.tokens


async def test_the_figures_are_the_sums_of_what_gemini_reported(history: History) -> None:
    report = await history.store.usage_report(history.first)
    first = report.session
    assert [m.model for m in first.models] == [history.first_model]
    assert only_model(first, history.first_model) == (
        3,
        TokenCounts(
            tokens_in=100 + 200 + 300, tokens_out=10 + 20 + 30, cached=40 + 100, thinking=5 + 7
        ),
    )
    assert first.tools == (ToolUsage("read_file", calls=2, failures=1),)
    assert (first.compactions, first.unreadable) == (1, 0)

    everything = report.history
    assert only_model(everything, SECOND_MODEL) == (1, TokenCounts(400, 40, 0, 8))
    assert everything.requests == 4
    assert everything.tokens == TokenCounts(1_000, 100, 140, 20)
    assert (everything.tool_calls, everything.tool_failures, everything.compactions) == (2, 1, 1)

    second = await history.store.usage_stats()  # the current session: the second
    assert [(m.model, m.requests) for m in second.models] == [(SECOND_MODEL, 1)]
    assert (second.tools, second.compactions) == ((), 0)
    assert await history.store.usage_stats(all_history=True) == everything


async def test_a_fork_does_not_count_what_it_copied(history: History) -> None:
    before = await history.store.usage_stats(all_history=True)
    fork = await history.store.fork(history.first)
    assert fork.message_count > 0
    assert await history.store.usage_stats(all_history=True) == before
    assert (await history.store.usage_stats(fork.id)).requests == 0


def store_raw(database: Path, session_id: int, *rows: str | bytes) -> None:
    """Rows written as a hand edit or a broken disk would, past the store."""
    with closing(sqlite3.connect(database)) as conn:
        conn.executemany(
            "INSERT INTO messages(session_id, kind, event_json, created_at) "
            "VALUES (?, 'session', ?, ?)",
            [(session_id, row, time.time()) for row in rows],
        )
        conn.commit()


async def test_corrupted_rows_are_skipped_and_counted(history: History) -> None:
    before = await history.store.usage_stats(all_history=True)
    store_raw(
        history.store.path,
        history.second,
        '{"event_type":"session","role":"model","parts":[',  # cut off mid-write
        "not JSON at all",
        '["a list", "not an event"]',
        b"\xff\xfe binary",
    )
    after = await history.store.usage_stats(all_history=True)
    assert after.unreadable == 4
    assert (after.models, after.tools, after.compactions) == (
        before.models,
        before.tools,
        before.compactions,
    )
    assert (await history.store.usage_stats()).unreadable == 4
    assert (await history.store.usage_stats(history.first)).unreadable == 0


async def test_a_read_only_home_reads_the_same_figures(history: History) -> None:
    expected = await history.store.usage_report()
    async with SessionManager(history.store.path, read_only=True) as reader:
        assert await reader.usage_report(history.second) == expected


async def test_a_hand_edited_figure_past_any_float_counts_as_nothing(history: History) -> None:
    """1e999 is valid JSON that SQLite reads as infinity: the statistics still add up."""
    before = await history.store.usage_stats()
    store_raw(
        history.store.path,
        history.second,
        '{"event_type":"session","role":"model","parts":[],"model":"m-edited",'
        '"usage":{"prompt_token_count":1e999,"candidates_token_count":-1e999},'
        '"wait_seconds":1e999}',
    )
    after = await history.store.usage_stats()
    (edited,) = [m for m in after.models if m.model == "m-edited"]
    assert (edited.requests, edited.tokens, edited.wait_seconds) == (1, TokenCounts(), 0.0)
    assert after.tokens == before.tokens and after.requests == before.requests + 1


def scans_running() -> int:
    """Threads inside a usage read right now (their stacks, as the interpreter sees them)."""
    frames = sys._current_frames().values()
    return sum(
        any(frame.f_code is read_usage.__code__ for frame, _ in traceback.walk_stack(top))
        for top in frames
    )


def scan_started(within: float = 30.0) -> None:
    """Wait (in a thread: the loop must run the read) until a scan is inside ``read_usage``."""
    deadline = time.monotonic() + within
    while not scans_running():
        assert time.monotonic() < deadline, "the scan never started"
        time.sleep(0.001)


async def test_a_reader_gone_stops_the_scan_of_all_history(tmp_path: Path) -> None:
    """The screen closed while all history was counted: the scan must not go on for nothing
    (reopening it ten times would leave ten scans fighting the turn for the CPU)."""
    database = tmp_path / "koroku.db"
    answer = FunctionResponsePart(
        function_response=FunctionResponseData(name="read_file", response={"output": "x"}),
        fc_metadata=FCMetadata(name="read_file"),
    )
    answers = SessionEvent(role="user", parts=[answer] * 1_000)  # a slow row to count
    async with SessionManager(database) as store:
        await store.add_messages([answers])
        store_raw(database, store.session_id, *[answers.model_dump_json()] * 150)
        counting = asyncio.create_task(store.usage_stats(all_history=True))
        await asyncio.to_thread(scan_started)
        counting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await counting
        assert scans_running() == 0


async def test_rows_of_older_versions_count_as_untimed_replies_of_no_model(
    tmp_path: Path,
) -> None:
    """A seed-era file (upgraded on opening) and a reply stored before issue 27 (usage, but
    no model, no waiting time, no cached count)."""
    path = tmp_path / "agent.db"
    build_seed(path, SEED_WITH_KIND, with_kind=True)
    async with SessionManager(path) as store:
        before_27 = (
            '{"event_type":"session","role":"model","parts":[{"thought":null,'
            '"thought_signature_b64":null,"kind":"text","text":"Hi."}],"usage":'
            '{"prompt_token_count":120,"candidates_token_count":3,"thoughts_token_count":null,'
            '"total_token_count":123},"finish_reason":"STOP"}'
        )
        store_raw(path, store.session_id, before_27)
        stats = await store.usage_stats(all_history=True)
    assert [(m.model, m.requests, m.timed, m.wait_seconds) for m in stats.models] == [
        (None, 3, 0, 0.0)  # the seed's two replies and the one before issue 27
    ]
    assert stats.tokens == TokenCounts(tokens_in=120, tokens_out=3)
    assert (stats.compactions, stats.unreadable, stats.tools) == (2, 0, ())


async def test_a_model_that_is_no_name_counts_with_the_unrecorded_ones(history: History) -> None:
    """Hand-edited rows: a number for a model, words for a time. One "model not recorded"
    row, and a time that is no number is no timing."""
    reply = (
        '{{"event_type":"session","role":"model","parts":[],"model":{model},"wait_seconds":{wait}}}'
    )
    store_raw(
        history.store.path,
        history.second,
        reply.format(model="null", wait="null"),
        reply.format(model="5", wait='"soon"'),
    )
    stats = await history.store.usage_stats()
    unrecorded = [m for m in stats.models if m.model is None]
    assert [(m.requests, m.timed) for m in unrecorded] == [(2, 0)]
