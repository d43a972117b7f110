"""What Koroku offers of a server's tools: a spec per tool the model may call, and a word on each.

A tool is offered unless the config turns it off (``enabled_tools``,
``disabled_tools``), the server listed its name before (a call names the tool,
so a second entry could only reach the first, or whichever the server picks),
or Gemini cannot take its schema (``schemas.py``): then its
:class:`McpToolInfo` says why, and the log too. Names are ``<server>__<tool>``
made fit for Gemini (``names.py``). The description the model reads has its
hidden characters as visible escapes, as the user sees it; the MCP view flags
a name or a description holding them.

The specs are built once per tool list (a server's start, or its
``tools/list_changed``), so each request's declarations are converted once.

A server's words go into every request: a description is told the model up
to :data:`MAX_DESCRIPTION` characters, and a tool whose schema is longer than
:data:`MAX_SCHEMA` is left out (one of a few megabytes would make every
request bigger than Gemini takes, whatever the turn).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass, field
from typing import Any

from koroku_tui.agent.tools.mcp.listing import ListedTool
from koroku_tui.agent.tools.mcp.names import tool_name
from koroku_tui.agent.tools.mcp.schemas import declarable
from koroku_tui.agent.tools.mcp.status import McpToolInfo
from koroku_tui.agent.tools.spec import ToolSource, ToolSpec
from koroku_tui.config.mcp_servers import McpServerSettings
from koroku_tui.text.safety import escape_hidden_within, hidden_characters

__all__ = ["MAX_DESCRIPTION", "MAX_SCHEMA", "Offer", "ToolCaller", "offer"]

logger = logging.getLogger(__name__)

MAX_DESCRIPTION = 2_000
"""Characters of a tool's description the model is told (the MCP view shows it whole)."""
MAX_SCHEMA = 100_000
"""Characters of a tool's parameters' schema, as JSON, Koroku declares at most."""

ToolCaller = Callable[[str, dict[str, Any]], Awaitable[str]]
"""``await call(server's tool name, arguments)``: the text of its answer (or ``ToolError``)."""


@dataclass(frozen=True)
class Offer:
    """A server's tools as offered: the specs to register, and what the MCP view shows."""

    specs: list[ToolSpec] = field(default_factory=list)
    tools: tuple[McpToolInfo, ...] = ()


def _flagged(tool: ListedTool) -> str:
    said = []
    for what, text in (("name", tool.name), ("description", tool.description)):
        if hidden := hidden_characters(text):
            said.append(f"its {what} holds hidden characters ({', '.join(hidden[:8])})")
    return "; ".join(said)


def _told(description: str) -> str:
    """The description as the model reads it: hidden characters escaped, cut if long."""
    told, used = escape_hidden_within(description, MAX_DESCRIPTION)
    if used < len(description):
        told += f" … ({len(description) - used:,} more characters cut)"
    return told


def _call_of(caller: ToolCaller, tool: str) -> Callable[[dict[str, Any]], Awaitable[str]]:
    async def call(arguments: dict[str, Any]) -> str:
        return await caller(tool, arguments)

    return call


def _declared(
    settings: McpServerSettings, tool: ListedTool, name: str, repeated: bool
) -> tuple[dict[str, Any] | None, str]:
    """The schema to declare ``tool`` with, or ``None`` and why it is left out."""
    if not settings.offers(tool.name):
        return None, "turned off in the config (enabled_tools, disabled_tools)"
    if repeated or not name:
        why = "the server lists another tool of the same name"
    else:
        ready = declarable(tool.input_schema)
        size = len(json.dumps(ready.schema, ensure_ascii=False)) if ready.schema else 0
        if ready.schema is not None and size <= MAX_SCHEMA:
            return ready.schema, ""
        why = ready.left_out or f"its schema is {size:,} characters long (at most {MAX_SCHEMA:,})"
    logger.warning("MCP tool %r left out: %s", tool.name, why)
    return None, why


def offer(
    server: str,
    settings: McpServerSettings,
    listed: list[ListedTool],
    caller: ToolCaller,
    taken: Collection[str] = (),
    *,
    suffixed: bool = False,
) -> Offer:
    """The specs and the word on each of ``server``'s ``listed`` tools; ``taken``: names in
    use by other tools (built-in ones, other servers'); ``suffixed``: see ``tool_name``."""
    names = set(taken)
    seen: set[str] = set()
    specs: list[ToolSpec] = []
    infos: list[McpToolInfo] = []
    for tool in listed:
        repeated = tool.name in seen
        seen.add(tool.name)
        name = "" if repeated else tool_name(server, tool.name, names, suffixed=suffixed) or ""
        schema, left_out = _declared(settings, tool, name, repeated)
        if schema is not None:
            names.add(name)
            specs.append(
                ToolSpec.from_schema(
                    name,
                    _told(tool.description),
                    schema,
                    _call_of(caller, tool.name),
                    needs_approval=not settings.trust,
                    timeout=settings.tool_timeout_sec,
                    source=ToolSource.mcp(server, tool.name),
                )
            )
        infos.append(
            McpToolInfo(
                name=name if schema is not None else "",
                tool=tool.name,
                description=tool.description,
                flagged=_flagged(tool),
                left_out=left_out,
            )
        )
    return Offer(specs, tuple(infos))
