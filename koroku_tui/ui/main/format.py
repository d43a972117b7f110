"""Renderings of tool calls for the approval dialog, the transcript and the sidebar.

Arguments come from the model and may hold characters a terminal hides or
acts on; every rendering here shows them as visible escapes
(``koroku_tui.text.tool_args``), never drops them.
"""

from __future__ import annotations

from typing import Any

from koroku_tui.agent.tools.spec import ToolSpec
from koroku_tui.text.safety import escape_hidden
from koroku_tui.text.tool_args import ShownPiece, args_text, first_shown, shown_length

__all__ = [
    "DONE",
    "FAILED",
    "PENDING",
    "SHOWN_AT_FIRST",
    "args_short",
    "capped_args",
    "status_mark",
    "tool_label",
]

SHOWN_AT_FIRST = 20_000
"""Characters of arguments drawn before "… N more characters" (drawing megabytes stalls)."""

# A one-line summary escapes at most this many characters of the arguments:
# its width is tens of characters, the arguments can be megabytes.
_SHORT_SOURCE = 4_096

PENDING = "…"
DONE = "✓"
FAILED = "✗"
DENIED = "⊘"
"""The mark of a call the user denied: nothing failed, so not the ✗."""


def args_short(args: dict[str, Any], width: int = 48) -> str:
    """One line of arguments (hidden characters escaped), cut to ``width`` with an ellipsis."""
    # Escape before flattening: str.split() would treat \x1c-\x1f, \x85 and
    # U+2028/2029 as whitespace and make them vanish.
    text = args_text(args)
    cut = len(text) > max(_SHORT_SOURCE, width)
    flat = " ".join(escape_hidden(text[:_SHORT_SOURCE] if cut else text).split())
    if flat == "{}":
        return ""
    if len(flat) <= width and not cut:
        return flat
    return flat[: width - 1] + "…"


def capped_args(pieces: list[ShownPiece], limit: int) -> tuple[list[ShownPiece], int]:
    """The first ``limit`` characters of ``args_display`` pieces, and how many are left."""
    first = first_shown(pieces, limit)
    return first, shown_length(pieces) - shown_length(first)


def tool_label(spec: ToolSpec) -> str:
    """What the user reads for the tool: ``time › get_current_time`` for an MCP server's
    (its server, and the name the server gave it), else the name the model calls.

    Read from the spec only: a stored call of a tool no registry offers now
    (its server not running) keeps the name the model called, never parsed.
    Hidden characters are not escaped here: each drawing escapes them.
    """
    server = spec.source.server
    if server is None:
        return spec.name
    return f"{server} › {spec.source.tool or spec.name}"


def status_mark(done: bool, failed: bool, denied: bool = False) -> str:
    """The row's state as one character (a denied call failed, but by the user's choice)."""
    if not done:
        return PENDING
    if denied:
        return DENIED
    return FAILED if failed else DONE
