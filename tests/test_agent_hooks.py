"""Hooks: their order, their payloads, and handlers that fail."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from helpers.agent_kit import HookRecorder, open_agent

from koroku_tui.agent import ErrorNotice, TextDelta
from koroku_tui.agent.context.budget import ContextBudget
from koroku_tui.agent.hooks import HookEmitter
from koroku_tui.agent.loop.conversation import finish_despite_cancel
from koroku_tui.fake_gemini import FakeGemini, call_reply, text_reply

pytestmark = pytest.mark.timeout(30)


async def test_hooks_fire_in_order(fake: FakeGemini, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("apples\n")
    fake.add(
        call_reply(("read_file", {"path": "a.txt"}), thought="I should read it."),
        text_reply("It holds apples.", pieces=2),
    )
    async with open_agent(fake, tmp_path) as agent:
        hooks = HookRecorder().attach(agent)
        await agent.run_turn("What is in a.txt?")

    assert hooks.names == [
        "on_usage",  # the user's message is stored
        "on_model_request",  # the first step's request is sent
        "on_thought_delta",
        "on_reply_streamed",  # the reply all arrived
        "on_usage",  # the model step is stored...
        "on_model_response",  # ...then announced
        "on_tool_call",
        "on_tool_result",
        "on_usage",  # the responses are stored
        "on_model_request",  # then the next request is sent
        "on_text_delta",
        "on_text_delta",
        "on_reply_streamed",
        "on_usage",
        "on_model_response",
    ]
    assert [d.text for d in hooks.payloads("on_text_delta")] == ["It holds", " apples."]
    budgets: list[ContextBudget] = hooks.payloads("on_usage")
    assert [b.events for b in budgets] == [1, 2, 3, 4]
    assert budgets[-1] == agent.budget
    result = hooks.payloads("on_tool_result")[0]
    assert result.result.output == "apples\n" and result.duration >= 0


async def test_a_raising_handler_does_not_break_the_turn(fake: FakeGemini, tmp_path: Path) -> None:
    fake.add(text_reply("Still answered.", pieces=3))
    async with open_agent(fake, tmp_path) as agent:
        told: list[ErrorNotice] = []

        async def broken(delta: TextDelta) -> None:
            raise ValueError("widget gone")

        async def broken_reporter(notice: ErrorNotice) -> None:
            raise RuntimeError("the error display is broken too")

        async def reporter(notice: ErrorNotice) -> None:
            told.append(notice)

        agent.on("on_text_delta", broken)
        agent.on("on_error", broken_reporter)  # must not loop
        agent.on("on_error", reporter)
        assert await agent.run_turn("hello") == "Still answered."

    assert len(told) == 3  # once per failing delta, never for the failing reporter
    assert "on_text_delta" in told[0].message and "widget gone" in told[0].message
    assert "\n" not in told[0].message


async def test_plain_functions_are_accepted_and_off_removes(
    fake: FakeGemini, tmp_path: Path
) -> None:
    fake.add(text_reply("one"), text_reply("two"))
    seen: list[str] = []

    def sync_handler(delta: TextDelta) -> None:
        seen.append(delta.text)

    async with open_agent(fake, tmp_path) as agent:
        agent.on("on_text_delta", sync_handler)
        await agent.run_turn("a")
        agent.off("on_text_delta", sync_handler)
        await agent.run_turn("b")
    assert seen == ["one"]


def test_unknown_hook_names_are_refused() -> None:
    with pytest.raises(ValueError, match="on_text_delta"):
        HookEmitter().on("on_text", lambda payload: None)  # type: ignore[call-overload]


async def test_writes_finish_even_when_the_caller_is_cancelled() -> None:
    written: list[str] = []
    started, may_finish = asyncio.Event(), asyncio.Event()

    async def slow_write() -> str:
        started.set()
        await may_finish.wait()
        written.append("row")
        return "id"

    task = asyncio.create_task(finish_despite_cancel(slow_write()))
    await started.wait()  # the write is under way: cancel in the middle of it
    task.cancel()
    await asyncio.sleep(0)  # the cancellation reaches the task before the write can end
    may_finish.set()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert written == ["row"]
