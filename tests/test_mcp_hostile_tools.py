"""Hostile servers' tools through the agent and the strict fake: many, huge, misnamed, sneaky.

Each server is a script of ``tests/mcp_servers/``; the strict fake refuses
what the real API refuses (bad names, schemas it cannot take), so a request
it accepts (status 200) is one Gemini would take.
"""

from __future__ import annotations

import gc
import json
import tracemalloc
from pathlib import Path

import pytest
from helpers.mcp_kit import serving
from helpers.mcp_servers import server_settings
from hostile.terminal import FORBIDDEN_IN_OUTPUT
from mcp_servers import bad_names, bad_schema, escapes, huge_result
from test_mcp_agent import declarations, responses

from koroku_tui.agent.tools.mcp.names import MAX_NAME
from koroku_tui.agent.tools.mcp.status import ServerState
from koroku_tui.agent.tools.tool_settings import MAX_OUTPUT_CHARS
from koroku_tui.fake_gemini import FakeGemini, call_reply, text_reply

pytestmark = pytest.mark.timeout(120)

FORBIDDEN = set(FORBIDDEN_IN_OUTPUT)


def statuses_of_requests(fake: FakeGemini) -> list[int | None]:
    return [request.status for request in fake.generate_requests]


async def test_three_hundred_tools_are_all_offered_in_one_request_gemini_takes(
    fake: FakeGemini, tmp_path: Path
) -> None:
    fake.add(call_reply(("many__tool_299", {"text": "last"})), text_reply("Done."))
    many = server_settings("well_behaved", "--tools", "300")
    async with serving(fake, tmp_path, {"many": many}) as served:
        assert await served.agent.run_turn("use the last one") == "Done."
    offered = [name for name in declarations(fake) if name.startswith("many__")]
    assert sorted(offered) == sorted(f"many__tool_{i}" for i in range(300))
    assert statuses_of_requests(fake) == [200, 200]
    assert responses(fake, 1)[-1]["response"] == {"output": "tool_299: last"}


async def test_a_ten_megabyte_answer_is_capped_and_leaves_nothing_behind(
    fake: FakeGemini, tmp_path: Path
) -> None:
    """Capped as the built-in tools' output (head, tail, a note); one more such answer does
    not grow what Koroku holds (it keeps the capped text; the SDK's reader holds the last
    message it read, whatever its size, until the next one: bounded, not growing)."""
    turns = 3
    for _ in range(turns):
        fake.add(call_reply(("big__huge", {})), text_reply("Read it."))
    held = []
    async with serving(fake, tmp_path, {"big": server_settings("huge_result")}) as served:
        tracemalloc.start()
        try:
            for _ in range(turns):
                assert await served.agent.run_turn("read it") == "Read it."
                gc.collect()
                held.append(tracemalloc.get_traced_memory()[0])
        finally:
            tracemalloc.stop()
    answer = huge_result.huge_text(10)
    for index in range(1, 2 * turns, 2):
        output = responses(fake, index)[-1]["response"]["output"]
        assert len(output) <= MAX_OUTPUT_CHARS
        assert output.startswith(answer[:1000]) and output.endswith(answer[-1000:])
        assert "characters cut: output capped at 20,000 characters" in output
    assert held[-1] - held[-2] < len(answer) // 10, held


async def test_names_gemini_cannot_take_are_cleaned_unique_and_reach_their_tools(
    fake: FakeGemini, tmp_path: Path
) -> None:
    """Names that collide once cleaned, too long, non-ASCII, empty, or listed twice: each
    offered name is valid and unique, the request is accepted, and each call reaches the
    tool it was made for; the second ``twin`` is left out, with the reason."""
    async with serving(fake, tmp_path, {"odd": server_settings("bad_names")}) as served:
        await served.servers.ready_for_turn()
        tools = served.status("odd").tools
        offered = [tool for tool in tools if tool.name]
        fake.add(call_reply(*[(tool.name, {}) for tool in offered]), text_reply("All called."))
        assert await served.agent.run_turn("call them all") == "All called."
    assert [tool.tool for tool in offered] == bad_names.NAMES  # each once, in order
    names = [tool.name for tool in offered]
    assert len(set(names)) == len(names)
    assert all(len(name) <= MAX_NAME for name in names)
    assert [tool.left_out for tool in tools if not tool.name] == [
        "the server lists another tool of the same name"
    ]
    assert statuses_of_requests(fake) == [200, 200]
    answered = {r["name"]: r["response"]["output"] for r in responses(fake, 1)}
    assert answered == {tool.name: f"called {tool.tool}" for tool in offered}


