"""A session as a Markdown document: what ``e`` on the history screen writes.

Pure and deterministic: the same session and rows always give the same text
(dates in local time, as the app shows them, with their UTC offset so they
stay unambiguous; no "exported at" line), so exports diff cleanly. Core code:
no Textual, no Rich. The text of messages is copied verbatim; a caller that
writes it somewhere a terminal may read it strips control characters first
(the UI uses ``koroku_tui.text.safety.sanitize``). Tool names and arguments
are the exception: they show what ran, so their hidden characters are
written as visible ``\u009d`` escapes, which that stripping leaves alone.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Any

from koroku_tui.events import CompactionEvent, SessionEvent
from koroku_tui.events.attachments import AttachedFile
from koroku_tui.events.views import Attached, Called, Said, ToolResult, part_views, speaker
from koroku_tui.store.records import SessionInfo, StoredMessage
from koroku_tui.text.safety import escape_hidden
from koroku_tui.text.tool_args import args_shown

__all__ = ["export_filename", "export_markdown"]

#: Tool output is summarised, not archived in full: the database keeps it all.
TOOL_OUTPUT_LIMIT = 2000
SLUG_LENGTH = 40


def export_markdown(info: SessionInfo, messages: list[StoredMessage]) -> str:
    """The session ``info`` with its stored ``messages`` (as ``load_all`` returns them)."""
    compactions = info.compaction_count
    lines = [
        f"# {_one_line(info.display_title)}",
        "",
        f"- Session: {info.id}",
        f"- Started: {_when(info.created_at)}",
        f"- Last activity: {_when(info.updated_at)}",
        f"- Messages: {info.message_count}"
        + (f" ({compactions} compaction{'s' * (compactions != 1)})" if compactions else ""),
        "",
    ]
    for message in messages:
        lines += ["---", "", *_message_block(message), ""]
    return "\n".join(lines).rstrip("\n") + "\n"


def export_filename(info: SessionInfo) -> str:
    """``<title-slug>-<id>.md``: readable, and unique per session because of the id."""
    slug = re.sub(r"[^a-z0-9]+", "-", info.display_title.lower()).strip("-")
    slug = slug[:SLUG_LENGTH].rstrip("-") or "session"
    return f"{slug}-{info.id}.md"


def _message_block(message: StoredMessage) -> list[str]:
    event = message.event
    when = _when(message.created_at)
    if message.rewind is not None:
        return [f"## Rewind · {when} (#{message.id})", "", f"*{message.rewind.describe()}.*"]
    if message.turn_error is not None:
        said = _one_line(message.turn_error.message)
        return [f"## Error · {when} (#{message.id})", "", f"*The turn ended in an error: {said}*"]
    if event is None:
        return [
            f"## Unreadable message #{message.id} · {when}",
            "",
            f"The stored row could not be read: {_one_line(message.error or 'unknown error')}",
        ]
    if isinstance(event, CompactionEvent):
        kept = (
            f"kept verbatim from message #{event.kept_from_id}"
            if event.kept_from_id is not None
            else "only later messages kept verbatim"
        )
        return [
            f"## Compaction summary · {when} (#{message.id})",
            "",
            f"*Earlier turns were summarised for the model here; {kept}.*",
            "",
            *_quoted(event.summary),
        ]
    heading = speaker(event).capitalize()
    return [f"## {heading} · {when} (#{message.id})", *_parts(event)]


def _parts(event: SessionEvent) -> list[str]:
    lines: list[str] = []
    for view in part_views(event):
        lines.append("")
        match view:
            case Said(text, thought=True):
                # Escaping "<" keeps a thought mentioning </details> from closing the block.
                body = text.replace("<", "&lt;").strip("\n")
                lines += ["<details>", "<summary>Thinking</summary>", "", body, "", "</details>"]
            case Said(file=AttachedFile() as file):
                lines += _attachment(file)
            case Said(text):
                lines.append(text.strip("\n"))
            case Called(name, args):
                lines += [
                    f"**Tool call:** `{escape_hidden(name)}`",
                    *_fenced(args_shown(args), "json"),
                ]
            case ToolResult():
                lines += _tool_result(view)
            case Attached():
                lines.append(f"*(non-text part: {', '.join(view.kinds) or 'empty'})*")
    return lines


def _attachment(file: AttachedFile) -> list[str]:
    """An ``@path`` file: its row's line, then its text fenced (an image: the line alone)."""
    line = f"**Attached:** `{escape_hidden(file.label)}`" + (f" ({file.note})" if file.note else "")
    if file.content is None:
        return [f"{line} ({file.mime_type} image)"]
    return [line, *_fenced(_clip(file.content))]


def _tool_result(result: ToolResult) -> list[str]:
    args = result.args
    call = f"`{escape_hidden(result.name)}`" + (f" `{args_shown(args)}`" if args else "")
    outcome = _fenced(_clip(_as_text(result.outcome)))
    return [f"❌ {call} failed", *outcome] if result.failed else [f"✅ {call}", *outcome]


def _quoted(text: str) -> list[str]:
    return [f"> {line}".rstrip() for line in text.strip("\n").split("\n")]


def _fenced(text: str, language: str = "") -> list[str]:
    # A fence longer than any backtick run inside cannot be closed by the content.
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return [f"{fence}{language}", text, fence]


def _clip(text: str) -> str:
    if len(text) <= TOOL_OUTPUT_LIMIT:
        return text
    return text[:TOOL_OUTPUT_LIMIT] + f"\n… ({len(text) - TOOL_OUTPUT_LIMIT} more characters)"


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else _json(value)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _when(timestamp: float) -> str:
    """Local time, as the app shows it, with the offset: ``2025-06-07 20:30 +09:00``."""
    local = datetime.fromtimestamp(timestamp).astimezone()
    offset = local.strftime("%z")  # "+0900"; "%:z" needs Python 3.12
    return f"{local:%Y-%m-%d %H:%M} {offset[:3]}:{offset[3:5]}"
