"""A session as a Markdown document: what ``e`` on the history screen writes.

Pure and deterministic: the same session and rows always give the same text
(dates in UTC, no "exported at" line), so exports diff cleanly. Core code:
no Textual, no Rich. The text of messages is copied verbatim; a caller that
writes it somewhere a terminal may read it strips control characters first
(the UI uses ``koroku_tui.text_safety.sanitize``). Tool names and arguments
are the exception: they show what ran, so their hidden characters are
written as visible ``\u009d`` escapes, which that stripping leaves alone.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import Any

from koroku_tui.events import (
    CompactionEvent,
    FunctionCallPart,
    FunctionResponsePart,
    OtherPart,
    SessionEvent,
    TextPart,
)
from koroku_tui.store.records import SessionInfo, StoredMessage
from koroku_tui.text_safety import escape_hidden
from koroku_tui.tool_args import args_shown

__all__ = ["export_filename", "export_markdown"]

#: Tool output is summarised, not archived in full: the database keeps it all.
TOOL_OUTPUT_LIMIT = 2000
SLUG_LENGTH = 40
_PART_FLAGS = {"thought", "thought_signature"}


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
    return [f"## {_role_heading(event)} · {when} (#{message.id})", *_parts(event)]


def _role_heading(event: SessionEvent) -> str:
    if event.role == "model":
        return "Model"
    if event.is_real_user_turn:
        return "You"
    if event.role == "user":
        return "Tool results"
    return (event.role or "Unknown role").capitalize()


def _parts(event: SessionEvent) -> list[str]:
    lines: list[str] = []
    for part in event.parts:
        lines.append("")
        if isinstance(part, TextPart) and part.thought:
            # Escaping "<" keeps a thought mentioning </details> from closing the block.
            body = part.text.replace("<", "&lt;").strip("\n")
            lines += ["<details>", "<summary>Thinking</summary>", "", body, "", "</details>"]
        elif isinstance(part, TextPart):
            lines.append(part.text.strip("\n"))
        elif isinstance(part, FunctionCallPart):
            call = part.function_call
            name, args = escape_hidden(call.name or ""), args_shown(call.args or {})
            lines += [f"**Tool call:** `{name}`", *_fenced(args, "json")]
        elif isinstance(part, FunctionResponsePart):
            lines += _tool_result(part)
        else:
            lines.append(_other_part(part))
    return lines


def _tool_result(part: FunctionResponsePart) -> list[str]:
    response = part.function_response.response or {}
    args = part.fc_metadata.args if part.fc_metadata is not None else None
    name = escape_hidden(part.function_response.name or "")
    call = f"`{name}`" + (f" `{args_shown(args)}`" if args else "")
    if part.is_error:
        return [f"❌ {call} failed", *_fenced(_clip(_as_text(response["error"])))]
    output = response.get("output", response)
    return [f"✅ {call}", *_fenced(_clip(_as_text(output)))]


def _other_part(part: OtherPart) -> str:
    kinds = ", ".join(sorted(key for key in part.part if key not in _PART_FLAGS))
    return f"*(non-text part: {kinds or 'empty'})*"


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
    return datetime.fromtimestamp(timestamp, tz=UTC).strftime("%Y-%m-%d %H:%M UTC")
