"""What the agent stores while a cancel lands is told to the hooks all the same.

``Conversation.save`` finishes its writes despite a cancel, then lets it go
on: the hooks must hear of what was stored (usage, the reply, its calls'
answers), or a UI shows less than a restart does. A second cancel while
the answers of a cancelled step are stored (a library user's timeout, a
stop signal after Escape) told nobody of them (found by the review helper).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from helpers.agent_kit import HookRecorder, held_first_call, held_writes, open_agent, stored_events

from koroku_tui.agent.wire.streaming import StreamAccumulator
from koroku_tui.events import SessionEvent
from koroku_tui.fake_gemini import FakeGemini, call_reply, text_reply
from koroku_tui.fake_gemini.script import Call, Reply, Text


def answered_calls(events: list[SessionEvent]) -> int:
    parts = (part for event in events for part in event.to_content().parts or [])
    return sum(1 for part in parts if part.function_response is not None)


async def cancel_while_held(task: asyncio.Task[Any], holding: asyncio.Event) -> None:
    await asyncio.wait_for(holding.wait(), 10)
    task.cancel()


async def test_a_reply_stored_while_a_cancel_came_is_told_with_its_usage(
    fake: FakeGemini, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As in a whole step, its usage before it: the gauge counted the context without it."""
    fake.add(text_reply("Cut here", finish_reason="MAX_TOKENS"))
    holding, release = held_writes(monkeypatch)
    async with open_agent(fake, tmp_path) as agent:
        hooks = HookRecorder().attach(agent)
        task = asyncio.create_task(agent.run_turn("go"))
        await cancel_while_held(task, holding)
        await asyncio.sleep(0)  # the cancel reaches the held write
        release.set()
        with pytest.raises(asyncio.CancelledError):
            await task
        budget = agent.budget
    assert hooks.names[-2:] == ["on_usage", "on_model_response"], hooks.names
    assert hooks.payloads("on_usage")[-1] == budget
    assert hooks.payloads("on_model_response")[-1].cut is not None  # "cut off: token limit"


async def test_a_second_cancel_while_unrun_calls_are_answered_tells_them(
    fake: FakeGemini, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a.txt").write_text("a\n")
    fake.add(call_reply(*[("read_file", {"path": f"{name}.txt"}) for name in "abc"]))
    running, _ = held_first_call(monkeypatch)
    holding, release = held_writes(monkeypatch, armed=running)
    async with open_agent(fake, tmp_path) as agent:
        hooks = HookRecorder().attach(agent)
        task = asyncio.create_task(agent.run_turn("go"))
        await asyncio.wait_for(running.wait(), 10)
        task.cancel()  # Escape while the first call runs
        await cancel_while_held(task, holding)  # again, while the answers are stored
        release.set()
        with pytest.raises(asyncio.CancelledError):
            await task
    assert answered_calls(await stored_events(tmp_path / "koroku.db")) == 3
    assert len(hooks.payloads("on_tool_call")) == 3, hooks.names
    assert len(hooks.payloads("on_tool_result")) == 3, hooks.names


async def test_a_second_cancel_while_a_cut_reply_is_kept_tells_it(
    fake: FakeGemini, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    arrived = asyncio.Event()
    add = StreamAccumulator.add

    def watched(self: StreamAccumulator, chunk: Any) -> Any:
        parts = add(self, chunk)
        if any(part.function_call is not None for part in self.parts):
            arrived.set()
        return parts

    monkeypatch.setattr(StreamAccumulator, "add", watched)
    calls = (Call("read_file", {"path": "a.txt"}), Call("read_file", {"path": "b.txt"}))
    fake.add(Reply(((Text("Looking."),), calls, (Text(" more"),)), chunk_delay=1.5))
    holding, release = held_writes(monkeypatch, armed=arrived)
    async with open_agent(fake, tmp_path) as agent:
        hooks = HookRecorder().attach(agent)
        task = asyncio.create_task(agent.run_turn("go"))
        await asyncio.wait_for(arrived.wait(), 10)
        task.cancel()  # Escape mid-stream, the calls in
        await cancel_while_held(task, holding)  # again, while what arrived is kept
        release.set()
        with pytest.raises(asyncio.CancelledError):
            await task
    events = await stored_events(tmp_path / "koroku.db")
    assert any(event.role == "model" for event in events) and answered_calls(events) == 2
    assert len(hooks.payloads("on_model_response")) == 1, hooks.names
    assert len(hooks.payloads("on_tool_call")) == 2, hooks.names
    assert len(hooks.payloads("on_tool_result")) == 2, hooks.names
