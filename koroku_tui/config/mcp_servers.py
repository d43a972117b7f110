"""``[mcp_servers.NAME]``: the MCP servers whose tools Koroku offers (the keys Codex uses).

One entry is either a local server started as a process (``command``, with
``args``, ``env``, ``cwd``) talking over stdio, or a remote one reached over
streamable HTTP (``url``, with ``bearer_token_env_var`` and ``http_headers``).
The agent's ``agent/tools/mcp`` package starts them; nothing here imports the
``mcp`` SDK.

The file sets the keys in :data:`ENTRY_KEYS`; the loader fills in the rest
(:data:`RESOLVED_FIELDS`): the token read from ``bearer_token_env_var``'s
variable, and the one sentence saying why a server cannot start though its
entry is fine (the core shows it as failed, never drops it silently).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, SecretStr, model_validator

__all__ = [
    "DEFAULT_STARTUP_TIMEOUT",
    "DEFAULT_TOOL_TIMEOUT",
    "ENTRY_KEYS",
    "RESOLVED_FIELDS",
    "McpServerSettings",
    "StartupTimeout",
    "ToolTimeout",
]

DEFAULT_STARTUP_TIMEOUT = 10.0
"""Seconds a server may take from start to its tool list (Codex's default)."""
DEFAULT_TOOL_TIMEOUT = 60.0
"""Seconds one call of a server's tool may take (Codex's default)."""
StartupTimeout = Annotated[float, Field(gt=0, le=3600, allow_inf_nan=False)]
ToolTimeout = Annotated[float, Field(gt=0, le=86_400, allow_inf_nan=False)]
"""The timeouts' bounds, written once: the settings and the config file's schema share them."""


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
    """The folder the program starts in; default: the workspace. The loader expands ``~`` and
    takes a relative one from the folder of the config file that names it."""
    url: str | None = Field(default=None, min_length=1)
    """A remote server over streamable HTTP (``"https://example.org/mcp"``)."""
    bearer_token_env_var: str | None = Field(default=None, min_length=1)
    """The variable holding a token sent as ``Authorization: Bearer`` (remote servers)."""
    http_headers: dict[str, str] = Field(default_factory=dict)
    """Headers sent with every request to a remote server (``{ "X-Team" = "blue" }``)."""
    startup_timeout_sec: StartupTimeout = DEFAULT_STARTUP_TIMEOUT
    """Seconds the server may take to start and list its tools before a turn goes on without it."""
    tool_timeout_sec: ToolTimeout = DEFAULT_TOOL_TIMEOUT
    """Seconds one call of its tools may take."""
    enabled_tools: list[str] | None = None
    """Only these of its tools are offered (default: all); ``disabled_tools`` wins."""
    disabled_tools: list[str] = Field(default_factory=list)
    """Its tools never offered to the model."""
    trust: bool = False
    """Its calls run without the approval dialog; counts only in the user's own config file."""
    bearer_token: SecretStr | None = Field(default=None, exclude=True, repr=False)
    """The token itself, read by the loader from ``bearer_token_env_var``'s variable (never
    from a file); masked when printed, left out of dumps. ``None``: none, or see ``problem``."""
    problem: str | None = None
    """Why the server cannot start though its entry is fine, in one sentence naming it (its
    token's variable is not set): the core shows it failed with this, and never starts it."""

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


RESOLVED_FIELDS = frozenset({"bearer_token", "problem"})
"""Fields the loader fills in; a config file that sets one has an unknown key."""
ENTRY_KEYS = tuple(name for name in McpServerSettings.model_fields if name not in RESOLVED_FIELDS)
"""The keys of a ``[mcp_servers.NAME]`` table (the fields above but the resolved ones)."""
