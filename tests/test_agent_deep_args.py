"""Tool calls whose arguments nest too deeply: answered, never run, and the session stays whole.

The real agent on the strict fake Gemini with the real SDK, a real SQLite
store, then a second agent on the same file as after a restart.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers.agent_kit import open_agent, stored_events, wire_signature
from hostile.nesting import KEPT, TOO_DEEP, nested_args

from koroku_tui.agent.tools import ToolRegistry, ToolSettings
from koroku_tui.agent.tools.approval import ApprovalDecision, ApprovalRequest
from koroku_tui.agent.wire.call_depth import nesting_depth
from koroku_tui.agent.wire.deep_lines import capped_line
from koroku_tui.fake_gemini import FakeGemini, call_reply, text_reply


def keeping_registry(ran: list[int]) -> ToolRegistry:
    registry = ToolRegistry()

    @registry.register
    def keep(data: Any) -> str:
        """Keep some data.

        Args:
            data: The data.
        """
        ran.append(nesting_depth(data))
        return "kept"

    return registry


def last_answer(fake: FakeGemini, request: int) -> dict[str, Any]:
    (part,) = fake.generate_requests[request].contents[-1]["parts"]
    response: dict[str, Any] = part["functionResponse"]["response"]
    return response


@pytest.mark.parametrize(("shape", "depth"), TOO_DEEP, ids=[f"{s}-{d}" for s, d in TOO_DEEP])
async def test_a_call_nested_too_deeply_is_answered_and_the_session_stays_whole(
    fake: FakeGemini, tmp_path: Path, shape: str, depth: int
) -> None:
    ran: list[int] = []
    fake.add(call_reply(("keep", nested_args(shape, depth))), text_reply("Ok."))
    async with open_agent(fake, tmp_path, tools=keeping_registry(ran)) as agent:
        assert await agent.run_turn("keep this") == "Ok."
    assert ran == []
    assert last_answer(fake, 1) == {
        "error": f"Not run: the arguments were nested too deeply ({depth:,} levels); at most "
        "64 levels are accepted. Call the tool again with flat arguments."
    }
    # The call goes back to Gemini as a shallow placeholder, signed as it came.
    model_step = fake.generate_requests[1].contents[1]
    (call_part,) = model_step["parts"]
    assert call_part["functionCall"]["args"] == {
        "koroku_arguments_dropped": f"nested too deeply ({depth:,} levels)"
    }
    assert wire_signature(call_part) is not None

    # After a restart every row is read back, and the next request holds the pair.
    assert len(await stored_events(tmp_path / "koroku.db")) == 4
    fake.add(text_reply("Two."))
    async with open_agent(fake, tmp_path, tools=keeping_registry(ran)) as agent:
        assert await agent.run_turn("again") == "Two."
        assert agent.session_manager is not None
        assert agent.session_manager.skipped_rows == []
    contents = fake.generate_requests[-1].contents
    assert [c["role"] for c in contents] == ["user", "model", "user", "model", "user"]
    assert contents[1] == model_step


async def test_a_call_nested_too_deeply_is_never_put_to_the_user(
    fake: FakeGemini, tmp_path: Path
) -> None:
    """run_command needs approval; a refused call must not reach the approval dialog."""
    asked: list[ApprovalRequest] = []

    async def approve(request: ApprovalRequest) -> ApprovalDecision:
        asked.append(request)
        return ApprovalDecision.ALLOW_ONCE

    args = {"command": "touch RAN", "x": nested_args("object", 300)}
    fake.add(call_reply(("run_command", args)), text_reply("Ok."))
    context = ToolSettings(workspace=tmp_path, approval_callback=approve)
    async with open_agent(fake, tmp_path, tool_settings=context) as agent:
        assert await agent.run_turn("run it") == "Ok."
    assert asked == []
    assert not (tmp_path / "RAN").exists()
    assert "nested too deeply (301 levels)" in last_answer(fake, 1)["error"]


@pytest.mark.parametrize(("shape", "depth"), KEPT, ids=[f"{s}-{d}" for s, d in KEPT])
async def test_a_call_at_the_limit_runs(
    fake: FakeGemini, tmp_path: Path, shape: str, depth: int
) -> None:
    ran: list[int] = []
    args = nested_args(shape, depth)
    fake.add(call_reply(("keep", args)), text_reply("Ok."))
    async with open_agent(fake, tmp_path, tools=keeping_registry(ran)) as agent:
        assert await agent.run_turn("keep this") == "Ok."
    assert ran == [depth - 1]
    assert last_answer(fake, 1) == {"output": "kept"}
    assert fake.generate_requests[1].contents[1]["parts"][0]["functionCall"]["args"] == args


def test_a_line_is_cut_only_where_it_nests_past_the_limit() -> None:
    brackets_in_text = b'data: {"text": "' + b"[" * 1_000 + b'"}'
    assert capped_line(brackets_in_text) is brackets_in_text
    side_by_side = b"data: [" + b"[], " * 1_000 + b"[]]"
    assert capped_line(side_by_side) is side_by_side
    deep = b'data: {"args": ' + b'{"a": ' * 1_000 + b"1" + b"}" * 1_000 + b"}"
    cut = json.loads(capped_line(deep).removeprefix(b"data: "))
    assert nesting_depth(cut) == 1_001  # the marker stands for the 745 levels cut
    assert nesting_depth(cut["args"]) == 1_000
