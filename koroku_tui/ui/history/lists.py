"""The history screen's Line-API lists: sessions (paged), the trash, search hits and summaries.

``OptionList`` renders only the visible lines, so thousands of sessions cost
one widget. The session and summary lists leave ``enter`` unbound: it falls
through to the screen's remappable ``history.open`` binding (in the trash,
``history.restore``), so the footer shows one "Open" whatever list has focus.
Every list is a ``CursorList``: a ``▶`` on the cursor's row, and ``moved``.
"""

from __future__ import annotations

from datetime import datetime
from typing import ClassVar

from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets.option_list import Option

from koroku_tui.store import SearchHit, SessionInfo, SummaryRecord
from koroku_tui.ui.history.cursor import CursorList
from koroku_tui.ui.history.wording import hit_line, session_line, summary_line, trash_line

__all__ = ["BrowseList", "SearchResults", "SessionList", "SummaryList", "TrashList"]

NAVIGATION: list[BindingType] = [
    Binding("down", "cursor_down", "Down", show=False),
    Binding("up", "cursor_up", "Up", show=False),
    Binding("home", "first", "First", show=False),
    Binding("end", "last", "Last", show=False),
    Binding("pagedown", "page_down", "Page down", show=False),
    Binding("pageup", "page_up", "Page up", show=False),
]


class BrowseList(CursorList, inherit_bindings=False):
    """An OptionList without its own ``enter`` binding; ``space`` (or a click) selects."""

    BINDINGS: ClassVar[list[BindingType]] = [
        *NAVIGATION,
        Binding("space", "select", "Read", id="history.read"),
    ]


class SessionList(BrowseList, inherit_bindings=False):
    """Sessions, newest activity first, appended a page at a time as the user nears the end."""

    BINDINGS: ClassVar[list[BindingType]] = NAVIGATION
    NEAR_END = 5
    """How many rows before the last loaded one the next page is requested."""

    class NeedMore(Message):
        """The user reached the end of the loaded sessions (by keys or by scrolling)."""

        def __init__(self, sessions: SessionList) -> None:
            super().__init__()
            self.sessions = sessions

        @property
        def control(self) -> SessionList:
            """The list that wants its next page (what ``@on`` selectors match)."""
            return self.sessions

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.sessions: dict[int, SessionInfo] = {}
        self.exhausted = False
        """True once a short page showed there is nothing more to load."""
        self.rows_read = 0
        """Rows consumed from ``list_sessions`` so far: the offset of the next page."""

    def add_sessions(
        self, page: list[SessionInfo], *, now: datetime, current_id: int | None, exhausted: bool
    ) -> None:
        """Append a page; sessions already listed are skipped.

        Offset paging can return a session twice when one moves to the top
        (new activity elsewhere) between two pages; the list keeps the first.
        """
        self.rows_read += len(page)
        fresh = [info for info in page if info.id not in self.sessions]
        for info in fresh:
            self.sessions[info.id] = info
        self.exhausted = exhausted
        self.add_options(
            Option(self._line(info, now, current=info.id == current_id), id=_key(info.id))
            for info in fresh
        )

    def _line(self, info: SessionInfo, now: datetime, *, current: bool) -> Text:
        return session_line(info, now, current=current)

    def reset(self) -> None:
        """Forget every session (before reloading from the first page)."""
        self.sessions.clear()
        self.exhausted = False
        self.rows_read = 0
        self.clear_options()

    def session_at(self, index: int | None) -> SessionInfo | None:
        """The session shown at ``index``, if any."""
        if index is None or not 0 <= index < self.option_count:
            return None
        option_id = self.get_option_at_index(index).id
        return self.sessions.get(int(option_id.removeprefix("session-"))) if option_id else None

    @property
    def highlighted_session(self) -> SessionInfo | None:
        """The session under the cursor."""
        return self.session_at(self.highlighted)

    def update_session(self, info: SessionInfo, *, now: datetime, current_id: int | None) -> None:
        """Redraw one session (after a rename) in place."""
        if info.id in self.sessions:
            self.sessions[info.id] = info
            line = self._line(info, now, current=info.id == current_id)
            self.replace_option_prompt(_key(info.id), line)

    def remove_session(self, session_id: int) -> None:
        """Drop a session from the list (moved to or out of the trash)."""
        if self.sessions.pop(session_id, None) is not None:
            self.rows_read -= 1  # the rows after it moved up by one in the store's order
            self.remove_option(_key(session_id))

    def highlight_session(self, session_id: int) -> bool:
        """Move the cursor to ``session_id``; False when it is not loaded."""
        if session_id not in self.sessions:
            return False
        self.highlighted = self.get_option_index(_key(session_id))
        return True

    def watch_highlighted(self, highlighted: int | None) -> None:
        super().watch_highlighted(highlighted)
        if highlighted is not None and highlighted >= self.option_count - self.NEAR_END:
            self._want_more()

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if new_value > old_value and new_value >= self.max_scroll_y - 1:
            self._want_more()

    def _want_more(self) -> None:
        if not self.exhausted and self.option_count:
            self.post_message(self.NeedMore(self))

    async def _on_click(self, event: events.Click) -> None:
        # OptionList selects on every click; here a click only shows the
        # session and a double click opens it, so browsing never switches.
        event.prevent_default()
        index = event.style.meta.get("option")
        if isinstance(index, int):
            self.mark_moved()
            self.highlighted = index
            if event.chain >= 2:
                self.action_select()


class TrashList(SessionList, inherit_bindings=False):
    """Sessions in the trash, the latest deleted first; ``enter`` restores one (the screen's)."""

    BINDINGS: ClassVar[list[BindingType]] = NAVIGATION

    def _line(self, info: SessionInfo, now: datetime, *, current: bool) -> Text:
        return trash_line(info, now)


class SearchResults(CursorList):
    """Hits of a search across all sessions; ``enter`` shows the hit in its session."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "select", "Show hit", id="history.show_hit"),
    ]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.hits: list[SearchHit] = []

    def show_hits(self, hits: list[SearchHit], now: datetime) -> None:
        """Replace the results."""
        self.hits = hits
        self.set_options(hit_line(hit, now) for hit in hits)
        if hits:
            self.highlighted = 0

    def hit_at(self, index: int | None) -> SearchHit | None:
        """The hit shown at ``index``, if any."""
        return self.hits[index] if index is not None and 0 <= index < len(self.hits) else None


class SummaryList(BrowseList):
    """A session's compaction summaries, oldest first; ``space`` reads one whole."""

    MARK_UNFOCUSED = False

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.summaries: list[SummaryRecord] = []

    def show_summaries(self, summaries: list[SummaryRecord], now: datetime) -> None:
        """Replace the summaries shown."""
        self.summaries = summaries
        self.set_options(summary_line(summary, now) for summary in summaries)
        if summaries:
            self.highlighted = 0  # so space reads one as soon as the list has focus

    def summary_at(self, index: int | None) -> SummaryRecord | None:
        """The summary shown at ``index``, if any."""
        if index is None or not 0 <= index < len(self.summaries):
            return None
        return self.summaries[index]


def _key(session_id: int) -> str:
    return f"session-{session_id}"
