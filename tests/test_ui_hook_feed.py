"""A step's results reach the screen when the agent asks the model again, not while it stores them.

After a step's tools answer, the agent stores their results and builds the
next request: CPU work in the one interpreter the screen draws in. A
thousand calls' rows drawn in the middle of it held the next request back
~50 ms (issue 22, item 21); drawn once the request is sent, they cost the
wait for the reply instead (``ui.main.bridge.HookFeed``).
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path
from typing import Any, cast

import pytest
from google import genai
from helpers.ui_kit import build, polled, send, settle
from textual.message import Message

from koroku_tui.agent.hooks import TextDelta
from koroku_tui.agent.tools.registry import ToolRegistry
from koroku_tui.config.settings import Settings
from koroku_tui.fake_gemini import FakeGemini, Hang, call_reply, text_reply
from koroku_tui.ui.main import bridge
from koroku_tui.ui.main import messages as m
from koroku_tui.ui.main.bridge import HookFeed
from koroku_tui.ui.main.call_list import CallList
from koroku_tui.ui.main.screen import MainScreen
from koroku_tui.ui.main.sidebar import ToolSidebar

CALLS = 200


def stored_answers(home: Path) -> int:
    """Function responses stored so far (read as another process would)."""
    db = sqlite3.connect(Settings(home=home).database_path)
    try:
        rows = [json.loads(j) for (j,) in db.execute("select event_json from messages")]
    finally:
        db.close()
    parts = [p for row in rows for p in row.get("parts", [])]
    return sum(1 for part in parts if part.get("function_response"))


async def test_a_steps_results_are_shown_once_stored_while_the_model_is_asked(
    fake: FakeGemini, client: genai.Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake.add(call_reply(*[("read_memory", {"date": "list"}) for _ in range(CALLS)]), Hang())
    stored_when_shown: list[int] = []
    post = MainScreen.post_message

    def recording(screen: MainScreen, message: Message) -> bool:
        if isinstance(message, m.AgentBatch) and any(
            isinstance(item, m.AgentToolResult) for item in message.messages
        ):
            stored_when_shown.append(stored_answers(tmp_path))
        return post(screen, message)

    monkeypatch.setattr(MainScreen, "post_message", recording)
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await send(pilot, app, "go")
        # The next request hangs: every row is shown, finished, while the model is asked.
        await polled(lambda: len(fake.generate_requests) >= 2, "the step's next request")
        sidebar = app.query_one(ToolSidebar)

        def shown() -> bool:
            calls = [call for listed in app.query(CallList) for call in listed.calls]
            return sidebar.row_count == len(calls) == CALLS and all(c.done for c in calls)

        await polled(shown, "every call shown finished")
        assert stored_when_shown and stored_when_shown[0] == CALLS
        await pilot.press("escape")
        await settle(pilot, app)


def slow_registry(release: asyncio.Event) -> ToolRegistry:
    registry = ToolRegistry()

    @registry.register
    def quick() -> str:
        """Answer at once."""
        return "quick answer"

    @registry.register
    async def slow() -> str:
        """Answer when the test lets it."""
        await release.wait()
        return "waited"

    return registry


async def test_a_call_after_a_result_shows_while_it_runs_long(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    """Held results wait for the next request at most a moment: a slow call after them shows."""
    release = asyncio.Event()
    fake.add(call_reply(("quick", {}), ("slow", {})), text_reply("Both ran."))
    app = build(tmp_path, client, tools=slow_registry(release), auto_approve=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await send(pilot, app, "go")
        sidebar = app.query_one(ToolSidebar)
        await polled(lambda: len(sidebar.rows()) == 2, "both calls shown while the slow one runs")
        assert sidebar.rows()[0][0] == "✓"  # the quick one's result, held a moment
        assert not release.is_set()
        release.set()
        await settle(pilot, app)
        assert [mark for mark, _, _ in sidebar.rows()] == ["✓", "✓"]


def feed_posts() -> tuple[HookFeed, list[list[m.AgentMessage]]]:
    posted: list[list[m.AgentMessage]] = []

    def post(message: Message) -> None:
        assert isinstance(message, m.AgentBatch)
        posted.append(list(message.messages))

    return HookFeed(post), posted


async def turns_of_the_loop() -> None:
    """Let every callback due now run (the feed's timers at zero delay among them)."""
    for _ in range(5):
        await asyncio.sleep(0)


async def test_the_feed_holds_a_steps_results_until_the_model_is_asked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(bridge, "RESULTS_WAIT_AT_MOST", 60.0)
    feed, posted = feed_posts()
    call = m.AgentToolCall(cast(Any, None))
    result = m.AgentToolResult(cast(Any, None))
    usage = m.AgentUsage(cast(Any, None))
    feed.add(call)
    feed.add(result)
    feed.add(usage)
    await turns_of_the_loop()
    assert posted == []  # the first message after a pause went at once before
    feed.model_asked()
    assert posted == [[call, result, usage]]
    feed.model_asked()  # nothing held: nothing more
    assert posted == [[call, result, usage]]


async def test_text_after_held_results_goes_at_the_usual_pace(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(bridge, "RESULTS_WAIT_AT_MOST", 60.0)
    feed, posted = feed_posts()
    result = m.AgentToolResult(cast(Any, None))
    text = m.AgentTextDelta(TextDelta("words"))
    feed.add(result)
    feed.add(text)
    await polled(lambda: bool(posted), "the batch", within=5.0)
    assert posted == [[result, text]]
