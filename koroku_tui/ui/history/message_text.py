"""One stored row of the raw history as literal ``Text``: text, thoughts, tools, compactions.

The history view shows a clipped version (a few dozen lines, so one huge tool
output cannot make the list sluggish); the reader modal shows ``whole=True``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from rich.text import Text

from koroku_tui.events import CompactionEvent, Event, SessionEvent
from koroku_tui.events.turns import context_floor
from koroku_tui.events.views import Attached, Called, Said, ToolResult, part_views, speaker
from koroku_tui.store import StoredMessage, SummaryRecord
from koroku_tui.text_safety import escape_hidden, escape_hidden_within
from koroku_tui.tool_args import args_text
from koroku_tui.ui.history.dates import full_when
from koroku_tui.ui.safe_text import literal, sanitize

__all__ = ["HistoryMoment", "message_text"]

MAX_PART_CHARS = 2000
MAX_BODY_LINES = 24
MAX_ARGS_CHARS = 300
MAX_WHOLE_ARGS_CHARS = 20_000
"""Characters of a call's arguments the reader shows, as the approval dialog's first screen."""
_LABEL_STYLES = {
    "compaction": "bold magenta",
    "model": "bold cyan",
    "you": "bold green",
    "tool results": "bold yellow",
}


@dataclass(frozen=True, slots=True)
class HistoryMoment:
    """When the history is read: the clock, and the latest compaction (what the model sees)."""

    now: datetime
    latest_compaction: SummaryRecord | None = None

    def hidden_from_model(self, message: StoredMessage) -> bool:
        """True for rows the model no longer sees because a compaction summarised them.

        The context rule (``koroku_tui.events.turns``): after the latest
        compaction C the model sees C and the rows from its floor on.
        """
        latest = self.latest_compaction
        if latest is None or message.id == latest.message_id:
            return False
        if message.kind == "compaction":
            return True
        return message.id < context_floor(latest.message_id, latest.kept_from_id)


def message_text(message: StoredMessage, moment: HistoryMoment, *, whole: bool = False) -> Text:
    """The heading line (id, who, when) and the body of ``message``."""
    event = message.event
    if event is None:
        error = message.error or "unknown error"
        text = literal(f"unreadable message #{message.id}: {error}", "bold red")
        if message.raw_json:
            raw = message.raw_json if whole else message.raw_json[:200]
            text.append_text(literal("\n" + raw, "dim"))
        return text
    text = Text(f"#{message.id} ", style="dim")
    label, label_style = _label(event)
    text.append(label, style=label_style)
    text.append(f"  {full_when(message.created_at, moment.now)}", style="dim")
    if moment.hidden_from_model(message):
        text.append("  · hidden from model", style="dim italic")
    body = _compaction_body(event) if isinstance(event, CompactionEvent) else _parts(event, whole)
    if not whole:
        body = _clip_lines(body)
    if body.plain:
        text.append("\n")
        text.append_text(body)
    return text


def _label(event: Event) -> tuple[str, str]:
    label = speaker(event)
    style = _LABEL_STYLES.get(label)
    return (label, style) if style is not None else (sanitize(label), "bold")


def _compaction_body(event: CompactionEvent) -> Text:
    kept = (
        f"kept verbatim from #{event.kept_from_id}"
        if event.kept_from_id is not None
        else "later messages kept verbatim"
    )
    body = Text(f"── earlier turns summarised for the model; {kept} ──\n", style="magenta")
    body.append_text(literal(event.summary))
    return body


def _parts(event: SessionEvent, whole: bool) -> Text:
    pieces: list[Text] = []
    for view in part_views(event):
        match view:
            case Said(text, thought):
                content = text if whole else text[:MAX_PART_CHARS]
                if thought:
                    piece = Text("thought: ", style="italic dim bold")
                    piece.append_text(literal(content, "italic dim"))
                else:
                    piece = literal(content)
            case Called(name, args):
                piece = Text("→ call ", style="cyan")
                piece.append_text(literal(f"{escape_hidden(name)} {_args(args, whole)}", "cyan"))
            case ToolResult():
                piece = _tool_result(view, whole)
            case Attached():
                piece = literal(f"‹{', '.join(view.kinds) or 'empty'} part›", "dim italic")
        pieces.append(piece)
    return Text("\n").join(pieces)


def _tool_result(result: ToolResult, whole: bool) -> Text:
    args = _args(result.args, whole) if result.args is not None else ""
    name = f"{escape_hidden(result.name)} {args}".rstrip()
    if result.failed:
        piece = Text("✗ ", style="bold red")
        piece.append_text(literal(name, "red"))
        detail = "error: " + _as_text(result.outcome)
    else:
        piece = Text("✓ ", style="bold green")
        piece.append_text(literal(name, "green"))
        detail = _as_text(result.outcome)
    if not whole:
        detail = detail[:MAX_PART_CHARS]
    if detail:
        piece.append_text(literal("\n" + detail, "dim"))
    return piece


def _args(args: dict[str, Any] | None, whole: bool) -> str:
    # Hidden characters become visible escapes (never dropped), after the
    # cut so that an escape is never cut in half.
    shown = args_text(args or {})
    if whole:
        # Even the reader stops somewhere: a megabyte of escapes on one
        # line froze the app for 20 s. The export has everything.
        escaped, used = escape_hidden_within(shown, MAX_WHOLE_ARGS_CHARS)
        if used == len(shown):
            return escaped
        more = len(shown) - used
        return f"{escaped}… {more:,} more characters (export the session to read them all)"
    if len(shown) <= MAX_ARGS_CHARS:
        return escape_hidden(shown)
    return escape_hidden(shown[: MAX_ARGS_CHARS - 1]) + "…"


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def _clip_lines(body: Text) -> Text:
    lines = body.split("\n", allow_blank=True)
    if len(lines) <= MAX_BODY_LINES:
        return body
    clipped = Text("\n").join(lines[:MAX_BODY_LINES])
    clipped.append(
        f"\n… {len(lines) - MAX_BODY_LINES} more lines (space to read all)", style="dim italic"
    )
    return clipped
