"""The one- and two-line entries of the history screen's lists, as literal ``Text``.

Titles, snippets and summaries come from the model or the user: every piece
goes through ``literal`` so markup in them is shown, never interpreted.
"""

from __future__ import annotations

import re
from datetime import datetime

from rich.text import Text

from koroku_tui.store import SearchHit, SessionInfo, SummaryRecord
from koroku_tui.ui.history.dates import full_when, short_when
from koroku_tui.ui.safe_text import literal, sanitize

__all__ = [
    "clip",
    "delete_question",
    "empty_trash_question",
    "hit_line",
    "plural",
    "session_heading",
    "session_line",
    "summary_line",
    "trash_line",
]

TITLE_WIDTH = 60
SUMMARY_PREVIEW_LINES = 2
MATCH_STYLE = "bold reverse"
CURRENT_MARK = "● "


def clip(text: str, width: int) -> str:
    """``text`` on one line (whitespace collapsed), at most ``width`` characters."""
    flat = " ".join(sanitize(text).split())
    return flat if len(flat) <= width else flat[: width - 1].rstrip() + "…"


def plural(count: int, noun: str, nouns: str | None = None) -> str:
    """``1 message`` / ``3 messages`` (``nouns`` for irregular plurals)."""
    return f"{count} {noun if count == 1 else (nouns or noun + 's')}"


def session_line(info: SessionInfo, now: datetime, *, current: bool) -> Text:
    """Two lines: the title (marked when it is the app's current session), then the facts."""
    line = Text(CURRENT_MARK if current else "  ", style="bold green" if current else "")
    line.append_text(literal(clip(info.display_title, TITLE_WIDTH), "bold"))
    facts = f"{short_when(info.updated_at, now)} · {plural(info.message_count, 'message')}"
    if info.compaction_count:
        facts += f" · {plural(info.compaction_count, 'summary', 'summaries')}"
    if current:
        facts += " · current"
    line.append("\n  " + facts, style="dim")
    return line


def trash_line(info: SessionInfo, now: datetime) -> Text:
    """Two lines: the title, then when it was deleted and what it holds."""
    line = Text("  ")
    line.append_text(literal(clip(info.display_title, TITLE_WIDTH), "bold"))
    deleted = short_when(info.trashed_at or info.updated_at, now)
    line.append(f"\n  deleted {deleted} · {plural(info.message_count, 'message')}", style="dim")
    return line


def session_heading(info: SessionInfo, now: datetime, *, current: bool) -> Text:
    """The detail pane's heading: full title, then when the session started and last moved."""
    heading = literal(" ".join(sanitize(info.display_title).split()), "bold")
    if info.trashed_at is not None:
        heading.append(f"  (in the trash since {full_when(info.trashed_at, now)})", style="red")
    elif current:
        heading.append("  (current session)", style="green")
    heading.append(
        f"\nSession {info.id} · {plural(info.message_count, 'message')}"
        f"\nstarted {full_when(info.created_at, now)}"
        f" · last activity {full_when(info.updated_at, now)}",
        style="dim",
    )
    return heading


def delete_question(info: SessionInfo, *, current: bool, trash_key: str) -> Text:
    """What the delete confirmation asks, naming the session and where it goes (the trash)."""
    question = Text("Move ")
    question.append_text(literal(f"“{clip(info.display_title, TITLE_WIDTH)}”", "bold"))
    question.append(
        f" and its {plural(info.message_count, 'message')} to the trash? "
        f"Nothing is lost: {trash_key} shows the trash, where Enter restores it."
    )
    if current:
        question.append("\nIt is the current session: Koroku will start a fresh one.")
    return question


def empty_trash_question(sessions: list[SessionInfo]) -> Text:
    """What emptying the trash asks: how many sessions and messages go for good."""
    messages = sum(info.message_count for info in sessions)
    question = Text("Remove ")
    question.append(
        f"the {plural(len(sessions), 'session')} in the trash ({plural(messages, 'message')})",
        style="bold",
    )
    question.append(" for good? This cannot be undone.")
    return question


def hit_line(hit: SearchHit, now: datetime) -> Text:
    """The session title and date, then the snippet with each match highlighted."""
    title = hit.session_title or "Untitled session"
    line = literal(clip(title, TITLE_WIDTH), "bold")
    where = "summary" if hit.kind == "compaction" else (hit.role or "message")
    line.append(f"  {short_when(hit.created_at, now)} · {where}\n", style="dim")
    # Split on the match markers first: they are control characters that
    # sanitize() would otherwise remove along with the information they carry.
    for piece, is_match in hit.snippet_segments():
        flat = re.sub(r"\s+", " ", sanitize(piece))
        line.append(flat, style=MATCH_STYLE if is_match else "")
    return line


def summary_line(summary: SummaryRecord, now: datetime) -> Text:
    """When the compaction happened, then the start of the summary."""
    shown = Text(f"{full_when(summary.created_at, now)} · summary #{summary.message_id}", "bold")
    lines = [line for line in sanitize(summary.summary).splitlines() if line.strip()]
    for line in lines[:SUMMARY_PREVIEW_LINES]:
        shown.append("\n" + clip(line, 200))
    if len(lines) > SUMMARY_PREVIEW_LINES:
        shown.append("\n… space to read it whole", style="dim italic")
    return shown
