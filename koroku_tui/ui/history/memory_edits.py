"""``MemoryEdits``: the history screen's memory pane: accept, edit, delete, add, open the source.

ctrl+y swaps the session list for the memories and suggestions, newest first
(Escape goes back). The right pane follows the cursor: the conversation the
memory came from, at its message; Enter opens it there, as a search hit
opens. The letters act only once the user moved in the list (the screen's
rule: typing is searching): ``a`` accepts a suggestion (from the next request
on, Koroku's instruction holds it), ``e`` edits, ``d`` deletes after a
confirmation that starts on Cancel and ignores its first moments' keys.
ctrl+n adds one by hand. Every change is the store's (``SessionManager``);
nothing here runs SQL.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from textual import on, work
from textual.widgets import OptionList

from koroku_tui.store import MAX_MEMORY_CHARS, MemoryRecord, SessionNotFoundError, StoreError
from koroku_tui.ui.history.dialogs import ConfirmDialog, MemoryDialog
from koroku_tui.ui.history.edits import HistoryEdits
from koroku_tui.ui.history.memory_list import MemoryList, delete_memory_question
from koroku_tui.ui.history.messages import OpenSession

__all__ = ["MemoryEdits"]

_ADD_QUESTION = (
    "A fact Koroku keeps in every later conversation (one sentence, e.g. “I am vegetarian”):"
)


class MemoryEdits(HistoryEdits):
    """The memory pane's actions."""

    MEMORY_ROW_ACTIONS = frozenset({"accept_memory", "edit_memory", "delete_memory"})
    """Letters acting on the memory under the cursor, once the user moved in the list."""
    MEMORY_ONLY = MEMORY_ROW_ACTIONS | {"leave_memories", "open_memory", "add_memory"}
    """The pane's own actions: off (not shown) elsewhere."""
    IN_MEMORIES = MEMORY_ONLY | {"toggle_memories", "focus_search", "into_list"}
    """What the memory pane offers."""

    @property
    def showing_memories(self) -> bool:
        """True while the left pane lists the memories (not the sessions, not hits)."""
        return self.browser.in_memories and not self.browser.searching

    @property
    def memory_list(self) -> MemoryList:
        """The memories and suggestions."""
        return self.browser.memories

    def memory_check(self, action: str) -> bool | None:
        """``check_action`` for the memory pane's actions (and for every action while it shows)."""
        if not self.showing_memories:
            return action not in self.MEMORY_ONLY
        if action not in self.IN_MEMORIES:
            return False
        if action in self.MEMORY_ROW_ACTIONS:
            return True if self.armed else None
        return True

    # -- showing the pane ------------------------------------------------------

    def action_toggle_memories(self) -> None:
        """Show the memories, or go back from them to the sessions."""
        browser = self.browser
        if self.search_box.value:
            self.search_box.value = ""
            browser.end_search()
        if browser.in_trash:
            browser.show_trash(False)
        shown = not browser.in_memories
        browser.show_memories(shown)
        if shown:
            self.memory_list.focus()
            self._show_source(self.memory_list.highlighted_memory, delay=0.0)
        else:
            browser.shown.focus()
            info = browser.shown.highlighted_session
            self.detail.show(info, current=self._is_current(info))
        self.refresh_bindings()

    def action_leave_memories(self) -> None:
        """Back from the memories to the sessions."""
        self.action_toggle_memories()

    @on(OptionList.OptionHighlighted, "#memory-list")
    def _memory_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if self.showing_memories:
            self._show_source(self.memory_list.memory_at(event.option_index))

    @on(OptionList.OptionSelected, "#memory-list")
    def _memory_double_clicked(self) -> None:
        self.action_open_memory()

    @work(exclusive=True, group="history-memory-source", exit_on_error=False)
    async def _show_source(self, memory: MemoryRecord | None, delay: float | None = None) -> None:
        """The right pane: the memory's conversation at its message (nothing for one by hand)."""
        await asyncio.sleep(self.BROWSE_DEBOUNCE if delay is None else delay)
        if memory is None or memory.session_id is None:
            self.detail.show(None, current=False)
            return
        try:
            info = await self._manager.get_session(memory.session_id)
        except SessionNotFoundError:
            self.detail.show(None, current=False)  # removed for good: the line says so
            return
        except StoreError as error:
            self._report(error)
            return
        self.detail.show(info, current=self._is_current(info), focus_message_id=memory.message_id)

    # -- actions -------------------------------------------------------------

    def _with_memory(self, then: Callable[[MemoryRecord], None]) -> None:
        memory = self.memory_list.highlighted_memory
        if memory is not None:
            then(memory)

    def action_open_memory(self) -> None:
        """Leave the screen, opening the conversation the memory came from at its message."""
        self._with_memory(self._open_source)

    def _open_source(self, memory: MemoryRecord) -> None:
        if memory.session_id is None or memory.source_state == "none":
            self.notify("This memory was added by hand: no conversation to open.")
        elif memory.source_state == "gone":
            self.notify("The conversation this memory came from was removed for good.")
        elif memory.source_state == "trash":
            key = self._key_for("toggle_trash")
            self.notify(
                f"The conversation this memory came from is in the trash: {key} shows it, "
                "Enter there restores it."
            )
        else:
            self.dismiss(OpenSession(memory.session_id, message_id=memory.message_id))

    def action_accept_memory(self) -> None:
        """Make the suggestion under the cursor a memory: later requests hold it."""
        self._with_memory(self._accept)

    def _accept(self, memory: MemoryRecord) -> None:
        if not memory.is_suggestion:
            self.notify(f"Memory {memory.id} is kept already.")
            return
        self._accept_suggestion(memory.id)

    def action_edit_memory(self) -> None:
        """Change the text of the memory under the cursor."""
        self._with_memory(self._ask_edit)

    def _ask_edit(self, memory: MemoryRecord) -> None:
        def edited(text: str | None) -> None:
            if text is not None:
                self._edit(memory.id, text)

        what = "suggestion" if memory.is_suggestion else "memory"
        dialog = MemoryDialog(f"Edit {what} {memory.id}:", memory.text, limit=MAX_MEMORY_CHARS)
        self.app.push_screen(dialog, edited)

    def action_delete_memory(self) -> None:
        """Delete the memory under the cursor for good, after a confirmation."""
        self._with_memory(self._ask_delete_memory)

    def _ask_delete_memory(self, memory: MemoryRecord) -> None:
        def answered(confirmed: bool | None) -> None:
            if confirmed:
                self._delete_memory(memory.id)

        dialog = ConfirmDialog(delete_memory_question(memory), "Delete", grace=self._grace)
        self.app.push_screen(dialog, answered)

    def action_add_memory(self) -> None:
        """Add a memory by hand."""

        def written(text: str | None) -> None:
            if text is not None:
                self._add(text)

        self.app.push_screen(MemoryDialog(_ADD_QUESTION, limit=MAX_MEMORY_CHARS), written)

    # -- the store's changes, in workers -----------------------------------------

    @work(group="history-edit", exit_on_error=False)
    async def _edit(self, memory_id: int, text: str) -> None:
        try:
            await self._manager.edit_memory(memory_id, text)
        except (StoreError, ValueError) as error:
            self._report(error)
            return
        self.notify(f"Memory {memory_id} changed.")
        await self.browser.reload_memories().wait()

    @work(group="history-edit", exit_on_error=False)
    async def _delete_memory(self, memory_id: int) -> None:
        try:
            await self._manager.delete_memory(memory_id)
        except StoreError as error:
            self._report(error)
            return
        self.notify(f"Deleted memory {memory_id}: later conversations will not know it.")
        await self.browser.reload_memories().wait()

    @work(group="history-edit", exit_on_error=False)
    async def _add(self, text: str) -> None:
        try:
            added = await self._manager.add_memory(text)
        except (StoreError, ValueError) as error:
            self._report(error)
            return
        self.notify(f"Remembered as memory {added.id}: Koroku knows it from the next message on.")
        await self.browser.reload_memories().wait()
        self.memory_list.highlighted = 0  # the newest: the one just added

    @work(group="history-edit", exit_on_error=False)
    async def _accept_suggestion(self, memory_id: int) -> None:
        try:
            await self._manager.accept_memory(memory_id)
        except StoreError as error:
            self._report(error)
            return
        self.notify(f"Accepted memory {memory_id}: Koroku knows it from the next message on.")
        await self.browser.reload_memories().wait()
