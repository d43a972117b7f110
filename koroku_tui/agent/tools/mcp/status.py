"""What the UI and ``--print`` may know of the MCP servers: states, tools, reasons.

Plain values with no ``mcp`` SDK in them: the app reads them (the "MCP
servers…" view, notices) without importing the SDK before its first frame.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

__all__ = ["McpToolInfo", "ServerState", "ServerStatus"]


class ServerState(StrEnum):
    """Where one configured server is in its life."""

    STARTING = "starting"
    """Started (or restarted) and not yet listing its tools."""
    READY = "ready"
    """Initialised and its tools listed: they are offered to the model."""
    FAILED = "failed"
    """Did not start, died, or stopped answering (see ``ServerStatus.reason``)."""


@dataclass(frozen=True)
class McpToolInfo:
    """One tool of a server, as Koroku offers it."""

    name: str
    """The name Gemini sees (``time__get_current_time``)."""
    tool: str
    """The name the server gave it (``get_current_time``; untrusted, as the description)."""
    description: str
    """The server's description (untrusted: shown with hidden characters escaped)."""
    flagged: str = ""
    """Why its name or description looks suspicious (hidden characters, terminal escapes),
    or ""."""
    left_out: str = ""
    """Why the tool is not offered (a schema Gemini cannot take, a name listed twice, the
    config), or "" when it is."""


@dataclass(frozen=True)
class ServerStatus:
    """One configured server, now."""

    name: str
    """Its ``[mcp_servers.NAME]``."""
    state: ServerState
    transport: str
    """``stdio`` or ``http``."""
    tools: tuple[McpToolInfo, ...] = ()
    """Its tools (empty until ready)."""
    reason: str = ""
    """One sentence: why it failed (with the last line it wrote to stderr), or ""."""
    restarts: int = 0
    """How many times it was started again this session (at most 3)."""
    trusted: bool = False
    """Its calls run without the approval dialog (``trust = true`` in the user's own file)."""
    startable: bool = True
    """False when its entry cannot start as it is (its token's variable was not set when
    Koroku started): neither a message nor a restart starts it."""
