"""The usage statistics in the real app: the palette's screen, and the gauge's turn tokens."""

from __future__ import annotations

from pathlib import Path

import pytest
from google import genai
from helpers.ui_kit import build, plain, run_command, send, settle, wait_for_approval, wait_until
from test_slash_commands import typed

from koroku_tui.config.settings import Settings
from koroku_tui.events import (
    FCMetadata,
    FunctionResponseData,
    FunctionResponsePart,
    SessionEvent,
    TextPart,
    TokenUsage,
)
from koroku_tui.fake_gemini import FakeGemini, Usage, call_reply, text_reply
from koroku_tui.store import SessionManager
from koroku_tui.ui.main.gauge import ContextGauge
from koroku_tui.ui.main.screen import MainScreen
from koroku_tui.ui.main.stats_view import UsageView

pytestmark = pytest.mark.timeout(60)

# An MCP server names its tools: this one would retitle the terminal and bold the screen.
HOSTILE_TOOL = "evil\x1b]0;pwned\x07[bold]name"


async def seed_history(home: Path) -> None:
    """An earlier session: one reply of another model, one failed call of the hostile tool."""
    async with SessionManager(Settings(home=home).database_path) as store:
        response = FunctionResponsePart(
            function_response=FunctionResponseData(name="x", response={"error": "no"}),
            fc_metadata=FCMetadata(name=HOSTILE_TOOL),
        )
        usage = TokenUsage(prompt_token_count=1_000, candidates_token_count=100)
        await store.add_messages(
            [
                SessionEvent(role="user", parts=[TextPart(text="earlier")]),
                SessionEvent(role="model", parts=[TextPart(text="ok")], usage=usage, model="m-old"),
                SessionEvent(role="user", parts=[response]),
            ]
        )


def lines(widget_text: str) -> list[list[str]]:
    """Each line of a table as its cells (columns are two or more spaces apart)."""
    return [line.split() for line in widget_text.splitlines()]


async def test_the_palette_shows_this_session_and_all_history(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    await seed_history(tmp_path)
    usage = Usage(prompt_tokens=1_234, candidates_tokens=56, thoughts_tokens=7, cached_tokens=89)
    fake.add(text_reply("Hello.", usage=usage))
    app = build(tmp_path, client, new_session=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await send(pilot, app, "hi")
        await settle(pilot, app)
        await run_command(pilot, app, "Usage statistics", "Usage statistics")
        await wait_until(pilot, lambda: isinstance(app.screen, UsageView), "the stats screen")
        await settle(pilot, app)
        view = app.screen
        summary = lines(plain(view.query_one("#stats-summary")))
        assert ["Requests", "1", "2"] in summary
        assert ["Tokens", "in", "1,234", "2,234"] in summary
        assert ["of", "which", "cached", "89", "89"] in summary
        assert ["Tokens", "out", "56", "156"] in summary
        assert ["Thinking", "tokens", "7", "7"] in summary
        assert ["Tool", "calls", "0", "1"] in summary
        assert ["failed", "0", "1"] in summary
        models = plain(view.query_one("#stats-models"))
        assert f"{app.model}" in models and "m-old" in models
        tools = plain(view.query_one("#stats-tools"))
        # Shown as written, escapes visible: no ESC reaches the terminal, no markup is applied.
        assert "\x1b" not in tools and "\x07" not in tools
        assert "evil\\u001b]0;pwned\\u0007[bold]name" in tools
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, MainScreen), "the screen closing")


async def test_the_gauge_tooltip_counts_the_turn_as_it_goes(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    first = Usage(prompt_tokens=1_000, candidates_tokens=10, thoughts_tokens=5, cached_tokens=400)
    fake.add(
        call_reply(("run_command", {"command": "echo hi"}), usage=first),
        text_reply("Done.", usage=Usage(prompt_tokens=1_100, candidates_tokens=20)),
    )
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        gauge = app.query_one(ContextGauge)
        await send(pilot, app, "run it")
        await wait_for_approval(pilot, app)  # the turn waits, one reply in
        expected = "This turn: 1,000 in (400 cached) · 10 out · 5 thinking · 1 request"
        assert gauge.tooltip == expected
        await pilot.press("y")
        await settle(pilot, app)
        expected = "Last turn: 2,100 in (400 cached) · 30 out · 5 thinking · 2 requests"
        assert gauge.tooltip == expected


async def test_slash_stats_opens_the_same_screen(client: genai.Client, tmp_path: Path) -> None:
    await seed_history(tmp_path)
    app = build(tmp_path, client, new_session=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await typed(pilot, "/stats")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, UsageView), "the stats screen")
        await settle(pilot, app)
        assert "m-old" in plain(app.screen.query_one("#stats-models"))
