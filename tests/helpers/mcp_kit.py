"""Shared pieces of the MCP tests: real servers (the published one, the SDK-built fixture)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tomlkit
from helpers.agent_kit import HookRecorder, open_agent
from helpers.processes import KOROKU, koroku_env

from koroku_tui.agent import Agent
from koroku_tui.agent.tools import ToolSettings, default_registry
from koroku_tui.agent.tools.mcp.servers import McpServers
from koroku_tui.agent.tools.mcp.status import ServerStatus
from koroku_tui.config.mcp_servers import McpServerSettings
from koroku_tui.fake_gemini import FakeGemini

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


def config_toml(servers: Mapping[str, McpServerSettings]) -> str:
    """The ``[mcp_servers]`` tables of a config file naming ``servers``, as a user writes them."""
    tables = {
        name: server.model_dump(mode="json", exclude_none=True, exclude_defaults=True)
        for name, server in servers.items()
    }
    return tomlkit.dumps({"mcp_servers": tables})


def print_with_servers(
    fake: FakeGemini,
    folder: Path,
    servers: Mapping[str, McpServerSettings],
    *args: str,
    env: Mapping[str, str] | None = None,
) -> subprocess.Popen[str]:
    """The installed ``koroku-tui --config FILE ARGS`` in ``folder`` (its workspace), ``FILE``
    naming ``servers``, Gemini the fake, the home ``folder/home``; ``env`` is added."""
    assert KOROKU is not None, "koroku-tui is not installed in the test environment"
    config = folder / "config.toml"
    config.write_text(config_toml(servers), encoding="utf-8")
    environment = koroku_env(fake, folder / "home") | dict(env or {})
    return subprocess.Popen(
        [KOROKU, "--config", str(config), *args],
        cwd=folder,
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(process: subprocess.Popen[str]) -> tuple[int, str, str]:
    """Wait for a ``--print`` run: its exit status, stdout and stderr."""
    out, err = process.communicate(timeout=45)
    return process.returncode, out, err


@dataclass(frozen=True)
class Served:
    """An agent on the fake with MCP servers, its calls approved, its hooks recorded."""

    agent: Agent
    servers: McpServers
    hooks: HookRecorder

    def notices(self) -> list[str]:
        """What the agent said on ``on_error`` (the "Went on without..." lines among them)."""
        return [notice.message for notice in self.hooks.payloads("on_error")]

    def status(self, name: str) -> ServerStatus:
        """The server ``name``'s status now."""
        [found] = [status for status in self.servers.statuses() if status.name == name]
        return found

    async def until(self, name: str, holds: Callable[[ServerStatus], bool]) -> ServerStatus:
        """The status of ``name`` once ``holds`` is true of it (waits on the status changes)."""
        changed = asyncio.Event()
        self.servers.listen(lambda _: changed.set())
        while not holds(status := self.status(name)):
            await changed.wait()
            changed.clear()
        return status


@asynccontextmanager
async def serving(
    fake: FakeGemini, tmp_path: Path, servers: Mapping[str, McpServerSettings]
) -> AsyncIterator[Served]:
    """An agent (built-in tools and ``servers``' tools, every call approved) on ``fake``."""
    registry = default_registry()
    mcp = McpServers(servers, registry, workspace=tmp_path)
    approve = ToolSettings(workspace=tmp_path, auto_approve=True)
    async with open_agent(fake, tmp_path, tools=registry, tool_settings=approve, mcp=mcp) as agent:
        yield Served(agent, mcp, HookRecorder().attach(agent))
