"""A cut answer says it was cut: finish reasons, thoughts-only replies and blocked prompts."""

from __future__ import annotations

from pathlib import Path

import pytest
from google.genai import types
from helpers.agent_kit import HookRecorder, open_agent, stored_events
from hostile.finish_reasons import BLOCKED_PROMPTS, CUT_REASONS, RUN_CALLS_AFTER

from koroku_tui.agent import AgentError, ErrorKind, ModelResponse
from koroku_tui.agent.tools import ToolSettings
from koroku_tui.agent.tools.approval import ApprovalDecision, ApprovalRequest
from koroku_tui.agent.wire.finish import KNOWN_REASONS, reason_words, stored_cut
from koroku_tui.fake_gemini import (
    FakeGemini,
    Reply,
    blocked_prompt,
    call_reply,
    text_reply,
    thoughts_only,
)

pytestmark = pytest.mark.timeout(30)


def responses(hooks: HookRecorder) -> list[ModelResponse]:
    found: list[ModelResponse] = hooks.payloads("on_model_response")
    return found


@pytest.mark.parametrize(("reason", "words"), CUT_REASONS, ids=[r[:24] for r, _ in CUT_REASONS])
async def test_a_cut_answer_carries_its_reason_in_words(
    fake: FakeGemini, tmp_path: Path, reason: str, words: str
) -> None:
    fake.add(text_reply("The first half of the", pieces=2, finish_reason=reason))
    async with open_agent(fake, tmp_path) as agent:
        hooks = HookRecorder().attach(agent)
        answer = await agent.run_turn("Tell me everything.")

    assert answer == "The first half of the"  # what arrived is kept and returned
    [response] = responses(hooks)
    assert response.finish_reason == reason
    assert response.cut is not None and response.cut.visible
    assert response.cut.message == f"The answer was cut off: {words}."
    assert agent.last_cut == response.cut
    assert "\x1b" not in response.cut.message and "\x07" not in response.cut.message
    events = await stored_events(tmp_path / "koroku.db")
    assert [e.text for e in events] == ["Tell me everything.", "The first half of the"]


async def test_a_whole_answer_has_no_cut(fake: FakeGemini, tmp_path: Path) -> None:
    fake.add(text_reply("All of it.", finish_reason="STOP"))
    async with open_agent(fake, tmp_path) as agent:
        hooks = HookRecorder().attach(agent)
        await agent.run_turn("hi")
    assert responses(hooks)[0].cut is None and agent.last_cut is None


@pytest.mark.parametrize("reason", ["MAX_TOKENS", "STOP"])
async def test_only_thoughts_is_no_answer_and_says_so(
    fake: FakeGemini, tmp_path: Path, reason: str
) -> None:
    fake.add(thoughts_only("Let me think about this at length...", finish_reason=reason))
    async with open_agent(fake, tmp_path) as agent:
        hooks = HookRecorder().attach(agent)
        answer = await agent.run_turn("A hard question")

    assert answer == ""
    cut = responses(hooks)[0].cut
    assert cut is not None and not cut.visible and agent.last_cut == cut
    if reason == "MAX_TOKENS":
        assert cut.message == "The answer was cut off before any text: token limit."
    else:
        assert "without an answer" in cut.message and "thoughts" in cut.message


async def test_a_cut_tool_step_is_told_but_the_turn_ends_on_its_final_answer(
    fake: FakeGemini, tmp_path: Path
) -> None:
    (tmp_path / "a.txt").write_text("apples")
    fake.add(
        call_reply(("read_file", {"path": "a.txt"}), finish_reason="MAX_TOKENS"),
        text_reply("It holds apples."),
    )
    async with open_agent(fake, tmp_path) as agent:
        hooks = HookRecorder().attach(agent)
        assert await agent.run_turn("What is in a.txt?") == "It holds apples."
    first, final = responses(hooks)
    assert first.cut is not None and first.cut.words == "token limit"
    assert final.cut is None and agent.last_cut is None  # the turn's answer is whole


WITHHOLDING = [(r, w) for r, w in CUT_REASONS if r not in RUN_CALLS_AFTER]


