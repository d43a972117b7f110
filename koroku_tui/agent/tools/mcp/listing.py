"""A server's tool as Koroku keeps it: plain values, copied out of the SDK's model."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import mcp_types

__all__ = ["ListedTool", "listed"]


@dataclass(frozen=True)
class ListedTool:
    """One entry of a server's ``tools/list``."""

    name: str
    """The server's own name for it (what ``tools/call`` is sent)."""
    description: str = ""
    """The server's words for the model (untrusted text)."""
    input_schema: Any = field(default_factory=dict)
    """Its ``inputSchema`` as sent (a JSON object, if the server follows the protocol)."""


def listed(tool: mcp_types.Tool) -> ListedTool:
    """The plain copy of one tool the SDK parsed."""
    return ListedTool(
        name=tool.name, description=tool.description or "", input_schema=tool.input_schema
    )
