"""The transcript row of a history search's call: the query, the hit count, the hits.

Every tool's row opens in place on its answer (``tool_row.ToolRow``). The
row of a tool whose spec says ``RowStyle.SEARCH_HITS`` (``search_history``)
says more when closed: what it found is what the answer that follows stands
on, so the row says how many past messages matched (read from the answer's
headline, ``recall.matches_in``), and opened it shows the hits with the
matches highlighted.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType

from koroku_tui.agent.tools.spec import RowStyle, ToolSpec
from koroku_tui.text.recall import MARK_END, MARK_START, matches_in
from koroku_tui.text.safety import escape_hidden
from koroku_tui.ui.main.call_state import CallState
from koroku_tui.ui.main.format import args_short, tool_label
from koroku_tui.ui.main.tool_row import ToolRow
from koroku_tui.ui.safe_text import literal, sanitize

__all__ = [
    "MATCH_STYLE",
    "SearchRow",
    "SearchState",
    "marked_hits",
    "new_call_state",
    "new_tool_row",
]

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


class SearchState(CallState):
    """A history search's call: the line says the query and the matches, opened the hits."""

    @property
    def matches(self) -> int | None:
        """How many past messages matched, as the answer's headline says (``None``: unknown)."""
        if self.answer is None or self.failed:
            return None
        return matches_in(self.answer)

    def _summary(self) -> Text:
        text = literal(_quoted_query(self.args))
        matches = self.matches
        if matches is not None:
            text.append(literal(f" · {_count(matches)}", style="bold"))
        return text

    def _summary_plain(self) -> str:
        return self._summary().plain

    def _body(self, answer: str) -> Text:
        return marked_hits(answer)


class SearchRow(SearchState, ToolRow):
    """``✓ search_history "backup script" · 12 matches``; opens on the hits."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter,space", "open_or_more", "Hits", id="transcript.search_hits"),
        # Only while open (``check_action``): closed, Escape still cancels the turn.
        Binding("escape", "close", "Close", show=False, id="transcript.search_close"),
    ]

    def __init__(self, *args: Any, **kwargs: Any) -> None:  # as ToolRow's
        super().__init__(*args, **kwargs)
        self.add_class("search-row")


def new_tool_row(spec: ToolSpec, args: dict[str, Any], call_id: str | None = None) -> ToolRow:
    """The row for a call of the tool ``spec`` describes, drawn as its ``row`` style says."""
    row = SearchRow if spec.row is RowStyle.SEARCH_HITS else ToolRow
    return row(spec.name, args, call_id, label=tool_label(spec))


def new_call_state(spec: ToolSpec, args: dict[str, Any], call_id: str | None = None) -> CallState:
    """A call of the tool ``spec`` describes, as an entry of a step's ``CallList``."""
    state = SearchState if spec.row is RowStyle.SEARCH_HITS else CallState
    return state(spec.name, args, call_id, label=tool_label(spec))
