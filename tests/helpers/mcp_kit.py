"""Shared pieces of the MCP tests: real servers (the published one, the SDK-built fixture)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from koroku_tui.config.mcp_servers import McpServerSettings

FIXTURES = Path(__file__).parent.parent / "mcp_fixtures"

TIME_SERVER = McpServerSettings(
    command=sys.executable, args=["-m", "mcp_server_time", "--local-timezone", "UTC"]
)
"""The published ``mcp-server-time`` (dev group), started as a user's config would."""

ECHO_TOOL = {
    "name": "echo",
    "description": "Say the text back.",
    "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
}
"""A tool of the fixture server: its answer names the tool and its arguments."""


def listed_server(folder: Path, name: str, **plan: Any) -> McpServerSettings:
    """A stdio server built with the SDK's ``Server`` (``mcp_fixtures/listed_server.py``)
    following ``plan`` (default: one ``echo`` tool); see the script for the keys."""
    plan.setdefault("tools", [ECHO_TOOL])
    settings: dict[str, Any] = plan.pop("settings", {})
    path = folder / f"{name}-plan.json"
    path.write_text(json.dumps(plan))
    script = str(FIXTURES / "listed_server.py")
    return McpServerSettings(command=sys.executable, args=[script, str(path)], **settings)


def failing_command(line: str, status: int = 2) -> McpServerSettings:
    """A "server" that writes ``line`` on stderr and exits at once."""
    code = f"import sys; print({line!r}, file=sys.stderr); sys.exit({status})"
    return McpServerSettings(command=sys.executable, args=["-c", code])


def silent_command(startup_timeout_sec: float) -> McpServerSettings:
    """A "server" that never answers ``initialize`` (it reads nothing, writes nothing)."""
    return McpServerSettings(
        command=sys.executable,
        args=["-c", "import time; time.sleep(3600)"],
        startup_timeout_sec=startup_timeout_sec,
    )
