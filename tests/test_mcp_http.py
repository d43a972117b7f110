"""A remote server over streamable HTTP on 127.0.0.1, built with the SDK's own ``Server``.

The server runs in the test's event loop (uvicorn); its one tool answers
with the headers its request carried, so the test reads what arrived: the
bearer token from the variable ``bearer_token_env_var`` names, and the
``http_headers``.
"""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
import uvicorn
from helpers.agent_kit import open_agent
from mcp.server.lowlevel.server import Server
from test_mcp_agent import responses

from koroku_tui.agent.tools import ToolSettings, default_registry
from koroku_tui.agent.tools.mcp.servers import McpServers
from koroku_tui.agent.tools.mcp.status import ServerState
from koroku_tui.config.mcp_servers import McpServerSettings
from koroku_tui.fake_gemini import FakeGemini, call_reply, text_reply

HEADERS_TOOL = types.Tool(
    name="headers", description="Say which headers arrived.", input_schema={"type": "object"}
)


def header_server() -> Server[Any]:
    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[HEADERS_TOOL])

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        seen = {k: ctx.request.headers.get(k) for k in ("authorization", "x-team")}
        return types.CallToolResult(content=[types.TextContent(type="text", text=json.dumps(seen))])

    return Server("headers", on_list_tools=list_tools, on_call_tool=call_tool)


@pytest.fixture
async def server_url() -> AsyncIterator[str]:
    """The URL of the header server, listening on 127.0.0.1 until the test ends."""
    listening = socket.socket()
    listening.bind(("127.0.0.1", 0))
    port = listening.getsockname()[1]
    app = header_server().streamable_http_app()
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    task = asyncio.create_task(server.serve(sockets=[listening]))
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        server.should_exit = True
        await task
        listening.close()


async def test_a_remote_server_gets_the_bearer_token_and_the_headers(
    fake: FakeGemini, tmp_path: Path, server_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DOCS_TOKEN", "s3cret")
    remote = McpServerSettings(
        url=server_url,
        bearer_token_env_var="DOCS_TOKEN",
        http_headers={"X-Team": "blue"},
    )
    registry = default_registry()
    servers = McpServers({"docs": remote}, registry, workspace=tmp_path)
    fake.add(call_reply(("docs__headers", {})), text_reply("Both arrived."))
    approve = ToolSettings(workspace=tmp_path, auto_approve=True)
    async with open_agent(
        fake, tmp_path, tools=registry, tool_settings=approve, mcp=servers
    ) as agent:
        assert await agent.run_turn("which headers?") == "Both arrived."
        [status] = servers.statuses()

    assert (status.state, status.transport) == (ServerState.READY, "http")
    [response] = responses(fake, 1)
    seen = json.loads(response["response"]["output"])
    assert seen == {"authorization": "Bearer s3cret", "x-team": "blue"}


async def test_a_remote_server_nobody_answers_at_is_one_sentence(tmp_path: Path) -> None:
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()  # nothing listens there
    remote = McpServerSettings(url=f"http://127.0.0.1:{port}/mcp", startup_timeout_sec=5)
    servers = McpServers({"gone": remote}, default_registry(), workspace=tmp_path)
    try:
        [line] = await servers.ready_for_turn()
    finally:
        await servers.close()
    url = f"http://127.0.0.1:{port}/mcp"
    assert line.startswith(
        f"Went on without the MCP server gone: it could not be reached at {url} ("
    )
