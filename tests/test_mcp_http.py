"""A remote server over streamable HTTP on 127.0.0.1, built with the SDK's own ``MCPServer``.

The server is ``mcp_servers/http_server.py``; its ``seen_headers`` tool
answers the headers its request carried, so the test reads what arrived: the
entry's bearer token (the config loader reads it from the variable
``bearer_token_env_var`` names: ``test_mcp_tokens.py`` runs that whole) and
the ``http_headers``.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path

from helpers.agent_kit import open_agent
from helpers.mcp_servers import mcp_http_url  # noqa: F401 (a fixture)
from pydantic import SecretStr
from test_mcp_agent import responses

from koroku_tui.agent.tools import ToolSettings, default_registry
from koroku_tui.agent.tools.mcp.servers import McpServers
from koroku_tui.agent.tools.mcp.status import ServerState
from koroku_tui.config.mcp_servers import McpServerSettings
from koroku_tui.fake_gemini import FakeGemini, call_reply, text_reply


async def test_a_remote_server_gets_the_bearer_token_and_the_headers(
    fake: FakeGemini,
    tmp_path: Path,
    mcp_http_url: str,  # noqa: F811
) -> None:
    remote = McpServerSettings(
        url=mcp_http_url,
        bearer_token_env_var="DOCS_TOKEN",
        bearer_token=SecretStr("s3cret"),
        http_headers={"X-Team": "blue"},
    )
    registry = default_registry()
    servers = McpServers({"docs": remote}, registry, workspace=tmp_path)
    fake.add(call_reply(("docs__seen_headers", {})), text_reply("Both arrived."))
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
