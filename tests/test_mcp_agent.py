"""The agent calls MCP servers' tools through the real SDK and real processes (issue 25).

The published ``mcp-server-time`` (dev group) answers through the strict fake
Gemini: the model is offered ``time__get_current_time`` with the server's
schema, told it in the system instruction, and reads the server's answer.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from helpers.agent_kit import HookRecorder, open_agent
from helpers.mcp_kit import ECHO_TOOL, TIME_SERVER, failing_command, listed_server, silent_command

from koroku_tui.agent import ErrorKind
from koroku_tui.agent.tools import ToolRegistry, ToolSettings, default_registry
from koroku_tui.agent.tools.mcp.servers import McpServers
from koroku_tui.agent.tools.mcp.status import ServerState
from koroku_tui.fake_gemini import FakeGemini, call_reply, text_reply


def declarations(fake: FakeGemini, index: int = 0) -> dict[str, dict[str, Any]]:
    body = fake.generate_requests[index].body
    return {d["name"]: d for d in body["tools"][0]["functionDeclarations"]}


def responses(fake: FakeGemini, index: int) -> list[dict[str, Any]]:
    """The function responses the request ``index`` sent back."""
    return [
        part["functionResponse"]
        for content in fake.generate_requests[index].contents
        for part in content.get("parts", [])
        if "functionResponse" in part
    ]


async def test_the_agent_calls_a_published_server_s_tool_and_the_model_reads_its_answer(
    fake: FakeGemini, tmp_path: Path
) -> None:
    registry = default_registry()
    servers = McpServers({"time": TIME_SERVER}, registry, workspace=tmp_path)
    fake.add(
        call_reply(("time__get_current_time", {"timezone": "Europe/Berlin"})),
        text_reply("It is morning in Berlin."),
    )
    approve = ToolSettings(workspace=tmp_path, auto_approve=True)
    async with open_agent(
        fake, tmp_path, tools=registry, tool_settings=approve, mcp=servers
    ) as agent:
        hooks = HookRecorder().attach(agent)
        answer = await agent.run_turn("What time is it in Berlin?")
        assert agent.mcp is servers

    assert answer == "It is morning in Berlin."
    offered = declarations(fake)["time__get_current_time"]
    assert offered["parameters_json_schema"]["required"] == ["timezone"]
    instruction = fake.generate_requests[0].body["systemInstruction"]["parts"][0]["text"]
    assert "- time__get_current_time (asks the user first): Get current time" in instruction
    [response] = responses(fake, 1)
    assert response["name"] == "time__get_current_time"
    told = json.loads(response["response"]["output"])
    assert told["timezone"] == "Europe/Berlin" and "datetime" in told
    assert servers.used == {"time"}
    ready = hooks.payloads("on_mcp_status")
    assert ready and ready[-1][0].state is ServerState.READY
    assert ready[-1][0].tools[0].tool == "get_current_time"
    spec = registry.spec_for("time__get_current_time")
    assert (spec.source.server, spec.source.tool) == ("time", "get_current_time")


UNDEFINED_REF_TOOL = {
    "name": "lookup",
    "description": "Look something up.",
    "inputSchema": {"type": "object", "properties": {"kind": {"$ref": "#/$defs/Kind"}}},
}
"""A schema Gemini refuses ("reference to undefined schema at properties.kind")."""
ENDLESS_TOOL = {
    "name": "tree",
    "description": "Walk a tree.",
    "inputSchema": {
        "type": "object",
        "required": ["root"],
        "properties": {"root": {"$ref": "#/$defs/Node"}},
        "$defs": {
            "Node": {
                "type": "object",
                "required": ["child"],
                "properties": {"child": {"$ref": "#/$defs/Node"}},
            }
        },
    },
}
"""A loop of required fields: no value can satisfy it, and Gemini refuses it."""


async def test_a_schema_gemini_refuses_leaves_that_tool_out_not_the_request(
    fake: FakeGemini, tmp_path: Path
) -> None:
    registry = default_registry()
    server = listed_server(tmp_path, "kit", tools=[UNDEFINED_REF_TOOL, ENDLESS_TOOL, ECHO_TOOL])
    servers = McpServers({"kit": server}, registry, workspace=tmp_path)
    fake.add(text_reply("Hello."))
    async with open_agent(fake, tmp_path, tools=registry, mcp=servers) as agent:
        assert await agent.run_turn("hi") == "Hello."

    offered = declarations(fake)
    assert "kit__echo" in offered
    assert "kit__lookup" not in offered and "kit__tree" not in offered
    [status] = servers.statuses()
    why = {tool.tool: tool.left_out for tool in status.tools}
    assert why == {
        "lookup": "its schema refers to '#/$defs/Kind', which it does not define",
        "tree": "its schema nests '#/$defs/Node' in itself without end",
        "echo": "",
    }


async def test_a_server_that_fails_to_start_is_one_sentence_and_the_turn_goes_on(
    fake: FakeGemini, tmp_path: Path
) -> None:
    registry = default_registry()
    servers = McpServers(
        {"broken": failing_command("boom: no config"), "silent": silent_command(0.5)},
        registry,
        workspace=tmp_path,
    )
    fake.add(text_reply("Answered anyway."))
    async with open_agent(fake, tmp_path, tools=registry, mcp=servers) as agent:
        hooks = HookRecorder().attach(agent)
        assert await agent.run_turn("hi") == "Answered anyway."

    notices = [(n.kind, n.message) for n in hooks.payloads("on_error")]
    assert notices == [
        (
            ErrorKind.TOOL_SERVER,
            "Went on without the MCP server broken: it ended before it was ready; "
            "the last line on its stderr: boom: no config.",
        ),
        (
            ErrorKind.TOOL_SERVER,
            "Went on without the MCP server silent: it did not finish starting within 0.5 s.",
        ),
    ]
    assert not [name for name in declarations(fake) if "__" in name]
    broken = servers.statuses()[0]
    assert broken.state is ServerState.FAILED
    assert broken.reason == (
        "broken ended before it was ready; the last line on its stderr: boom: no config."
    )


async def test_a_session_with_mcp_calls_goes_on_after_a_restart_and_in_a_fork(
    fake: FakeGemini, tmp_path: Path
) -> None:
    """The stored calls and their answers are sent again, signatures and all, and the
    strict fake takes them: after a restart (new servers), and in a fork of the session."""

    def kit() -> tuple[ToolRegistry, McpServers]:
        registry = default_registry()
        return registry, McpServers(
            {"kit": listed_server(tmp_path, "kit")}, registry, workspace=tmp_path
        )

    approve = ToolSettings(workspace=tmp_path, auto_approve=True)
    fake.add(call_reply(("kit__echo", {"text": "one"})), text_reply("Echoed."))
    registry, servers = kit()
    async with open_agent(
        fake, tmp_path, tools=registry, tool_settings=approve, mcp=servers
    ) as agent:
        assert await agent.run_turn("echo one") == "Echoed."

    fake.add(call_reply(("kit__echo", {"text": "two"})), text_reply("Again."))
    registry, servers = kit()
    async with open_agent(
        fake, tmp_path, tools=registry, tool_settings=approve, mcp=servers
    ) as again:
        assert await again.run_turn("echo two") == "Again."
        store = again.session_manager
        assert store is not None
        fork = await store.fork(store.session_id)
        await store.switch_session(fork.id)
        await again.refresh()
        fake.add(text_reply("Forked."))
        assert await again.run_turn("in the fork") == "Forked."

    requests = fake.generate_requests
    assert [r.status for r in requests] == [200] * 5
    assert responses(fake, 1)[0]["response"] == {"output": 'echo got {"text": "one"}'}
    # The fork's request holds both turns' calls and answers, as first sent.
    second_turn = requests[3].contents
    assert requests[-1].contents[: len(second_turn)] == second_turn
