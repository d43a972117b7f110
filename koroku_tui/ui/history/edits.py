"""``HistoryEdits``: the history screen's changes: rename, delete, restore, export, fork.

Deleting moves a session to the trash, after a confirmation that starts on
Cancel and ignores its first moments' keys; Enter in the trash (ctrl+t)
restores it, and only emptying the trash (``x`` there, confirmed the same
way) removes anything. The action a letter starts applies to the session
under the cursor: in the session list or the trash, that row's; in the
search hits, the hit's session; elsewhere, the session shown.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from textual import work

from koroku_tui.store import SessionInfo, StoreError
from koroku_tui.ui.history.base import HistoryPanes
from koroku_tui.ui.history.dialogs import ConfirmDialog, RenameDialog
from koroku_tui.ui.history.exporting import export_session
from koroku_tui.ui.history.forking import ForkPoint, fork_point
from koroku_tui.ui.history.messages import OpenSession, SessionDeleted, SessionRenamed
from koroku_tui.ui.history.wording import clip, delete_question, empty_trash_question

__all__ = ["HistoryEdits"]

_EVERYTHING = 1_000_000
"""Enough to read the whole trash at once (its rows only, never their messages)."""


class HistoryEdits(HistoryPanes):
    """Rename, delete (to the trash), restore, empty the trash, export, fork."""

    def _with_target(self, then: Callable[[SessionInfo], None]) -> None:
        """Call ``then`` with the session an action applies to (read first for a hit's)."""
        browser = self.browser
        results = browser.results
        if browser.searching and results.has_focus:
            hit = results.hit_at(results.highlighted)
            if hit is not None:
                self._read_then(hit.session_id, then)
            return
        info = self.selected_session
        if info is not None:
            then(info)

    @work(exclusive=True, group="history-target", exit_on_error=False)
    async def _read_then(self, session_id: int, then: Callable[[SessionInfo], None]) -> None:
        try:
            info = await self._manager.get_session(session_id)
        except StoreError as error:
            self._report(error)
            return
        then(info)

    def _refresh_search(self) -> None:
        # Hits carry session titles, and none of the trash: search again after an edit.
        if self.browser.searching:
            self.browser.search(self.search_box.value)

    # -- rename ----------------------------------------------------------------

    def action_rename(self) -> None:
        """Ask for a new title for the selected session."""
        self._with_target(self._ask_rename)

    def _ask_rename(self, info: SessionInfo) -> None:
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

    # -- delete, restore, empty the trash -----------------------------------------

    def action_delete(self) -> None:
        """Move the selected session to the trash, after a confirmation."""
        self._with_target(self._ask_delete)

    def _ask_delete(self, info: SessionInfo) -> None:
        key = self._key_for("toggle_trash")
        question = delete_question(info, current=self._is_current(info), trash_key=key)

        def answered(confirmed: bool | None) -> None:
            if confirmed:
                self._delete(info)

        dialog = ConfirmDialog(question, "Move to the trash", grace=self._grace)
        self.app.push_screen(dialog, answered)

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
        key = self._key_for("toggle_trash")
        self.notify(
            f"Moved “{clip(info.display_title, 60)}” to the trash: {key} shows it, "
            "Enter there restores it.",
            markup=False,
        )
        browser = self.browser
        browser.remove_session(info.id)
        if replacement is not None:
            # The fresh session is the newest: reload so it appears on top.
            self._current_id = browser.current_id = replacement
            browser.reload()
        else:
            following = self.sessions.highlighted_session
            self.detail.show(following, current=self._is_current(following))
        self._refresh_search()

    def action_restore(self) -> None:
        """Take the selected session out of the trash."""
        trash = self.browser.trash
        info = trash.highlighted_session if trash.has_focus else None
        info = info or self.detail.session or trash.highlighted_session
        if info is not None and info.trashed_at is not None:
            self._restore(info)

    @work(group="history-edit", exit_on_error=False)
    async def _restore(self, info: SessionInfo) -> None:
        try:
            await self._manager.restore_session(info.id)
        except StoreError as error:
            self._report(error)
            return
        self.notify(
            f"Restored “{clip(info.display_title, 60)}”: it is back in the session list.",
            markup=False,
        )
        browser = self.browser
        browser.restored(info.id)
        if self.showing_trash:
            following = browser.trash.highlighted_session
            self.detail.show(following, current=False)

    def action_empty_trash(self) -> None:
        """Remove every session in the trash for good, after a confirmation."""
        self._ask_empty_trash()

    @work(exclusive=True, group="history-target", exit_on_error=False)
    async def _ask_empty_trash(self) -> None:
        try:
            doomed = await self._manager.list_trash(_EVERYTHING)
        except StoreError as error:
            self._report(error)
            return
        if not doomed:
            self.notify("The trash is empty.")
            return

        def answered(confirmed: bool | None) -> None:
            if confirmed:
                self._empty_trash()

        dialog = ConfirmDialog(empty_trash_question(doomed), "Empty the trash", grace=self._grace)
        self.app.push_screen(dialog, answered)

    @work(group="history-edit", exit_on_error=False)
    async def _empty_trash(self) -> None:
        try:
            before = self._manager.session_id
            removed = await self._manager.empty_trash()
            after = self._manager.session_id
        except StoreError as error:
            self._report(error)
            return
        if after != before:  # another window had put this one's session in the trash
            self.post_message(SessionDeleted(before, was_current=True, replacement_id=after))
            self._current_id = self.browser.current_id = after
            self.browser.reload()
        removed_what = f"{removed} session{'' if removed == 1 else 's'}"
        self.notify(f"Emptied the trash: {removed_what} removed for good.", markup=False)
        self.browser.emptied()
        if self.showing_trash:
            self.detail.show(None, current=False)

    # -- export and fork --------------------------------------------------------------

    def action_export(self) -> None:
        """Write the selected session to ``<title>-<id>.md`` in the export folder."""
        self._with_target(self._export_session)

    def _export_session(self, info: SessionInfo) -> None:
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
