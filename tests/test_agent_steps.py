"""Agent steps against the strict fake: tool loops, signatures, exact persistence."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from google.genai import types
from helpers.agent_kit import (
    HookRecorder,
    open_agent,
    stored_events,
    wire_signature,
)

from koroku_tui.agent import ModelResponse
from koroku_tui.agent.context.budget import DEFAULT_WINDOW, context_budget
from koroku_tui.events import (
    FCMetadata,
    FunctionCallPart,
    FunctionResponsePart,
    SessionEvent,
    TextPart,
)
from koroku_tui.fake_gemini import FakeGemini, ModelInfo, call_reply, text_reply

pytestmark = pytest.mark.timeout(30)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "a.txt").write_text("apples\n")
    (tmp_path / "b.txt").write_text("bananas\n")
    return tmp_path


def model_contents(body: Any) -> list[dict[str, Any]]:
    return [c for c in body["contents"] if c.get("role") == "model"]


async def test_two_step_tool_turn_sends_every_signature_back(
    fake: FakeGemini, workspace: Path
) -> None:
    fake.add(
        call_reply(("read_file", {"path": "a.txt"}), thought="Let me look."),
        call_reply(("read_file", {"path": "b.txt"})),
        text_reply("Apples and bananas.", pieces=3),
    )
    async with open_agent(fake, workspace) as agent:
        answer = await agent.run_turn("What fruit is in the files?")

    assert answer == "Apples and bananas."
    requests = fake.generate_requests
    assert [r.status for r in requests] == [200, 200, 200]
    last = requests[-1].contents
    assert [c["role"] for c in last] == ["user", "model", "user", "model", "user"]
    # Each sequential step's first call went back with the very signature issued.
    for step in model_contents(requests[-1].body):
        signature = wire_signature(step["parts"][-1])
        assert signature in fake.issued_signatures
    outputs = [c["parts"][0]["functionResponse"]["response"] for c in (last[2], last[4])]
    assert outputs == [{"output": "apples\n"}, {"output": "bananas\n"}]


async def test_signature_on_an_empty_final_chunk_is_stored_and_sent_back(
    fake: FakeGemini, tmp_path: Path
) -> None:
    fake.add(text_reply("Hello there.", pieces=3, signature_chunk=True), text_reply("Bye."))
    async with open_agent(fake, tmp_path) as agent:
        assert await agent.run_turn("hi") == "Hello there."
        await agent.run_turn("bye")

    stored = (await stored_events(tmp_path / "koroku.db"))[1].to_content().parts or []
    assert [(p.text, p.thought_signature is not None) for p in stored] == [
        ("Hello there.", False),
        ("", True),
    ]
    sent_back = model_contents(fake.generate_requests[1].body)[0]["parts"]
    assert sent_back[1]["text"] == ""
    assert wire_signature(sent_back[1]) == stored[1].thought_signature
    assert wire_signature(sent_back[1]) in fake.issued_signatures


async def test_persistence_is_exact(fake: FakeGemini, workspace: Path) -> None:
    fake.add(
        call_reply(("read_file", {"path": "a.txt"}), ("read_file", {"path": "b.txt"})),
        text_reply("Done.", signature_chunk=True),
    )
    async with open_agent(fake, workspace) as agent:
        hooks = HookRecorder().attach(agent)
        responses = await agent.run("Read both files.")
        assert responses is not None
        assert await agent.run(responses) is None  # the same object comes back in

    events = await stored_events(workspace / "koroku.db")
    assert [(e.role, e.is_real_user_turn) for e in events] == [
        ("user", True),
        ("model", False),
        ("user", False),
        ("model", False),
    ]
    # The responses of the step: ONE user event, stored once, FCMetadata per part.
    answer = events[2]
    assert all(isinstance(p, FunctionResponsePart) for p in answer.parts)
    assert [p.fc_metadata for p in answer.function_responses] == [
        FCMetadata(name="read_file", args={"path": "a.txt"}),
        FCMetadata(name="read_file", args={"path": "b.txt"}),
    ]
    calls = events[1].function_calls
    assert [r.function_response.id for r in answer.function_responses] == [
        c.function_call.id for c in calls
    ]
    # Model steps are stored byte-equal to what the stream produced, signatures included.
    streamed: list[ModelResponse] = hooks.payloads("on_model_response")
    for reply, stored in zip(streamed, (events[1], events[3]), strict=True):
        assert stored.to_content().model_dump() == reply.content.model_dump()
    assert isinstance(events[1].parts[0], FunctionCallPart)
    assert events[1].parts[0].thought_signature in fake.issued_signatures
    assert events[1].usage is not None and events[1].usage.prompt_token_count
    assert isinstance(events[3].parts[0], TextPart)


async def test_responses_built_by_the_caller_are_stored_once(
    fake: FakeGemini, workspace: Path
) -> None:
    fake.add(call_reply(("read_file", {"path": "a.txt"})), text_reply("ok"))
    async with open_agent(fake, workspace) as agent:
        responses = await agent.run("Read a.txt.")
        assert responses is not None
        rebuilt = types.Content.model_validate(responses.model_dump())  # equal, not identical
        assert await agent.run(rebuilt) is None
    events = await stored_events(workspace / "koroku.db")
    assert len(events) == 4


async def test_without_a_store_the_history_lives_in_memory(
    fake: FakeGemini, workspace: Path
) -> None:
    fake.add(call_reply(("read_file", {"path": "a.txt"})), text_reply("Apples."), text_reply("2"))
    async with open_agent(fake, workspace, store=False) as agent:
        assert await agent.run_turn("What is in a.txt?") == "Apples."
        message = types.Content(role="user", parts=[types.Part(text="And 1+1?")])
        assert await agent.run(message) is None
        roles = [e.role for e in agent.context if isinstance(e, SessionEvent)]
        assert roles == ["user", "model"] * 3
    assert not (workspace / "koroku.db").exists()
    assert [r.status for r in fake.generate_requests] == [200, 200, 200]


async def test_the_window_comes_from_the_model_and_feeds_the_budget(tmp_path: Path) -> None:
    models = {"gemini-3-flash-preview": ModelInfo(input_token_limit=200_000)}
    with FakeGemini([text_reply("hi")], models=models) as fake:
        async with open_agent(fake, tmp_path) as agent:
            await agent.run_turn("hello")
            budget = agent.budget
            assert budget.window == 200_000
            assert budget == context_budget(agent.context, agent._policy)
            assert not budget.estimated  # measured from the reply's usage
    # An unknown model (404 on models.get) falls back to the default window.
    with FakeGemini([], models={}) as fake:
        async with open_agent(fake, tmp_path, db=tmp_path / "other.db") as agent:
            assert agent.budget.window == DEFAULT_WINDOW


async def test_a_lone_surrogate_in_the_answer_is_stored_and_the_session_goes_on(
    fake: FakeGemini, tmp_path: Path
) -> None:
    fake.add(text_reply("broken pair \ud83d here"), text_reply("Still here."))
    async with open_agent(fake, tmp_path) as agent:
        assert await agent.run_turn("hi") == "broken pair \ufffd here"
        assert await agent.run_turn("again") == "Still here."
    assert [e.text for e in await stored_events(tmp_path / "koroku.db")][1] == (
        "broken pair \ufffd here"
    )