@pytest.mark.parametrize(("reason", "words"), WITHHOLDING, ids=[r[:24] for r, _ in WITHHOLDING])
async def test_calls_of_a_step_gemini_stopped_are_not_run_and_the_turn_says_so(
    fake: FakeGemini, tmp_path: Path, reason: str, words: str
) -> None:
    asked: list[ApprovalRequest] = []

    async def approve(request: ApprovalRequest) -> ApprovalDecision:
        asked.append(request)
        return ApprovalDecision.ALLOW_ONCE

    fake.add(
        call_reply(
            ("run_command", {"command": "touch RAN"}),
            ("read_file", {"path": "a.txt"}),
            text="Let me",
            finish_reason=reason,
        ),
        text_reply("Fine."),
    )
    context = ToolSettings(workspace=tmp_path, approval_callback=approve)
    async with open_agent(fake, tmp_path, tool_settings=context) as agent:
        hooks = HookRecorder().attach(agent)
        assert await agent.run_turn("clean up") == "Let me"
        told = f"Gemini stopped the reply ({words}); its 2 tool calls were not run."
        assert agent.last_cut is not None and agent.last_cut.message == told
        [response] = responses(hooks)
        assert response.cut == agent.last_cut
        answers = [f.result.error for f in hooks.payloads("on_tool_result")]
        assert answers == [f"Not run: Gemini stopped this reply ({words})."] * 2
        assert len(hooks.payloads("on_tool_call")) == 2  # every row has a start and an end
        assert len(fake.generate_requests) == 1  # the turn ended there

        # The history stays valid: the next turn is accepted by the strict fake.
        assert await agent.run_turn("never mind") == "Fine."
    assert asked == [] and not (tmp_path / "RAN").exists()
    events = await stored_events(tmp_path / "koroku.db")
    assert [len(e.function_responses) for e in events] == [0, 0, 2, 0, 0]
    replayed = stored_cut(events[1])  # what a history replay shows under the step
    assert replayed is not None and replayed.message == told


@pytest.mark.parametrize("reason", RUN_CALLS_AFTER)
async def test_calls_of_a_whole_or_token_cut_step_run(
    fake: FakeGemini, tmp_path: Path, reason: str
) -> None:
    (tmp_path / "a.txt").write_text("apples")
    fake.add(
        call_reply(("read_file", {"path": "a.txt"}), finish_reason=reason),
        text_reply("It holds apples."),
    )
    async with open_agent(fake, tmp_path) as agent:
        hooks = HookRecorder().attach(agent)
        assert await agent.run_turn("What is in a.txt?") == "It holds apples."
    [finished] = hooks.payloads("on_tool_result")
    assert finished.result.output == "apples"
    assert agent.last_cut is None


@pytest.mark.parametrize(("reason", "words"), BLOCKED_PROMPTS)
async def test_a_blocked_prompt_is_a_clear_sentence(
    fake: FakeGemini, tmp_path: Path, reason: str, words: str
) -> None:
    fake.add(blocked_prompt(reason))
    async with open_agent(fake, tmp_path) as agent:
        hooks = HookRecorder().attach(agent)
        with pytest.raises(AgentError) as caught:
            await agent.run_turn("something Gemini refuses")
    assert caught.value.kind is ErrorKind.INCOMPLETE
    assert caught.value.user_message == (
        f"Gemini blocked your message and gave no answer ({words}); rephrase it and send it again."
    )
    assert [n.message for n in hooks.payloads("on_error")] == [caught.value.user_message]
    assert [e.role for e in await stored_events(tmp_path / "koroku.db")] == ["user"]


async def test_a_reply_stopped_before_any_part_is_a_cut_not_a_mystery(
    fake: FakeGemini, tmp_path: Path
) -> None:
    fake.add(Reply(chunks=((),), finish_reason="SAFETY"))
    async with open_agent(fake, tmp_path) as agent:
        with pytest.raises(AgentError) as caught:
            await agent.run("hello")
    assert caught.value.kind is ErrorKind.INCOMPLETE
    assert caught.value.user_message == (
        "The answer was cut off before any text: safety filter; rephrase the request or retry."
    )
    assert [e.role for e in await stored_events(tmp_path / "koroku.db")] == ["user"]


@pytest.mark.parametrize(
    "reason", [r.value for r in (*types.FinishReason, *types.BlockedReason) if r.value != "STOP"]
)
def test_every_reason_the_sdk_knows_has_words(reason: str) -> None:
    # A reason missing from the table would be spelled out from its name,
    # which is readable but says nothing: keep the table in step with the SDK.
    assert reason in KNOWN_REASONS
    assert reason_words(reason) == reason_words(reason.lower())  # the SDK's enum ignores case
