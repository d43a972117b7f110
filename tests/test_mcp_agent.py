"""The agent calls MCP servers' tools through the real SDK and real processes (issue 25).

The published ``mcp-server-time`` (dev group) answers through the strict fake
Gemini: the model is offered ``time__get_current_time`` with the server's
schema, told it in the system instruction, and reads the server's answer.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from helpers.agent_kit import HookRecorder, open_agent

from koroku_tui.agent.tools import ToolSettings, default_registry
from koroku_tui.agent.tools.mcp.servers import McpServers
from koroku_tui.agent.tools.mcp.status import ServerState
from koroku_tui.config.mcp_servers import McpServerSettings
from koroku_tui.fake_gemini import FakeGemini, call_reply, text_reply

TIME_SERVER = McpServerSettings(
    command=sys.executable, args=["-m", "mcp_server_time", "--local-timezone", "UTC"]
)
"""The published server, started as a user's config would start it."""


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
