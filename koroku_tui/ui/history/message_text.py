"""One stored row of the raw history as literal ``Text``: text, thoughts, tools, compactions.

The words come from ``koroku_tui.events.reading``, the rendering the
``read_session`` tool gives the model too; this module only styles them.
The history view shows a clipped version (a few dozen lines, so one huge tool
output cannot make the list sluggish); the reader modal shows ``whole=True``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from rich.text import Text

from koroku_tui.events.reading import (
    CLIPPED,
    WHOLE,
    Piece,
    body_pieces,
    heading_pieces,
    rewind_pieces,
    turn_error_pieces,
    unreadable_pieces,
)
from koroku_tui.events.turns import context_floor
from koroku_tui.store import StoredMessage, SummaryRecord
from koroku_tui.ui.history.dates import full_when
from koroku_tui.ui.safe_text import literal

__all__ = ["HistoryMoment", "message_text"]

# Each name's look. A piece inside a styled group carries the group's style
# too (e.g. a failed result's detail is bold red, and dim): written out here.
_STYLES = {
    "id": "dim",
    "when": "dim",
    "hidden": "dim italic",
    "abandoned": "italic yellow",
    "label.compaction": "bold magenta",
    "label.model": "bold cyan",
    "label.you": "bold green",
    "label.tool results": "bold yellow",
    "label.other": "bold",
    "rewind": "bold yellow",
    "turn_error": "bold red",
    "summary.rule": "magenta",
    "summary": "magenta",
    "thought.label": "italic dim bold",
    "thought": "italic dim bold",
    "call": "cyan",
    "ok.mark": "bold green",
    "ok.name": "bold green",
    "ok.detail": "bold green dim",
    "failed.mark": "bold red",
    "failed.name": "bold red",
    "failed.detail": "bold red dim",
    "attached": "dim italic",
    "more": "dim italic",
}
# An unreadable row is bold red as a whole (the Text's own style, which
# Textual draws in a different red from a span's), its raw text dim too.
_UNREADABLE_STYLES = {"raw": "dim"}


@dataclass(frozen=True, slots=True)
class HistoryMoment:
    """When the history is read: the clock, the latest compaction and the rewinds' spans.

    Together they say which rows the model no longer sees, and why.
    """

    now: datetime
    latest_compaction: SummaryRecord | None = None
    abandoned: tuple[tuple[int, int], ...] = ()
    """Inclusive row-id spans a rewind took out of the model's line (``abandoned_spans``)."""

    def abandoned_span(self, message: StoredMessage) -> tuple[int, int] | None:
        """The abandoned span ``message`` lies in; ``None`` on the session's current line."""
        return next((s for s in self.abandoned if s[0] <= message.id <= s[1]), None)

    def abandoned_by_rewind(self, message: StoredMessage) -> bool:
        """True for a row of a branch a rewind abandoned (kept, no longer sent)."""
        return self.abandoned_span(message) is not None

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
    """The heading line (id, who, when) and the body of ``message``; a rewind is one line."""
    event = message.event
    if message.rewind is not None:
        when = full_when(message.created_at, moment.now)
        return _styled(rewind_pieces(message.id, message.rewind, when), base="dim")
    if message.turn_error is not None:
        when = full_when(message.created_at, moment.now)
        return _styled(turn_error_pieces(message.id, message.turn_error, when))
    if event is None:
        pieces = unreadable_pieces(message.id, message.error, message.raw_json, whole=whole)
        return _styled(pieces, base="bold red", styles=_UNREADABLE_STYLES)
    when = full_when(message.created_at, moment.now)
    hidden = moment.hidden_from_model(message)
    abandoned = moment.abandoned_by_rewind(message)
    pieces = heading_pieces(message.id, event, when, hidden=hidden and not abandoned)
    if abandoned:
        pieces.append(Piece("  · abandoned by rewind", "abandoned"))
    body = body_pieces(event, WHOLE if whole else CLIPPED)
    if any(piece.text for piece in body):
        pieces += [Piece("\n"), *body]
    return _styled(pieces, base="dim")


def _styled(pieces: list[Piece], base: str = "", styles: dict[str, str] = _STYLES) -> Text:
    # Every piece is untrusted or built from untrusted text: ``literal``
    # sanitizes it and never parses markup.
    text = Text(style=base)
    for piece in pieces:
        if piece.text:
            text.append_text(literal(piece.text, styles.get(piece.style)))
    return text
