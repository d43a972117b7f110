"""A stored message as readable text: the one rendering the history screen and the model share.

The history screen (``ui/history/message_text.py``) styles these pieces with
Rich; the ``read_session`` tool joins them into plain text for the model. So
what the user reads in the history and what the model reads of a past
session say the same thing, in the same order, with the same cuts.

A message is a heading (``#12 model  2025-06-01 14:05``) and a body, each a
list of :class:`Piece`: text and a style *name* (see ``STYLE_NAMES``); how a
name looks is the renderer's business. Piece text is as stored: each
renderer makes hidden characters safe for its medium (``koroku_tui.text.safety``).

Also home of :func:`shorten`, the cut of a tool's output that the compaction
transcript and ``read_session`` both use.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

from koroku_tui.events import CompactionEvent, Event, RewindEvent, SessionEvent, TurnErrorEvent
from koroku_tui.events.attachments import AttachedFile
from koroku_tui.events.views import Attached, Called, Said, ToolResult, part_views, speaker
from koroku_tui.text.safety import escape_hidden, escape_hidden_within
from koroku_tui.text.tool_args import args_text

__all__ = [
    "CLIPPED",
    "FOR_MODEL",
    "STYLE_NAMES",
    "TOOL_OUTPUT_IN_TRANSCRIPT",
    "WHOLE",
    "Cuts",
    "Piece",
    "body_pieces",
    "heading_pieces",
    "plain",
    "rewind_pieces",
    "shorten",
    "turn_error_pieces",
    "unreadable_pieces",
]

TOOL_OUTPUT_IN_TRANSCRIPT = 2_000
"""Characters of a tool's output kept when a past conversation is re-read as text
(the compaction transcript, ``read_session``): what was read or run, not every byte."""

MAX_PART_CHARS = 2000
MAX_BODY_LINES = 24
MAX_ARGS_CHARS = 300
MAX_WHOLE_ARGS_CHARS = 20_000
"""Characters of a call's arguments the reader shows, as the approval dialog's first screen."""
UNREADABLE_RAW_CHARS = 200

STYLE_NAMES = frozenset(
    {
        "",  # plain text
        "id",
        "when",
        "hidden",
        "label.you",
        "label.model",
        "label.tool results",
        "label.compaction",
        "label.other",
        "summary.rule",
        "summary",
        "thought.label",
        "thought",
        "call",
        "ok.mark",
        "ok.name",
        "ok.detail",
        "failed.mark",
        "failed.name",
        "failed.detail",
        "attached",
        "more",
        "unreadable",
        "raw",
        "rewind",
        "turn_error",
        "abandoned",
    }
)
"""Every style name a :class:`Piece` may carry."""


class Piece(NamedTuple):
    """A run of text and the name of how it looks (``""`` for plain)."""

    text: str
    style: str = ""


@dataclass(frozen=True, slots=True)
class Cuts:
    """How much of a long message is shown."""

    text: int | None
    """Characters of one text part; ``None`` for all."""
    args: int | None
    """Characters of a call's arguments; ``None`` for the reader's generous cap."""
    result: Callable[[str], str]
    """Cuts a tool's output (or error) text."""
    lines: int | None
    """Lines of the body; ``None`` for all."""


def shorten(text: str, limit: int = TOOL_OUTPUT_IN_TRANSCRIPT) -> str:
    """``text`` cut to ``limit`` characters, with a note saying how many more there were."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]} [... {len(text) - limit} more characters]"


def _head(text: str) -> str:
    return text[:MAX_PART_CHARS]


def _all(text: str) -> str:
    return text


CLIPPED = Cuts(text=MAX_PART_CHARS, args=MAX_ARGS_CHARS, result=_head, lines=MAX_BODY_LINES)
"""The history list: a few dozen lines, so one huge tool output cannot make it sluggish."""
WHOLE = Cuts(text=None, args=None, result=_all, lines=None)
"""The history reader: everything (arguments up to ``MAX_WHOLE_ARGS_CHARS``)."""
FOR_MODEL = Cuts(text=None, args=TOOL_OUTPUT_IN_TRANSCRIPT, result=shorten, lines=None)
"""``read_session``: every word said, tool output shortened as in the compaction transcript."""


def heading_pieces(
    message_id: int, event: Event, when: str, *, hidden: bool, user_label: str = "you"
) -> list[Piece]:
    """``#id who  when`` and, for a row a compaction took out of the model's view, a note.

    ``user_label`` names the user: "you" on the user's screen, "user" for the
    model (to which "you" would mean itself).
    """
    label = speaker(event)
    style = f"label.{label}" if f"label.{label}" in STYLE_NAMES else "label.other"
    shown = user_label if label == "you" else label
    pieces = [Piece(f"#{message_id} ", "id"), Piece(shown, style), Piece(f"  {when}", "when")]
    if hidden:
        pieces.append(Piece("  · hidden from model", "hidden"))
    return pieces


def rewind_pieces(message_id: int, rewind: RewindEvent, when: str) -> list[Piece]:
    """A rewind row: one marker line, ``#id ↶ rewound to before message #M…  when``."""
    return [
        Piece(f"#{message_id} ", "id"),
        Piece(f"↶ {rewind.describe()}", "rewind"),
        Piece(f"  {when}", "when"),
    ]


