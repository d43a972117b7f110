"""``HistoryScreen``: browse, search, open, rename, delete, export and fork sessions; the trash;
the memories.

Left: the sessions (paged), the trash (ctrl+t), the memories (ctrl+y:
``memory_edits``) or, while the search box has text, the search hits.
Right: the selected session's summaries and raw history (``SessionDetail``).
The screen reports to whichever App pushed it through its dismiss result and
two bubbling messages (see ``messages``).
Every store call runs in a worker; a ``StoreError`` becomes an error
notification, never a traceback.

Typing is searching. A letter goes to the search box unless the focus is on
a list *and* the user moved in it (``CursorList.moved``): only then do the
single-letter actions (rename, delete, export, fork...) act on its row, so a
word typed after ctrl+r, or after Escape cleared a search, is searched for
and never deletes, renames, exports or forks anything. A delete asks first
(``ConfirmDialog``: starts on Cancel, ignores its first moments' keys) and
only moves the session to the trash, where Enter restores it.
"""

from __future__ import annotations

import asyncio
from typing import ClassVar

from textual import events, on, work
from textual.binding import Binding, BindingType
from textual.widgets import Input, OptionList

from koroku_tui.store import SearchHit, StoreError
from koroku_tui.ui.history.cursor import CursorList
from koroku_tui.ui.history.memory_edits import MemoryEdits
from koroku_tui.ui.history.messages import OpenSession
from koroku_tui.ui.resources import styles_dir

__all__ = ["HistoryScreen"]


