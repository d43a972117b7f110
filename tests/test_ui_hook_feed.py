"""A step's last result reaches the screen when the agent asks the model again, not before.

After a step's tools answer, the agent stores their results and builds the
next request: CPU work in the one interpreter the screen draws in. A
thousand calls' rows drawn in the middle of it held the next request back
~45 ms (issue 22, item 21); drawn once the request is sent, they cost the
wait for the reply instead (``ui.main.bridge.HookFeed``).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest
from google import genai
from helpers.ui_kit import build, polled, send, settle
from test_ui_fast_stream import stored_events, watch_main_posts
from textual.message import Message

from koroku_tui.agent.hooks import ReplyStreamed, TextDelta
from koroku_tui.agent.tools.registry import ToolRegistry
from koroku_tui.fake_gemini import FakeGemini, Hang, call_reply, text_reply
from koroku_tui.ui.main import bridge
from koroku_tui.ui.main import messages as m
from koroku_tui.ui.main.bridge import HookFeed
from koroku_tui.ui.main.call_list import CallList
from koroku_tui.ui.main.sidebar import ToolSidebar
from koroku_tui.ui.main.turn_status import TurnStatus

CALLS = 200


def stored_answers(home: Path) -> int:
    """Function responses stored so far (read as another process would)."""
    parts = [p for row in stored_events(home) for p in row.get("parts", [])]
    return sum(1 for part in parts if part.get("function_response"))


async def test_a_steps_results_are_shown_once_stored_while_the_model_is_asked(
    fake: FakeGemini, client: genai.Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Held for a minute at most: only the request (``on_model_request``) shows them in time.
    monkeypatch.setattr(bridge, "RESULTS_WAIT_AT_MOST", 60.0)
    fake.add(call_reply(*[("read_memory", {"date": "list"}) for _ in range(CALLS)]), Hang())
    stored_when_shown: list[int] = []
    """Results stored when a batch with results was posted, batch after batch."""

    def recording(message: Message) -> None:
        if isinstance(message, m.AgentBatch) and any(
            isinstance(item, m.AgentToolResult) for item in message.messages
        ):
            stored_when_shown.append(stored_answers(tmp_path))

    watch_main_posts(monkeypatch, recording)
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
        # The results before the last may go at the usual pace (on a slow machine
        # the calls take more than a batch's 33 ms); the last waited for the request.
        assert stored_when_shown and stored_when_shown[-1] == CALLS
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


async def test_a_slow_call_after_a_quick_one_shows_running_at_once(
    fake: FakeGemini, client: genai.Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only a step's last result waits for the next request: the calls before it run on,
    and their rows and the status line say so at the usual pace."""
    monkeypatch.setattr(bridge, "RESULTS_WAIT_AT_MOST", 60.0)
    release = asyncio.Event()
    fake.add(call_reply(("quick", {}), ("slow", {})), text_reply("Both ran."))
    app = build(tmp_path, client, tools=slow_registry(release), auto_approve=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await send(pilot, app, "go")
        sidebar, status = app.query_one(ToolSidebar), app.query_one(TurnStatus)
        await polled(lambda: len(sidebar.rows()) == 2, "both calls shown while the slow one runs")
        assert sidebar.rows()[0][0] == "✓"  # the quick one's result
        # What the newest message says, the call after the result (not "waiting for Gemini").
        await polled(lambda: "running slow" in str(status.render()), "the status line")
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


@pytest.fixture
def long_hold(monkeypatch: pytest.MonkeyPatch) -> None:
    """Results held for a minute at most: only ``model_asked`` (or other news) shows them."""
    monkeypatch.setattr(bridge, "RESULTS_WAIT_AT_MOST", 60.0)


@pytest.mark.usefixtures("long_hold")
async def test_the_feed_holds_a_steps_results_until_the_model_is_asked() -> None:
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


@pytest.mark.usefixtures("long_hold")
async def test_text_after_held_results_goes_at_the_usual_pace() -> None:
    feed, posted = feed_posts()
    result = m.AgentToolResult(cast(Any, None))
    text = m.AgentTextDelta(TextDelta("words"))
    feed.add(result)
    feed.add(text)
    await polled(lambda: bool(posted), "the batch", within=5.0)
    assert posted == [[result, text]]


@pytest.mark.usefixtures("long_hold")
async def test_only_a_steps_last_result_waits() -> None:
    feed, posted = feed_posts()
    step = m.AgentModelResponse(cast(Any, SimpleNamespace(function_calls=[object()] * 2)))
    first = m.AgentToolResult(cast(Any, None))
    call = m.AgentToolCall(cast(Any, None))
    last = m.AgentToolResult(cast(Any, None))
    for message in (step, first, call):
        feed.add(message)
    await polled(lambda: bool(posted), "the step so far, at the usual pace", within=5.0)
    feed.add(last)
    await turns_of_the_loop()
    assert posted == [[step, first, call]]
    feed.model_asked()
    assert posted == [[step, first, call], [last]]


async def test_a_result_waits_for_the_request_at_most_a_while(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(bridge, "RESULTS_WAIT_AT_MOST", 0.05)
    feed, posted = feed_posts()
    result = m.AgentToolResult(cast(Any, None))
    feed.add(result)
    await polled(lambda: bool(posted), "the held result, without a request", within=2.0)
    assert posted == [[result]]


async def test_the_end_of_a_reply_goes_at_once_with_the_text_before_it() -> None:
    """The stream's end is not kept for the next batch's turn: the last words are drawn now."""
    feed, posted = feed_posts()
    first = m.AgentTextDelta(TextDelta("Most of "))
    feed.add(first)
    await polled(lambda: bool(posted), "the first words", within=5.0)
    last = m.AgentTextDelta(TextDelta("the answer."))
    streamed = m.AgentReplyStreamed(ReplyStreamed("STOP"))
    feed.add(last)  # within the batch's 33 ms: it waits its turn...
    feed.add(streamed)  # ...which the reply's end cuts short
    assert posted == [[first], [last, streamed]]