def turn_error_pieces(message_id: int, error: TurnErrorEvent, when: str) -> list[Piece]:
    """An error row: one line, ``#id ✗ the turn ended in an error: <sentence>  when``."""
    return [
        Piece(f"#{message_id} ", "id"),
        Piece(f"✗ {escape_hidden(error.describe())}", "turn_error"),
        Piece(f"  {when}", "when"),
    ]


def unreadable_pieces(
    message_id: int, error: str | None, raw_json: str | None, *, whole: bool
) -> list[Piece]:
    """A row that did not parse: what is wrong, and the start of what is stored."""
    pieces = [Piece(f"unreadable message #{message_id}: {error or 'unknown error'}", "unreadable")]
    if raw_json:
        raw = raw_json if whole else raw_json[:UNREADABLE_RAW_CHARS]
        pieces.append(Piece("\n" + raw, "raw"))
    return pieces


def body_pieces(event: Event, cuts: Cuts) -> list[Piece]:
    """What ``event`` says, part by part (one line or more each), cut as ``cuts`` says."""
    body = _compaction_body(event) if isinstance(event, CompactionEvent) else _parts(event, cuts)
    return body if cuts.lines is None else _clip_lines(body, cuts.lines)


def plain(pieces: list[Piece]) -> str:
    """The pieces' text, joined."""
    return "".join(piece.text for piece in pieces)


def _compaction_body(event: CompactionEvent) -> list[Piece]:
    kept = (
        f"kept verbatim from #{event.kept_from_id}"
        if event.kept_from_id is not None
        else "later messages kept verbatim"
    )
    rule = f"── earlier turns summarised for the model; {kept} ──\n"
    return [Piece(rule, "summary.rule"), Piece(event.summary, "summary")]


def _parts(event: SessionEvent, cuts: Cuts) -> list[Piece]:
    pieces: list[Piece] = []
    for view in part_views(event):
        if pieces:
            pieces.append(Piece("\n"))
        match view:
            case Said(file=AttachedFile() as file):
                # The row's line, as the transcript shows it, not the whole file again.
                pieces.append(Piece(escape_hidden(file.label), "attached"))
            case Said(text, thought):
                content = text if cuts.text is None else text[: cuts.text]
                if thought:
                    pieces += [Piece("thought: ", "thought.label"), Piece(content, "thought")]
                else:
                    pieces.append(Piece(content))
            case Called(name, args):
                shown = f"{escape_hidden(name)} {_args(args, cuts.args)}"
                pieces += [Piece("→ call ", "call"), Piece(shown, "call")]
            case ToolResult():
                pieces += _tool_result(view, cuts)
            case Attached():
                pieces.append(Piece(f"‹{', '.join(view.kinds) or 'empty'} part›", "attached"))
    return pieces


def _tool_result(result: ToolResult, cuts: Cuts) -> list[Piece]:
    args = _args(result.args, cuts.args) if result.args is not None else ""
    name = f"{escape_hidden(result.name)} {args}".rstrip()
    state, mark = ("failed", "✗ ") if result.failed else ("ok", "✓ ")
    detail = _as_text(result.outcome)
    detail = cuts.result("error: " + detail if result.failed else detail)
    pieces = [Piece(mark, f"{state}.mark"), Piece(name, f"{state}.name")]
    if detail:
        pieces.append(Piece("\n" + detail, f"{state}.detail"))
    return pieces


def _args(args: dict[str, Any] | None, limit: int | None) -> str:
    # Hidden characters become visible escapes (never dropped), after the
    # cut so that an escape is never cut in half.
    shown = args_text(args or {})
    if limit is None:
        # Even the reader stops somewhere: a megabyte of escapes on one
        # line froze the app for 20 s. The export has everything.
        escaped, used = escape_hidden_within(shown, MAX_WHOLE_ARGS_CHARS)
        if used == len(shown):
            return escaped
        more = len(shown) - used
        return f"{escaped}… {more:,} more characters (export the session to read them all)"
    if len(shown) <= limit:
        return escape_hidden(shown)
    return escape_hidden(shown[: limit - 1]) + "…"


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def _clip_lines(body: list[Piece], limit: int) -> list[Piece]:
    total = plain(body).count("\n") + 1
    if total <= limit:
        return body
    kept: list[Piece] = []
    breaks = 0
    for piece in body:
        lines = piece.text.split("\n")
        room = limit - 1 - breaks  # line breaks still allowed before the cut
        if len(lines) - 1 > room:
            kept.append(Piece("\n".join(lines[: room + 1]), piece.style))
            break
        kept.append(piece)
        breaks += len(lines) - 1
    kept.append(Piece(f"\n… {total - limit} more lines (space to read all)", "more"))
    return kept