class HistoryScreen(MemoryEdits):
    """Every session, searchable; dismissed with ``OpenSession`` or ``None``.

    ``session_manager`` must be initialized; ``current_session_id`` is the
    session the App shows (marked in the list). Exports go to ``export_dir``
    (default: the working directory at the time of the export). ``clock``
    gives "now" for relative dates (tests pass a fixed one). ``grace``: the
    seconds a confirmation ignores keys as it opens (default 0.6,
    ``KOROKU_APPROVAL_GRACE``).
    """

    CSS_PATH = styles_dir() / "history.tcss"
    AUTO_FOCUS = "#session-list"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close", id="history.close"),
        Binding("escape", "leave_trash", "Back", id="history.leave_trash"),
        Binding("escape", "leave_memories", "Back", id="history.leave_memories"),
        Binding("enter", "open_session", "Open", id="history.open"),
        Binding("enter", "restore", "Restore", id="history.restore"),
        Binding("enter", "open_memory", "Open source", id="history.open_memory"),
        Binding("slash", "focus_search", "Search", key_display="/", id="history.search"),
        Binding("ctrl+t", "toggle_trash", "Trash", id="history.trash"),
        Binding("ctrl+y", "toggle_memories", "Memories", id="history.memories"),
        Binding("down", "into_list", "Into the list", show=False, id="history.into_list"),
        # The key bar lists keys in their first binding's order; a key of the
        # memory pane shares its place with the session list's.
        Binding("a", "accept_memory", "Accept", id="history.accept_memory"),
        Binding("r", "rename", "Rename", id="history.rename"),
        Binding("d", "delete", "Delete", id="history.delete"),
        Binding("d", "delete_memory", "Delete", id="history.delete_memory"),
        Binding("e", "export", "Export", id="history.export"),
        Binding("e", "edit_memory", "Edit", id="history.edit_memory"),
        Binding("l", "load_older", "Older", id="history.load_older"),
        Binding("f", "fork", "Fork", id="history.fork"),
        Binding("x", "empty_trash", "Empty trash", id="history.empty_trash"),
        Binding("ctrl+n", "add_memory", "Add", id="history.add_memory"),
    ]

    ROW_ACTIONS = frozenset({"rename", "delete", "export", "fork", "load_older", "empty_trash"})
    """Actions on single letters: they fire only once the user moved in the focused list."""
    IN_TRASH = frozenset(
        {
            "restore",
            "leave_trash",
            "empty_trash",
            "load_older",
            "toggle_trash",
            "focus_search",
            "into_list",
            "toggle_memories",
        }
    )
    """What the trash offers (a session there is restored first, to be used)."""

    # -- what keys may do ------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Which keys the key bar shows, and whether they act (None: shown, dimmed, inert)."""
        memories = self.memory_check(action)
        if memories is not True:
            return memories
        if self.showing_memories:
            return True
        trash = self.showing_trash
        if action in ("restore", "leave_trash"):
            return trash
        if trash and action not in self.IN_TRASH:
            return False
        if action == "empty_trash" and not trash:
            return False
        if action in self.ROW_ACTIONS:
            return True if self.armed else None
        return True

    async def on_key(self, event: events.Key) -> None:
        """Letters go to the search box unless the user moved in the focused list.

        Keys reach the focused widget first and bubble up here before the app
        looks up the bindings. The search box takes its letters itself, so a
        printable key arriving here was sent to a list. Each key is settled
        here, in order: a command (a letter bound here, after a move) runs at
        once; any other letter goes to the search box and every list forgets
        its move, so the rest of the burst is typing too; Backspace edits the
        search as well; and a key that arrives once a dialog an earlier key
        opened is on top was typed before that dialog was drawn: it is dropped
        (``ui.key_order`` hands keys on one at a time, so that dialog gets them
        first and drops them itself).
        """
        character = event.character
        if not event.is_printable or character is None:
            await self._edit_search(event)
            return
        if self.app.screen is not self:
            event.prevent_default()
            event.stop()
            return
        search = self.search_box
        if character.isspace() and not search.value:
            return  # a lone space reads the row under the cursor (summaries, raw history)
        active = self.active_bindings.get(event.key)
        if active is not None and active.binding.action == "focus_search":
            return  # "/" only moves to the search box
        event.prevent_default()
        event.stop()
        if active is not None and active.enabled and self.armed:
            await self.app.run_action(active.binding.action, active.node)
            return
        for cursor_list in self.query(CursorList):
            cursor_list.moved = False
        search.value += character
        search.cursor_position = len(search.value)
        search.focus()

    def on_paste(self, event: events.Paste) -> None:
        """A paste on a list is searched for, as letters typed there are (it went nowhere:
        ctrl+r then a pasted phrase was lost). The search box takes it as its own paste."""
        if isinstance(self.focused, Input) or self.app.screen is not self or not event.text:
            return
        event.stop()
        for cursor_list in self.query(CursorList):
            cursor_list.moved = False
        search = self.search_box
        search.cursor_position = len(search.value)
        search.focus()
        search.post_message(events.Paste(event.text))

    async def _edit_search(self, event: events.Key) -> None:
        """Backspace (any key the search box binds to deleting) typed on a list the user did
        not move in edits the search, as the letters before it did."""
        search = self.search_box
        if self.armed or not search.value or not isinstance(self.focused, CursorList):
            return
        for binding in search._bindings.key_to_bindings.get(event.key, ()):
            if binding.action.startswith("delete_"):
                event.prevent_default()
                event.stop()
                search.cursor_position = len(search.value)
                await self.app.run_action(binding.action, search)
                search.focus()
                return

    # -- browsing and searching ----------------------------------------------

    @on(OptionList.OptionHighlighted, "#session-list, #trash-list")
    def _browse(self, event: OptionList.OptionHighlighted) -> None:
        shown_list = self.browser.shown
        if event.option_list is not shown_list:
            return  # the other list, (re)loading out of sight
        info = shown_list.session_at(event.option_index)
        shown = self.detail.session
        if info is not None and shown is not None and info.id == shown.id:
            return  # already shown (or loading), perhaps scrolled to a search hit: keep that
        self.detail.show(info, current=self._is_current(info), delay=self.BROWSE_DEBOUNCE)

    @on(OptionList.OptionSelected, "#session-list")
    def _double_clicked(self) -> None:
        self.action_open_session()

    @on(OptionList.OptionSelected, "#trash-list")
    def _double_clicked_in_trash(self) -> None:
        self.action_restore()

    @on(Input.Changed, "#history-search")
    def _query_changed(self, event: Input.Changed) -> None:
        if event.value.strip() and self.browser.in_trash:
            self.browser.show_trash(False)  # the search is over the sessions, never the trash
        if event.value.strip() and self.browser.in_memories:
            self.browser.show_memories(False)  # nor the memories
        self.browser.search(event.value)
        self.refresh_bindings()

    @on(Input.Submitted, "#history-search")
    def _query_submitted(self) -> None:
        self.action_into_list()

    @on(OptionList.OptionHighlighted, "#search-results")
    def _hit_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        # The pane follows the cursor: what Enter will show is what is shown.
        hit = self.browser.results.hit_at(event.option_index)
        if hit is not None:
            self._show_hit(hit, enter=False)

    @on(OptionList.OptionSelected, "#search-results")
    def _hit_selected(self, event: OptionList.OptionSelected) -> None:
        hit = self.browser.results.hit_at(event.option_index)
        if hit is not None:
            self._show_hit(hit, enter=True)

    @work(exclusive=True, group="history-hit", exit_on_error=False)
    async def _show_hit(self, hit: SearchHit, *, enter: bool) -> None:
        if not enter:
            await asyncio.sleep(self.BROWSE_DEBOUNCE)  # cancelled by the next cursor move
        try:
            info = await self._manager.get_session(hit.session_id)
        except StoreError as error:
            self._report(error)
            return
        self.sessions.highlight_session(info.id)
        self.detail.show(info, current=self._is_current(info), focus_message_id=hit.message_id)
        if enter:
            self.detail.history.focus()

    # -- actions -------------------------------------------------------------

    def action_close(self) -> None:
        """Clear the search if there is one, else leave the screen."""
        search = self.search_box
        if search.value:
            search.value = ""
            self.browser.shown.focus()
        else:
            self.dismiss(None)

    def action_leave_trash(self) -> None:
        """Back from the trash to the sessions."""
        self.action_toggle_trash()

    def action_into_list(self) -> None:
        """From the search box to the hits (or the list shown), the cursor where it was."""
        browser = self.browser
        if browser.searching:
            browser.results.focus()
        else:
            (browser.memories if browser.in_memories else browser.shown).focus()

    def action_toggle_trash(self) -> None:
        """Show the trash, or go back from it to the sessions."""
        browser = self.browser
        if self.search_box.value:
            self.search_box.value = ""
            browser.end_search()
        browser.show_trash(not browser.in_trash)
        shown = browser.shown
        shown.focus()
        info = shown.highlighted_session
        self.detail.show(info, current=self._is_current(info))
        self.refresh_bindings()

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
