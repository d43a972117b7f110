"""Short, literal renderings of tool calls for the transcript and the sidebar."""

from __future__ import annotations

import json
from typing import Any

from koroku_tui.ui.safe_text import sanitize

__all__ = ["DONE", "FAILED", "PENDING", "args_full", "args_short", "status_mark"]

PENDING = "…"
DONE = "✓"
FAILED = "✗"


def args_full(args: dict[str, Any]) -> str:
    """Every argument, pretty-printed and sanitized (shown when a row is selected)."""
    return sanitize(json.dumps(args, indent=2, ensure_ascii=False, default=str))


def args_short(args: dict[str, Any], width: int = 48) -> str:
    """One line of arguments, cut to ``width`` characters with an ellipsis."""
    flat = " ".join(sanitize(json.dumps(args, ensure_ascii=False, default=str)).split())
    if flat == "{}":
        return ""
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def status_mark(done: bool, failed: bool) -> str:
    """The row's state as one character."""
    if not done:
        return PENDING
    return FAILED if failed else DONE
