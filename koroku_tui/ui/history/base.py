"""``HistoryPanes``: what the history screen is made of, and what every part of it asks.

The screen (``screen.HistoryScreen``) is split by job: this base holds its
state, its widgets and the answers its parts share (which session an action
applies to, whether letters act on a row); ``edits.HistoryEdits`` renames,
deletes, exports, forks and restores; ``screen`` handles keys, browsing and
searching.
"""

from __future__ import annotations

import os
from pathlib import Path

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Input

from koroku_tui.store import SessionInfo, SessionManager
from koroku_tui.ui.history.browser import SessionBrowser
from koroku_tui.ui.history.cursor import CursorList
from koroku_tui.ui.history.dates import Clock, local_now
from koroku_tui.ui.history.detail import SessionDetail
from koroku_tui.ui.history.lists import SessionList
from koroku_tui.ui.history.messages import OpenSession
from koroku_tui.ui.key_bar import KeyBar
from koroku_tui.ui.own_keys import InOrderInput
from koroku_tui.ui.safe_text import sanitize

__all__ = ["HistoryPanes"]


class HistoryPanes(Screen[OpenSession | None]):
    """The search box, the left pane (sessions, trash, hits), the detail pane and the keys."""

    BROWSE_DEBOUNCE = 0.08
    """Cursor moves closer together than this read only the session the cursor stops on."""

    def __init__(
        self,
        session_manager: SessionManager,
        current_session_id: int | None,
        *,
        export_dir: str | os.PathLike[str] | None = None,
        clock: Clock = local_now,
        grace: float | None = None,
    ) -> None:
        super().__init__()
        self._manager = session_manager
        self._current_id = current_session_id
        self._export_dir = Path(export_dir) if export_dir is not None else None
        self._clock = clock
        self._grace = grace

    def compose(self) -> ComposeResult:
        yield InOrderInput(
            placeholder="Type to search all sessions and summaries (↓ goes to the list)…",
            id="history-search",
            select_on_focus=False,  # a letter typed on a list lands after the query, not over it
        )
        with Horizontal(id="history-body"):
            yield SessionBrowser(self._manager, self._clock, self._current_id, id="history-left")
            yield SessionDetail(self._manager, self._clock, id="session-detail")
        yield KeyBar()

    # -- widgets -------------------------------------------------------------

    @property
    def browser(self) -> SessionBrowser:
        """The left-hand pane: sessions, the trash or search hits."""
        return self.query_one(SessionBrowser)

    @property
    def sessions(self) -> SessionList:
        """The paged session list."""
        return self.browser.sessions

    @property
    def search_box(self) -> Input:
        """Where typing goes."""
        return self.query_one("#history-search", Input)

    @property
    def detail(self) -> SessionDetail:
        """The right-hand pane."""
        return self.query_one(SessionDetail)

    @property
    def selected_session(self) -> SessionInfo | None:
        """The session the actions apply to: under the list cursor, else the one shown."""
        shown = self.browser.shown
        if shown.has_focus and shown.highlighted_session is not None:
            return shown.highlighted_session
        return self.detail.session or shown.highlighted_session

    @property
    def showing_trash(self) -> bool:
        """True while the left pane lists the trash (not the sessions, not hits)."""
        return self.browser.in_trash and not self.browser.searching

    @property
    def armed(self) -> bool:
        """True when the focus is on a list the user moved in: letters then act on its row."""
        focused = self.focused
        return isinstance(focused, CursorList) and focused.moved

    def _is_current(self, info: SessionInfo | None) -> bool:
        return info is not None and info.id == self._current_id

    def _report(self, error: Exception) -> None:
        self.notify(sanitize(str(error)), severity="error", markup=False)

    def _key_for(self, action: str) -> str:
        """The key an action of this screen has now (keymap.toml may have moved it)."""
        for key, active in self.active_bindings.items():
            if active.binding.action == action:
                return key
        return next(b.key for b in self.BINDINGS if isinstance(b, Binding) and b.action == action)
