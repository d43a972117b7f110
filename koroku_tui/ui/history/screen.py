"""``HistoryScreen``: browse, search, open, rename, delete, export and fork sessions.

Left: the sessions (paged) or, while the search box has text, the search
hits. Right: the selected session's summaries and raw history
(``SessionDetail``). The screen reports to whichever App pushed it through its
dismiss result and two bubbling messages (see ``messages``). Every store call
runs in a worker; a ``StoreError`` becomes an error notification, never a
traceback.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Input, OptionList

from koroku_tui.store import SearchHit, SessionInfo, SessionManager, StoreError
from koroku_tui.ui.history.browser import SessionBrowser
from koroku_tui.ui.history.dates import Clock, local_now
from koroku_tui.ui.history.detail import SessionDetail
from koroku_tui.ui.history.dialogs import ConfirmDialog, RenameDialog
from koroku_tui.ui.history.exporting import export_session
from koroku_tui.ui.history.forking import ForkPoint, fork_point
from koroku_tui.ui.history.lists import SessionList
from koroku_tui.ui.history.messages import OpenSession, SessionDeleted, SessionRenamed
from koroku_tui.ui.history.wording import clip, delete_question
from koroku_tui.ui.key_bar import KeyBar
from koroku_tui.ui.resources import styles_dir
from koroku_tui.ui.safe_text import sanitize

__all__ = ["HistoryScreen"]


class HistoryScreen(Screen[OpenSession | None]):
    """Every session, searchable; dismissed with ``OpenSession`` or ``None``.

    ``session_manager`` must be initialized; ``current_session_id`` is the
    session the App shows (marked in the list). Exports go to ``export_dir``
    (default: the working directory at the time of the export). ``clock``
    gives "now" for relative dates (tests pass a fixed one).
    """

    CSS_PATH = styles_dir() / "history.tcss"
    AUTO_FOCUS = "#session-list"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close", id="history.close"),
        Binding("enter", "open_session", "Open", id="history.open"),
        Binding("slash", "focus_search", "Search", key_display="/", id="history.search"),
        Binding("r", "rename", "Rename", id="history.rename"),
        Binding("d", "delete", "Delete", id="history.delete"),
        Binding("e", "export", "Export", id="history.export"),
        Binding("l", "load_older", "Older", id="history.load_older"),
        Binding("f", "fork", "Fork", id="history.fork"),
    ]

    BROWSE_DEBOUNCE = 0.08
    """Cursor moves closer together than this read only the session the cursor stops on."""

    def __init__(
        self,
        session_manager: SessionManager,
        current_session_id: int | None,
        *,
        export_dir: str | os.PathLike[str] | None = None,
        clock: Clock = local_now,
    ) -> None:
        super().__init__()
        self._manager = session_manager
        self._current_id = current_session_id
        self._export_dir = Path(export_dir) if export_dir is not None else None
        self._clock = clock

    def compose(self) -> ComposeResult:
        yield Input(placeholder="/ Search all sessions and summaries…", id="history-search")
        with Horizontal(id="history-body"):
            yield SessionBrowser(self._manager, self._clock, self._current_id, id="history-left")
            yield SessionDetail(self._manager, self._clock, id="session-detail")
        yield KeyBar()

    # -- widgets -------------------------------------------------------------

    @property
    def browser(self) -> SessionBrowser:
        """The left-hand pane: sessions or search hits."""
        return self.query_one(SessionBrowser)

    @property
    def sessions(self) -> SessionList:
        """The paged session list."""
        return self.browser.sessions

    @property
    def detail(self) -> SessionDetail:
        """The right-hand pane."""
        return self.query_one(SessionDetail)

    @property
    def selected_session(self) -> SessionInfo | None:
        """The session the actions apply to: under the list cursor, else the one shown."""
        if self.sessions.has_focus and self.sessions.highlighted_session is not None:
            return self.sessions.highlighted_session
        return self.detail.session or self.sessions.highlighted_session

    def _is_current(self, info: SessionInfo | None) -> bool:
        return info is not None and info.id == self._current_id

    def _report(self, error: Exception) -> None:
        self.notify(sanitize(str(error)), severity="error", markup=False)

    # -- browsing and searching ----------------------------------------------

    @on(OptionList.OptionHighlighted, "#session-list")
    def _browse(self, event: OptionList.OptionHighlighted) -> None:
        info = self.sessions.session_at(event.option_index)
        shown = self.detail.session
        if info is not None and shown is not None and info.id == shown.id:
            return  # already shown (or loading), perhaps scrolled to a search hit: keep that
        self.detail.show(info, current=self._is_current(info), delay=self.BROWSE_DEBOUNCE)

    @on(OptionList.OptionSelected, "#session-list")
    def _double_clicked(self) -> None:
        self.action_open_session()

    @on(Input.Changed, "#history-search")
    def _query_changed(self, event: Input.Changed) -> None:
        self.browser.search(event.value)

    @on(Input.Submitted, "#history-search")
    def _query_submitted(self) -> None:
        browser = self.browser
        (browser.results if browser.searching else browser.sessions).focus()

    @on(OptionList.OptionSelected, "#search-results")
    def _hit_selected(self, event: OptionList.OptionSelected) -> None:
        hit = self.browser.results.hit_at(event.option_index)
        if hit is not None:
            self._show_hit(hit)

    @work(exclusive=True, group="history-hit", exit_on_error=False)
    async def _show_hit(self, hit: SearchHit) -> None:
        try:
            info = await self._manager.get_session(hit.session_id)
        except StoreError as error:
            self._report(error)
            return
        self.sessions.highlight_session(info.id)
        self.detail.show(info, current=self._is_current(info), focus_message_id=hit.message_id)
        self.detail.history.focus()

    # -- actions -------------------------------------------------------------

    def action_close(self) -> None:
        """Clear the search if there is one, else leave the screen."""
        search = self.query_one("#history-search", Input)
        if search.value:
            search.value = ""
            self.sessions.focus()
        else:
            self.dismiss(None)

    def action_open_session(self) -> None:
        """Leave the screen, asking the App to open the selected session.

        From the raw history (where Enter on a search hit puts the cursor),
        the session opens at the row under the cursor rather than at its end.
        """
        info = self.selected_session
        if info is None:
            return
        view = self.detail.history
        row = view.message_at(view.highlighted) if view.has_focus else None
        shown = self.detail.session
        at = row.id if row is not None and shown is not None and shown.id == info.id else None
        self.dismiss(OpenSession(info.id, message_id=at))

    def action_focus_search(self) -> None:
        """Move to the search box."""
        self.query_one("#history-search", Input).focus()

    def action_load_older(self) -> None:
        """Load the page of history before the oldest row shown."""
        self.detail.load_older()

    def action_rename(self) -> None:
        """Ask for a new title for the selected session."""
        info = self.selected_session
        if info is None:
            return

        def renamed(title: str | None) -> None:
            if title is not None:
                self._rename(info.id, title)

        self.app.push_screen(RenameDialog(info.title or ""), renamed)

    @work(group="history-edit", exit_on_error=False)
    async def _rename(self, session_id: int, title: str) -> None:
        try:
            info = await self._manager.rename_session(session_id, title or None)
        except StoreError as error:
            self._report(error)
            return
        self.browser.update_session(info)
        if self.detail.session is not None and self.detail.session.id == info.id:
            self.detail.update_heading(info, current=self._is_current(info))
        self.post_message(SessionRenamed(info))
        self._refresh_search()

    def action_delete(self) -> None:
        """Delete the selected session after a confirmation."""
        info = self.selected_session
        if info is None:
            return
        question = delete_question(info, current=self._is_current(info))

        def answered(confirmed: bool | None) -> None:
            if confirmed:
                self._delete(info)

        self.app.push_screen(ConfirmDialog(question), answered)

    @work(group="history-edit", exit_on_error=False)
    async def _delete(self, info: SessionInfo) -> None:
        try:
            before = self._manager.session_id
            await self._manager.delete_session(info.id)
            after = self._manager.session_id
        except StoreError as error:
            self._report(error)
            return
        replacement = after if after != before else None
        was_current = self._is_current(info) or replacement is not None
        self.post_message(
            SessionDeleted(info.id, was_current=was_current, replacement_id=replacement)
        )
        self.notify(f"Deleted “{clip(info.display_title, 60)}”.", markup=False)
        browser = self.browser
        if replacement is not None:
            # The fresh session is the newest: reload so it appears on top.
            self._current_id = browser.current_id = replacement
            browser.reload()
        else:
            browser.remove_session(info.id)
            following = self.sessions.highlighted_session
            self.detail.show(following, current=self._is_current(following))
        self._refresh_search()

    def _refresh_search(self) -> None:
        # Hits carry session titles: run the search again after an edit.
        if self.browser.searching:
            self.browser.search(self.query_one("#history-search", Input).value)

    def action_export(self) -> None:
        """Write the selected session to ``<title>-<id>.md`` in the export folder."""
        info = self.selected_session
        if info is not None:
            self._export(info.id)

    @work(group="history-edit", exit_on_error=False)
    async def _export(self, session_id: int) -> None:
        folder = self._export_dir if self._export_dir is not None else Path.cwd()
        try:
            path = await export_session(self._manager, session_id, folder)
        except StoreError as error:
            self._report(error)
            return
        except OSError as error:
            reason = error.strerror or str(error)
            self.notify(
                f"Could not export to {folder}: {reason}. Check the folder exists and is writable.",
                severity="error",
                markup=False,
            )
            return
        # The full path, and why there: the folder is not one the user chose.
        where = " (the folder Koroku was started in)" if self._export_dir is None else ""
        self.notify(f"Exported to {path.absolute()}{where}", markup=False)

    def action_fork(self) -> None:
        """Fork the shown session at the raw history's highlighted row, and open the fork."""
        view = self.detail.history
        info, moment = self.detail.session, view.history_moment
        message = view.message_at(view.highlighted) if view.has_focus else None
        if info is None or moment is None or message is None:
            self.notify("Move to a message of the raw history (tab), then press f to fork there.")
            return
        point = fork_point(message, view.messages, moment)
        if isinstance(point, str):
            self.notify(point, markup=False)
            return
        self._fork(info.id, point)

    @work(group="history-edit", exit_on_error=False)
    async def _fork(self, session_id: int, point: ForkPoint) -> None:
        try:
            info = await self._manager.fork(session_id, point.before)
        except (StoreError, ValueError) as error:
            self._report(error)
            return
        self.notify(f"Forked {point.what} into session #{info.id}, now open.", markup=False)
        self.dismiss(OpenSession(info.id, prompt=point.prompt))
