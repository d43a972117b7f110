"""A cancel at any moment leaves a history the strict fake accepts on the next turn."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine, Sequence
from pathlib import Path
from typing import Any

import pytest
from google.genai import types
from helpers.agent_kit import HookRecorder, open_agent, stored_events

from koroku_tui.agent import Agent, RetryPolicy, ToolCallFinished
from koroku_tui.agent.loop import step, tool_step
from koroku_tui.agent.loop.conversation import PREPARE_SLICE, Conversation
from koroku_tui.agent.loop.guardrail import CANCELLED_BY_USER
from koroku_tui.agent.tools import (
    ApprovalDecision,
    ApprovalRequest,
    ToolRegistry,
    ToolResult,
    ToolSettings,
    default_registry,
)
from koroku_tui.agent.wire.body import WireContent, WireForm
from koroku_tui.events import SessionEvent
from koroku_tui.fake_gemini import FakeGemini, Hang, call_reply, error_reply, text_reply

pytestmark = pytest.mark.timeout(30)


def slow_registry() -> ToolRegistry:
    registry = ToolRegistry()

    @registry.register
    async def slow(seconds: float) -> str:
        """Wait a while.

        Args:
            seconds: How long.
        """
        await asyncio.sleep(seconds)
        return "waited"

    @registry.register
    def quick() -> str:
        """Answer at once."""
        return "quick answer"

    return registry


async def cancel_when(
    agent: Agent, message: str, ready: Callable[[], Coroutine[Any, Any, object]]
) -> None:
    """Start a turn, wait for ``ready``, cancel the turn and check it was cancelled."""
    task = asyncio.create_task(agent.run_turn(message))
    waiter = asyncio.create_task(ready())
    done, _ = await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED, timeout=10)
    assert waiter in done, "the turn never reached the stage to cancel"
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


def next_request_arrives(fake: FakeGemini) -> Callable[[], Coroutine[Any, Any, bool]]:
    expected = len(fake.requests) + 1

    async def wait() -> bool:
        return await asyncio.to_thread(fake.wait_for_requests, expected, 10.0)

    return wait


def hook_fires(agent: Agent, name: str) -> Callable[[], Coroutine[Any, Any, bool]]:
    fired = asyncio.Event()

    async def handler(payload: object) -> None:
        fired.set()

    agent.on(name, handler)  # type: ignore[call-overload]
    return fired.wait


def roles_and_texts(events: Sequence[SessionEvent]) -> list[tuple[str | None, str]]:
    return [(e.role, e.text) for e in events]


async def test_cancel_while_the_request_hangs(fake: FakeGemini, tmp_path: Path) -> None:
    fake.add(Hang(), text_reply("Here now."))
    async with open_agent(fake, tmp_path) as agent:
        await cancel_when(agent, "first", next_request_arrives(fake))
        assert await agent.run_turn("second") == "Here now."
    events = await stored_events(tmp_path / "koroku.db")
    assert roles_and_texts(events) == [
        ("user", "first"),
        ("user", "second"),
        ("model", "Here now."),
    ]
    assert fake.generate_requests[1].status == 200


async def test_cancel_during_the_retry_wait(fake: FakeGemini, tmp_path: Path) -> None:
    fake.add(error_reply(503), text_reply("Recovered."))
    patient = RetryPolicy(attempts=2, initial_delay=30.0, jitter=0.0)
    async with open_agent(fake, tmp_path, retry=patient) as agent:
        await cancel_when(agent, "first", hook_fires(agent, "on_retry"))
        assert await agent.run_turn("again") == "Recovered."
    events = await stored_events(tmp_path / "koroku.db")
    assert [e.role for e in events] == ["user", "user", "model"]


async def test_a_cancel_while_the_reply_is_told_streamed_keeps_it(
    fake: FakeGemini, tmp_path: Path
) -> None:
    """A handler of ``on_reply_streamed`` that awaits something, cancelled: the whole reply
    arrived (and a UI drew it), so it is kept as a cut-off stream's is (found by a review:
    nothing of it was stored)."""
    fake.add(text_reply("The whole answer."))
    async with open_agent(fake, tmp_path) as agent:
        inside = asyncio.Event()

        async def awaiting(streamed: object) -> None:
            inside.set()
            await asyncio.Event().wait()  # a plugin's handler waiting on something

        agent.on("on_reply_streamed", awaiting)
        await cancel_when(agent, "hi", inside.wait)
    events = await stored_events(tmp_path / "koroku.db")
    assert roles_and_texts(events) == [("user", "hi"), ("model", "The whole answer.")]


async def test_cancel_mid_stream_keeps_the_text_received(fake: FakeGemini, tmp_path: Path) -> None:
    fake.add(text_reply("One. Two. Three. Four.", pieces=4, chunk_delay=0.5), text_reply("Ok."))
    async with open_agent(fake, tmp_path) as agent:
        hooks = HookRecorder().attach(agent)
        await cancel_when(agent, "count", hook_fires(agent, "on_text_delta"))
        partial = hooks.payloads("on_model_response")
        assert len(partial) == 1 and partial[0].partial
        shown = "".join(delta.text for delta in hooks.payloads("on_text_delta"))
        assert shown == "One. T"  # the first of four chunks
        assert await agent.run_turn("go on") == "Ok."
    events = await stored_events(tmp_path / "koroku.db")
    assert roles_and_texts(events) == [
        ("user", "count"),
        ("model", shown),
        ("user", "go on"),
        ("model", "Ok."),
    ]
    assert fake.generate_requests[1].status == 200


async def test_cancel_during_a_slow_tool_answers_every_call(
    fake: FakeGemini, tmp_path: Path
) -> None:
    fake.add(call_reply(("quick", {}), ("slow", {"seconds": 30})), text_reply("Stopped."))
    async with open_agent(fake, tmp_path, tools=slow_registry()) as agent:
        hooks = HookRecorder().attach(agent)
        started = asyncio.Event()

        async def on_call(payload: object) -> None:
            if getattr(payload, "name", "") == "slow":
                started.set()

        agent.on("on_tool_call", on_call)
        await cancel_when(agent, "wait please", started.wait)
        finished: list[ToolCallFinished] = hooks.payloads("on_tool_result")
        assert [f.result.is_error for f in finished] == [False, True]
        assert await agent.run_turn("never mind") == "Stopped."

    events = await stored_events(tmp_path / "koroku.db")
    answers = events[2].function_responses
    assert [a.function_response.response for a in answers] == [
        {"output": "quick answer"},
        {"error": CANCELLED_BY_USER},
    ]
    assert [a.fc_metadata.name for a in answers if a.fc_metadata] == ["quick", "slow"]
    assert [e.role for e in events] == ["user", "model", "user", "user", "model"]
    assert fake.generate_requests[1].status == 200


async def test_cancel_during_an_approval_prompt(fake: FakeGemini, tmp_path: Path) -> None:
    asked = asyncio.Event()

    async def never_answers(request: ApprovalRequest) -> ApprovalDecision:
        asked.set()
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    context = ToolSettings(workspace=tmp_path, approval_callback=never_answers)
    fake.add(call_reply(("write_file", {"path": "x.txt", "content": "x"})), text_reply("Fine."))
    async with open_agent(fake, tmp_path, tools=default_registry(), tool_settings=context) as agent:
        await cancel_when(agent, "write x.txt", asked.wait)
        assert await agent.run_turn("forget it") == "Fine."
    assert not (tmp_path / "x.txt").exists()
    events = await stored_events(tmp_path / "koroku.db")
    assert events[2].function_responses[0].function_response.response == {
        "error": CANCELLED_BY_USER
    }
    assert fake.generate_requests[1].status == 200


async def test_cancel_while_the_answers_are_gathered_keeps_them_as_they_ran(
    fake: FakeGemini, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A thousand answers take ~40 ms to gather into one event, off the loop
    # (issue 22, item 21): an Escape then stops the turn at once, and every
    # call keeps the answer it got.
    fake.add(call_reply(("quick", {}), ("quick", {})), text_reply("Again."))
    gathering, release, gathered = threading.Event(), threading.Event(), threading.Event()
    gather = tool_step.responses_event

    def slow_gather(results: Sequence[ToolResult]) -> tuple[SessionEvent, Any]:
        gathering.set()
        release.wait(10)
        try:
            return gather(results)
        finally:
            gathered.set()

    monkeypatch.setattr(step, "responses_event", slow_gather)
    async with open_agent(fake, tmp_path, tools=slow_registry()) as agent:
        try:
            await cancel_when(agent, "twice", lambda: asyncio.to_thread(gathering.wait, 10))
            assert not gathered.is_set()  # stopped while they were gathered, not after
        finally:
            release.set()
        assert await agent.run_turn("again") == "Again."

    events = await stored_events(tmp_path / "koroku.db")
    answers = events[2].function_responses
    assert [a.function_response.response for a in answers] == [{"output": "quick answer"}] * 2
    assert [e.role for e in events] == ["user", "model", "user", "user", "model"]
    assert fake.generate_requests[1].status == 200


async def test_cancel_while_a_big_step_is_converted_stops_within_a_slice(
    fake: FakeGemini, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Before the next request, a step of many calls and its answers are
    # converted in a thread, which a cancel waits for (issue 22, item 21): it
    # stops after the slice it is in, not at the end of the 150-call event,
    # and every call keeps its answer.
    calls = 150
    fake.add(call_reply(*[("quick", {})] * calls), text_reply("Again."))
    converted: list[int] = []  # the parts of each big piece converted in the thread
    reached, go = threading.Event(), threading.Event()
    stops: list[threading.Event] = []
    convert, prepare = WireForm.content, Conversation.prepare

    def held(self: WireForm, content: types.Content) -> WireContent:
        size = len(content.parts or ())
        if size > 1 and threading.current_thread() is not threading.main_thread():
            converted.append(size)
            reached.set()
            go.wait(10)
        return convert(self, content)

    def recorded(self: Conversation, stop: threading.Event) -> None:
        stops.append(stop)
        prepare(self, stop)

    monkeypatch.setattr(WireForm, "content", held)
    monkeypatch.setattr(Conversation, "prepare", recorded)
    async with open_agent(fake, tmp_path, tools=slow_registry()) as agent:
        turn = asyncio.create_task(agent.run_turn("go"))
        try:
            assert await asyncio.to_thread(reached.wait, 10)
            turn.cancel()
            assert await asyncio.to_thread(stops[-1].wait, 10)  # the cancel came through
        finally:
            go.set()
        with pytest.raises(asyncio.CancelledError):
            await turn
        assert converted == [PREPARE_SLICE]  # the first slice, then the cancel was seen
        assert await agent.run_turn("again") == "Again."

    events = await stored_events(tmp_path / "koroku.db")
    assert len(events[2].function_responses) == calls
    assert [e.role for e in events] == ["user", "model", "user", "user", "model"]
    assert fake.generate_requests[1].status == 200