async def test_escapes_in_names_and_descriptions_are_flagged_and_never_reach_gemini_raw(
    fake: FakeGemini, tmp_path: Path
) -> None:
    """The model reads the descriptions escaped, as the user does (declarations and the
    system instruction); the MCP view is told which names and descriptions hide something."""
    fake.add(call_reply(("esc__plain_name", {})), text_reply("Read."))
    async with serving(fake, tmp_path, {"esc": server_settings("escapes")}) as served:
        assert await served.agent.run_turn("look") == "Read."
        tools = served.status("esc").tools
    assert [tool.tool for tool in tools] == [tool.name for tool in escapes.tools()]
    for tool in tools[:-1]:  # a terminal attack in its name and its description
        assert tool.flagged.startswith("its name holds hidden characters (U+"), tool.tool
        assert "; its description holds hidden characters (U+" in tool.flagged, tool.tool
    assert tools[-1].flagged.startswith("its description holds hidden characters (U+")
    request = fake.generate_requests[0].body
    told = json.dumps(request["tools"], ensure_ascii=False) + json.dumps(
        request["systemInstruction"], ensure_ascii=False
    )
    assert "Innocent\\\\u001b]52;c;" in told  # escaped, still readable
    assert not set(told) & FORBIDDEN
    # The answer reaches the model as it came, as a command's output does: every place
    # that shows it escapes it (the transcript, the history, --print).
    [answer] = responses(fake, 1)
    assert answer["response"] == {"output": f"all of them: {escapes.EVERY_ATTACK}"}


async def test_a_schema_gemini_cannot_take_leaves_that_tool_out_with_its_reason(
    fake: FakeGemini, tmp_path: Path
) -> None:
    fake.add(call_reply(("schemas__fine", {"text": "ok"})), text_reply("Fine."))
    async with serving(fake, tmp_path, {"schemas": server_settings("bad_schema")}) as served:
        assert await served.agent.run_turn("use the fine one") == "Fine."
        tools = served.status("schemas").tools
    assert [tool.tool for tool in tools] == list(bad_schema.SCHEMAS)
    left_out = {tool.tool: tool.left_out for tool in tools if tool.left_out}
    assert left_out == {"ref_cycle": "its schema nests '#/$defs/a' in itself without end"}
    assert "schemas__fine" in declarations(fake)
    assert statuses_of_requests(fake) == [200, 200]
    assert responses(fake, 1)[-1]["response"] == {"output": "called fine"}


async def test_a_tool_list_the_protocol_refuses_is_one_sentence_and_the_turn_goes_on(
    fake: FakeGemini, tmp_path: Path
) -> None:
    """A root schema that is not an object breaks the protocol: the SDK refuses the whole
    list, so none of the server's tools can be called (it could not check their answers)."""
    fake.add(text_reply("Without them."))
    spoilt = server_settings("bad_schema", "--not-object")
    async with serving(fake, tmp_path, {"spoilt": spoilt}) as served:
        assert await served.agent.run_turn("hi") == "Without them."
        status = served.status("spoilt")
    why = (
        "answered in a form the protocol does not allow (tools.5.inputSchema.type: Input "
        "should be 'object'), so none of its tools can be used"
    )
    assert served.notices() == [f"Went on without the MCP server spoilt: it {why}."]
    assert (status.state, status.reason) == (ServerState.FAILED, f"spoilt {why}.")
