"""Renderings of tool calls for the approval dialog, the transcript and the sidebar.

Arguments come from the model and may hold characters a terminal hides or
acts on; every rendering here shows them as visible escapes
(``koroku_tui.tool_args``), never drops them.
"""

from __future__ import annotations

from typing import Any

from koroku_tui.tool_args import args_shown

__all__ = ["DONE", "FAILED", "PENDING", "args_short", "status_mark"]

PENDING = "…"
DONE = "✓"
FAILED = "✗"


def args_short(args: dict[str, Any], width: int = 48) -> str:
    """One line of arguments (hidden characters escaped), cut to ``width`` with an ellipsis."""
    # Escape before flattening: str.split() would treat \x1c-\x1f, \x85 and
    # U+2028/2029 as whitespace and make them vanish.
    flat = " ".join(args_shown(args).split())
    if flat == "{}":
        return ""
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def status_mark(done: bool, failed: bool) -> str:
    """The row's state as one character."""
    if not done:
        return PENDING
    return FAILED if failed else DONE
