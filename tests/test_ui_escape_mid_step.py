"""Escape anywhere in a step: the screen shows what the history holds, as after a restart.

The agent stores a step whole even when a cancel lands meanwhile (a reply
and its calls' answers), but the hooks told the screen less: Escape while
the reply was being stored showed no cut notice, no rows for its calls and
a context gauge without it, and Escape while a call ran showed no rows for
the calls after it. A restart showed them all (found by the review helpers).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest
from google import genai
from helpers.agent_kit import held_first_call, held_writes
from helpers.ui_kit import build, polled, send, settle, texts

from koroku_tui.fake_gemini import FakeGemini, call_reply, stream_cut, text_reply
from koroku_tui.ui.app import KorokuApp
from koroku_tui.ui.main.blocks import NoticeBlock, ToolRow
from koroku_tui.ui.main.gauge import ContextGauge
from koroku_tui.ui.main.sidebar import ToolSidebar

Shown = tuple[list[str], list[str], list[tuple[str, str, str]], int]


def shown(app: KorokuApp) -> Shown:
    """The cut notices, the transcript's call rows, the sidebar's rows and the
    events the context gauge counts."""
    cut = [n for n in texts(app, NoticeBlock) if "cut off" in n]
    budget = app.query_one(ContextGauge).budget
    assert budget is not None
    return cut, texts(app, ToolRow), app.query_one(ToolSidebar).rows(), budget.events


async def escape_while_held(
    client: genai.Client,
    tmp_path: Path,
    held: tuple[asyncio.Event, asyncio.Event],
    check: Callable[[Shown], None],
) -> Shown:
    """Send, press Escape while ``held`` holds the step, let it go; what shows, live and after."""
    holding, release = held
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await send(pilot, app, "go")
        await polled(holding.is_set, "the step held")
        job = app.screen.turns.job  # type: ignore[attr-defined]
        await pilot.press("escape")
        await polled(lambda: job is not None and job.is_cancelled, "the turn cancelled")
        await asyncio.sleep(0)  # the cancel reaches the held step
        release.set()
        await settle(pilot, app)
        live = shown(app)
    check(live)
    again = build(tmp_path, client)  # the same session, reopened
    async with again.run_test(size=(120, 40)) as pilot:
        await settle(pilot, again)
        assert shown(again) == live
    return live


async def test_escape_while_a_cut_reply_is_stored_shows_the_cut(
    fake: FakeGemini, client: genai.Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake.add(text_reply("Cut here", finish_reason="MAX_TOKENS"))

    def check(live: Shown) -> None:
        assert len(live[0]) == 1 and "token limit" in live[0][0]

    await escape_while_held(client, tmp_path, held_writes(monkeypatch), check)


async def test_escape_while_a_reply_with_calls_is_stored_shows_its_calls(
    fake: FakeGemini, client: genai.Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a.txt").write_text("a\n")
    fake.add(call_reply(("read_file", {"path": "a.txt"}), ("read_file", {"path": "b.txt"})))

    def check(live: Shown) -> None:
        assert len(live[1]) == 2 and len(live[2]) == 2  # a row each, in both places

    await escape_while_held(client, tmp_path, held_writes(monkeypatch), check)


async def test_escape_while_a_call_runs_shows_the_calls_after_it(
    fake: FakeGemini, client: genai.Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a.txt").write_text("a\n")
    calls = [("read_file", {"path": f"{name}.txt"}) for name in ("a", "b", "c")]
    fake.add(call_reply(*calls))

    def check(live: Shown) -> None:
        assert len(live[1]) == 3 and len(live[2]) == 3

    await escape_while_held(client, tmp_path, held_first_call(monkeypatch), check)


async def test_a_reply_cut_after_its_calls_shows_them(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    """The connection drops once the calls arrived: stored answered "not run", shown so."""
    reply = call_reply(("read_file", {"path": "a.txt"}), ("read_file", {"path": "b.txt"}))
    fake.add(stream_cut(reply, after=1))
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await send(pilot, app, "go")
        await settle(pilot, app)
        live = shown(app)
    assert len(live[1]) == 2 and len(live[2]) == 2
    again = build(tmp_path, client)  # the same session, reopened
    async with again.run_test(size=(120, 40)) as pilot:
        await settle(pilot, again)
        assert shown(again) == live
