"""The ``read_memory`` tool: the daily summary files of earlier conversations."""

from __future__ import annotations

import re
from datetime import date as Date
from datetime import datetime
from pathlib import Path

from koroku_tui.agent.tools.context import ToolContext
from koroku_tui.agent.tools.result import ToolError

__all__ = ["MEMORY_DATE_FORMAT", "memory_days", "read_memory"]

MEMORY_DATE_FORMAT = "%d-%m-%Y"
"""Memory files are named ``dd-mm-yyyy.md``."""
_DATE_RE = re.compile(r"\d{2}-\d{2}-\d{4}")
_LISTED_IN_ERRORS = 10


def read_memory(context: ToolContext, date: str | None = None) -> str:
    """Read the saved summaries of earlier conversations for one day.
    Without a date, list the days that have memory files, newest first.

    Args:
        date: The day as dd-mm-yyyy (for example 05-03-2025). Leave it out to
            list the days that have memory.
    """
    memory_dir = context.memory_dir
    if memory_dir is None:
        raise ToolError("Memory is not available in this session.")
    days = memory_days(memory_dir)
    if date is None:
        if not days:
            return "There are no memory files yet."
        listed = "\n".join(day.strftime(MEMORY_DATE_FORMAT) for day in days)
        return f"Days with memory, newest first:\n{listed}"
    day = _parse_day(date)
    # The name is rebuilt from the parsed date, so it can never hold a path.
    path = memory_dir / f"{day.strftime(MEMORY_DATE_FORMAT)}.md"
    if not path.is_file():
        recent = ", ".join(d.strftime(MEMORY_DATE_FORMAT) for d in days[:_LISTED_IN_ERRORS])
        known = f" Days with memory (newest first): {recent}." if recent else " There are none yet."
        raise ToolError(f"There is no memory for {date}.{known}")
    text = path.read_text(encoding="utf-8", errors="replace")
    return text if text.strip() else f"The memory file for {date} is empty."


def memory_days(memory_dir: Path) -> list[Date]:
    """The days that have a memory file, newest first (other files are ignored)."""
    if not memory_dir.is_dir():
        return []
    days = []
    for entry in memory_dir.glob("*.md"):
        if not (_DATE_RE.fullmatch(entry.stem) and entry.is_file()):
            continue
        try:
            days.append(datetime.strptime(entry.stem, MEMORY_DATE_FORMAT).date())
        except ValueError:
            continue  # e.g. 31-02-2025.md
    return sorted(days, reverse=True)


def _parse_day(text: str) -> Date:
    try:
        if not _DATE_RE.fullmatch(text.strip()):
            raise ValueError(text)
        return datetime.strptime(text.strip(), MEMORY_DATE_FORMAT).date()
    except ValueError:
        raise ToolError(
            f"{text!r} is not a date in dd-mm-yyyy form (for example 05-03-2025)."
        ) from None
