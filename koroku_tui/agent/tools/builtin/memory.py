"""The ``read_memory`` tool: the daily summary files of earlier conversations."""

from __future__ import annotations

import re
from datetime import datetime

from koroku_tui.agent.tools.result import ToolError
from koroku_tui.agent.tools.tool_settings import ToolSettings
from koroku_tui.privacy.home_files import HomeFileError
from koroku_tui.store.memory_files import DAY_FORMAT, list_days, read_day

__all__ = ["LIST_DAYS", "read_memory"]

LIST_DAYS = "list"
"""The ``date`` that asks for the days that have memory instead of one day's."""
_DATE_RE = re.compile(r"\d{2}-\d{2}-\d{4}")
_LISTED_IN_ERRORS = 10
_MAX_ECHOED = 40


def read_memory(context: ToolSettings, date: str | None = None) -> str:
    """Read the saved summaries of earlier conversations for one day (today by default).

    Args:
        date: The day as dd-mm-yyyy (for example 05-03-2025); leave it out for
            today. Pass "list" to list the days that have memory, newest first.
    """
    memory_dir = context.memory_dir
    if memory_dir is None:
        raise ToolError("Memory is not available in this session.")
    try:
        days = list_days(memory_dir)
    except HomeFileError as exc:  # memory/ is a link (or not a folder): one sentence
        raise ToolError(str(exc)) from None
    if date is not None and date.strip().lower() == LIST_DAYS:
        if not days:
            return "There are no memory files yet."
        listed = "\n".join(day.strftime(DAY_FORMAT) for day in days)
        return f"Days with memory, newest first:\n{listed}"
    today = date is None
    day = datetime.now() if date is None else _parse_day(date)
    name = day.strftime(DAY_FORMAT)
    # The name is rebuilt from the parsed date, so it can never hold a path;
    # read_day follows no link and reads regular files only, up to a cap.
    try:
        text = read_day(memory_dir, day)
    except HomeFileError as exc:
        raise ToolError(str(exc)) from None
    except FileNotFoundError:
        recent = ", ".join(d.strftime(DAY_FORMAT) for d in days[:_LISTED_IN_ERRORS])
        if today:
            # Not the model's mistake: there is simply nothing yet today.
            if not recent:
                return f"There is no memory yet, for today ({name}) or any other day."
            return f"There is no memory for today ({name}) yet. Days with memory: {recent}."
        known = f" Days with memory (newest first): {recent}." if recent else " There are none yet."
        raise ToolError(f"There is no memory for {name}.{known}") from None
    return text if text.strip() else f"The memory file for {name} is empty."


def _parse_day(text: str) -> datetime:
    try:
        if not _DATE_RE.fullmatch(text.strip()):
            raise ValueError(text)
        return datetime.strptime(text.strip(), DAY_FORMAT)
    except ValueError:
        shown = text if len(text) <= _MAX_ECHOED else text[:_MAX_ECHOED] + "…"
        raise ToolError(
            f'{shown!r} is not a date in dd-mm-yyyy form (for example 05-03-2025), nor "list".'
        ) from None
