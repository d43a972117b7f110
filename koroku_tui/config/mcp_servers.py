"""``[mcp_servers.NAME]``: the MCP servers whose tools Koroku offers (the keys Codex uses).

One entry is either a local server started as a process (``command``, with
``args``, ``env``, ``cwd``) talking over stdio, or a remote one reached over
streamable HTTP (``url``, with ``bearer_token_env_var`` and ``http_headers``).
The agent's ``agent/tools/mcp`` package starts them; nothing here imports the
``mcp`` SDK.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = ["DEFAULT_STARTUP_TIMEOUT", "DEFAULT_TOOL_TIMEOUT", "McpServerSettings"]

DEFAULT_STARTUP_TIMEOUT = 10.0
"""Seconds a server may take from start to its tool list (Codex's default)."""
DEFAULT_TOOL_TIMEOUT = 60.0
"""Seconds one call of a server's tool may take (Codex's default)."""


class McpServerSettings(BaseModel):
    """One ``[mcp_servers.NAME]`` entry: how to reach the server, and what Koroku takes of it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    command: str | None = Field(default=None, min_length=1)
    """A local server: the program to start (``"uvx"``); it talks over its stdin and stdout."""
    args: list[str] = Field(default_factory=list)
    """The program's arguments (``["mcp-server-time", "--local-timezone", "Europe/Berlin"]``)."""
    env: dict[str, str] = Field(default_factory=dict)
    """Variables added to the credential-free environment commands get (``{ TZ = "UTC" }``)."""
    cwd: Path | None = None
    """The folder the program starts in (``~`` is the user's home); default: the workspace."""
    url: str | None = Field(default=None, min_length=1)
    """A remote server over streamable HTTP (``"https://example.org/mcp"``)."""
    bearer_token_env_var: str | None = Field(default=None, min_length=1)
    """The variable holding a token sent as ``Authorization: Bearer`` (remote servers)."""
    http_headers: dict[str, str] = Field(default_factory=dict)
    """Headers sent with every request to a remote server (``{ "X-Team" = "blue" }``)."""
    startup_timeout_sec: float = Field(default=DEFAULT_STARTUP_TIMEOUT, gt=0, le=3600)
    """Seconds the server may take to start and list its tools before a turn goes on without it."""
    tool_timeout_sec: float = Field(default=DEFAULT_TOOL_TIMEOUT, gt=0, le=86_400)
    """Seconds one call of its tools may take."""
    enabled_tools: list[str] | None = None
    """Only these of its tools are offered (default: all); ``disabled_tools`` wins."""
    disabled_tools: list[str] = Field(default_factory=list)
    """Its tools never offered to the model."""
    trust: bool = False
    """Its calls run without the approval dialog; counts only in the user's own config file."""

    @model_validator(mode="after")
    def _one_transport(self) -> McpServerSettings:
        if self.command is None and self.url is None:
            raise ValueError("it needs `command` (a local server) or `url` (a remote one)")
        if self.command is not None and self.url is not None:
            raise ValueError("it has both `command` and `url`: keep one")
        return self

    @property
    def is_remote(self) -> bool:
        """Reached over streamable HTTP (``url``), not started as a local process."""
        return self.url is not None

    def offers(self, tool: str) -> bool:
        """Whether the server's tool ``tool`` is offered (``enabled_tools``, ``disabled_tools``)."""
        if tool in self.disabled_tools:
            return False
        return self.enabled_tools is None or tool in self.enabled_tools
