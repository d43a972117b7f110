"""The transcript row of a ``search_history`` call: the query, the hit count, the hits.

Every other tool keeps its one-line ``ToolRow``. A search is different: what
it found is what the answer that follows stands on, so the row says how many
past messages matched (read from the answer's headline, ``recall.matches_in``)
and opens in place (Enter, space or a click) on the answer itself, matches
highlighted. Escape closes it and gives the prompt its focus back.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.message import Message

from koroku_tui.recall import MARK_END, MARK_START, matches_in
from koroku_tui.text_safety import escape_hidden
from koroku_tui.ui.main.blocks import ToolRow
from koroku_tui.ui.main.format import args_short, status_mark
from koroku_tui.ui.safe_text import literal, sanitize

__all__ = ["MATCH_STYLE", "SEARCH_TOOL", "SearchRow", "marked_hits", "new_tool_row"]

SEARCH_TOOL = "search_history"
"""The tool whose rows are ``SearchRow``s."""

MATCH_STYLE = "bold black on yellow"
"""A matched word inside a hit: the one thing the eye looks for in a snippet."""

_QUERY_WIDTH = 60
_MARKED = re.compile(re.escape(MARK_START) + "(.*?)" + re.escape(MARK_END), re.DOTALL)


def marked_hits(answer: str) -> Text:
    """The tool's answer, each ``«match»`` highlighted, marks dropped, never markup."""
    shown = Text()
    start = 0
    for found in _MARKED.finditer(answer):
        shown.append(sanitize(answer[start : found.start()]))
        shown.append(sanitize(found.group(1)), style=MATCH_STYLE)
        start = found.end()
    shown.append(sanitize(answer[start:]))
    return shown


def _quoted_query(args: dict[str, Any]) -> str:
    query = args.get("query")
    if not isinstance(query, str):
        return args_short(args, _QUERY_WIDTH)  # odd arguments still show, escaped
    flat = " ".join(escape_hidden(query).split())
    if len(flat) > _QUERY_WIDTH:
        flat = flat[: _QUERY_WIDTH - 1] + "…"
    return f'"{flat}"'


def _count(matches: int) -> str:
    if matches == 0:
        return "no matches"
    return f"{matches} match" if matches == 1 else f"{matches} matches"


class SearchRow(ToolRow, can_focus=True):
    """``✓ search_history "backup script" · 12 matches``; opens on the hits."""

    class Closed(Message):
        """Escape closed the hits: the screen gives the prompt its focus back."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter,space", "open_or_close", "Hits", id="transcript.search_hits"),
        # Only while open (``check_action``): closed, Escape still cancels the turn.
        Binding("escape", "close", "Close", show=False, id="transcript.search_close"),
    ]

    def __init__(self, name: str, args: dict[str, Any], call_id: str | None = None) -> None:
        self.answer: str | None = None
        """The tool's answer (or its error), once it finished."""
        self.opened = False
        super().__init__(name, args, call_id)
        self.add_class("search-row")

    @property
    def matches(self) -> int | None:
        """How many past messages matched, as the answer's headline says (``None``: unknown)."""
        if self.answer is None or self.failed:
            return None
        return matches_in(self.answer)

    def _render_row(self) -> None:
        name = escape_hidden(self.tool_name)
        text = literal(f"{status_mark(self.done, self.failed)} {name} ")
        text.append(literal(_quoted_query(self.args)))
        matches = self.matches
        if matches is not None:
            text.append(literal(f" · {_count(matches)}", style="bold"))
        if self.opened and self.answer:
            text.append("\n")
            text.append(marked_hits(self.answer))
        self.update(text)

    def finish(self, failed: bool, answer: str | None = None) -> None:
        """The check or cross, and the answer the row opens on."""
        self.answer = answer
        super().finish(failed, answer)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "close":
            return self.opened
        if action == "open_or_close":
            return bool(self.answer)
        return True

    def action_open_or_close(self) -> None:
        self.opened = not self.opened
        self.set_class(self.opened, "-opened")
        self._render_row()

    def action_close(self) -> None:
        if self.opened:
            self.action_open_or_close()
        self.post_message(self.Closed())

    def on_click(self) -> None:
        if self.answer:
            self.action_open_or_close()


def new_tool_row(name: str, args: dict[str, Any], call_id: str | None = None) -> ToolRow:
    """The row for a call of ``name``: ``SearchRow`` for the history search, else ``ToolRow``."""
    if name == SEARCH_TOOL:
        return SearchRow(name, args, call_id)
    return ToolRow(name, args, call_id)
