"""The tool budget of a turn, calls beyond it, and the nudge against verbatim repeats."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers.agent_kit import HookRecorder, open_agent, stored_events

from koroku_tui.agent import ToolCallStarted, instructions
from koroku_tui.agent.loop.guardrail import TOOL_BUDGET_EXHAUSTED, TurnGuard
from koroku_tui.agent.tools import ToolRegistry
from koroku_tui.events import SessionEvent
from koroku_tui.fake_gemini import FakeGemini, call_reply, text_reply

pytestmark = pytest.mark.timeout(30)


def counting_registry(counter: list[str]) -> ToolRegistry:
    registry = ToolRegistry()

    @registry.register
    def lookup(key: str) -> str:
        """Look a key up.

        Args:
            key: What to look up.
        """
        counter.append(key)
        return f"value of {key}"

    return registry


def request_texts(body: Any) -> list[str]:
    return [
        part["text"]
        for content in body["contents"]
        for part in content["parts"]
        if isinstance(part.get("text"), str)
    ]


def response_payloads(content: dict[str, Any]) -> list[dict[str, Any]]:
    return [p["functionResponse"]["response"] for p in content["parts"]]


async def test_sixteen_calls_trip_the_guardrail(fake: FakeGemini, tmp_path: Path) -> None:
    ran: list[str] = []
    fake.add(*(call_reply(("lookup", {"key": f"k{i}"})) for i in range(16)))
    fake.add(text_reply("I looked up 15 keys; shall I go on?"))
    async with open_agent(fake, tmp_path, tools=counting_registry(ran)) as agent:
        hooks = HookRecorder().attach(agent)
        answer = await agent.run_turn("Look everything up.")

    assert answer == "I looked up 15 keys; shall I go on?"
    assert ran == [f"k{i}" for i in range(15)]  # the 16th call never ran
    requests = fake.generate_requests
    assert len(requests) == 17 and all(r.status == 200 for r in requests)
    for request in requests[:15]:
        assert "tools" in request.body
        assert instructions.guardrail_instruction(15, limit=15) not in request_texts(request.body)
    # After 15 calls: no tools, and the guardrail as an extra (unstored) user message.
    after = requests[15].body
    assert "tools" not in after
    assert after["contents"][-1] == {
        "role": "user",
        "parts": [{"text": instructions.guardrail_instruction(15, limit=15)}],
    }
    # The 16th call, made anyway, was answered with an error, never left open.
    last = requests[16].body
    assert "tools" not in last
    assert last["contents"][-2]["parts"][0]["functionResponse"]["response"] == {
        "error": TOOL_BUDGET_EXHAUSTED
    }
    assert last["contents"][-1]["parts"][0]["text"] == instructions.guardrail_instruction(
        16, limit=15
    )
    started: list[ToolCallStarted] = hooks.payloads("on_tool_call")
    assert [s.over_budget for s in started] == [False] * 15 + [True]
    events = await stored_events(tmp_path / "koroku.db")
    assert not any(instructions.guardrail_instruction(15, limit=15) in e.text for e in events)


async def test_parallel_calls_beyond_the_budget_get_error_responses(
    fake: FakeGemini, tmp_path: Path
) -> None:
    ran: list[str] = []
    fake.add(
        call_reply(("lookup", {"key": "first"})),
        call_reply(("lookup", {"key": "a"}), ("lookup", {"key": "b"}), ("lookup", {"key": "c"})),
        text_reply("Two looked up."),
    )
    registry = counting_registry(ran)
    async with open_agent(fake, tmp_path, tools=registry, max_tool_calls_per_turn=2) as agent:
        await agent.run_turn("Look up four keys.")

    assert ran == ["first", "a"]
    final = fake.generate_requests[2].body
    assert response_payloads(final["contents"][-2]) == [
        {"output": "value of a"},
        {"error": TOOL_BUDGET_EXHAUSTED},
        {"error": TOOL_BUDGET_EXHAUSTED},
    ]
    assert "tools" not in final


async def test_the_budget_counts_calls_since_the_last_real_user_message(
    fake: FakeGemini, tmp_path: Path
) -> None:
    ran: list[str] = []
    fake.add(
        call_reply(("lookup", {"key": "a"}), ("lookup", {"key": "b"})),
        text_reply("first turn done"),
        call_reply(("lookup", {"key": "c"})),
        text_reply("second turn done"),
    )
    registry = counting_registry(ran)
    async with open_agent(fake, tmp_path, tools=registry, max_tool_calls_per_turn=2) as agent:
        await agent.run_turn("one")
        await agent.run_turn("two")  # a new turn: the budget starts again
        events = agent.context
    assert ran == ["a", "b", "c"]
    assert "tools" in fake.generate_requests[2].body
    assert TurnGuard.from_events(events, 2).calls_used == 1


async def test_the_third_identical_call_in_a_row_gets_the_nudge(
    fake: FakeGemini, tmp_path: Path
) -> None:
    ran: list[str] = []
    same = ("lookup", {"key": "same"})
    fake.add(call_reply(same), call_reply(same), call_reply(same), text_reply("Stopping."))
    async with open_agent(fake, tmp_path, tools=counting_registry(ran)) as agent:
        await agent.run_turn("Look it up.")

    events: list[SessionEvent] = await stored_events(tmp_path / "koroku.db")
    outputs = [
        json.dumps(e.function_responses[0].function_response.response)
        for e in events
        if e.function_responses
    ]
    nudge = instructions.repeated_call_nudge("lookup", 3)
    assert [nudge in o for o in outputs] == [False, False, True]
    assert len(ran) == 3  # a nudge, not a stop: the call still ran


async def test_a_model_that_keeps_calling_without_tools_is_stopped(
    fake: FakeGemini, tmp_path: Path
) -> None:
    ran: list[str] = []
    fake.add(*(call_reply(("lookup", {"key": f"k{i}"})) for i in range(40)))
    async with open_agent(
        fake, tmp_path, tools=counting_registry(ran), max_tool_calls_per_turn=3
    ) as agent:
        await agent.run_turn("Look everything up.")

    assert ran == ["k0", "k1", "k2"]
    # Three budgeted requests, then two without tools; never forty.
    assert len(fake.generate_requests) == 5
    assert ["tools" in r.body for r in fake.generate_requests] == [True] * 3 + [False] * 2
    events = await stored_events(tmp_path / "koroku.db")
    last = events[-1]
    assert isinstance(last, SessionEvent) and last.function_responses  # every call answered


async def test_twenty_calls_in_one_step_tell_the_model_how_many_ran(
    fake: FakeGemini, tmp_path: Path
) -> None:
    ran: list[str] = []
    fake.add(call_reply(*(("lookup", {"key": f"k{i}"}) for i in range(20))))
    fake.add(text_reply("I looked up 15 of the 20 keys; shall I go on?"))
    async with open_agent(fake, tmp_path, tools=counting_registry(ran)) as agent:
        await agent.run_turn("Look everything up.")

    assert len(ran) == 15
    told = fake.generate_requests[1].body["contents"][-1]["parts"][0]["text"]
    assert told == instructions.guardrail_instruction(20, limit=15)
    assert "20 tool calls" in told and "15 of them ran" in told
    assert "the other 5 were not run" in told
    assert "You have made 20 tool calls" not in told


def test_the_guardrail_counts_only_calls_that_ran_when_none_were_skipped() -> None:
    told = instructions.guardrail_instruction(15, limit=15)
    assert "15 tool calls" in told and "not run" not in told
