"""The raw history of one session: every stored row, paged backwards from the tail.

One ``OptionList`` entry per row (Line API: no widget per message, only the
visible lines are rendered). Rows are clipped to a few dozen lines; ``space``
or a click opens the whole row in a reader.
"""

from __future__ import annotations

from textual.message import Message
from textual.widgets.option_list import Option, OptionDoesNotExist

from koroku_tui.store import StoredMessage
from koroku_tui.ui.history.lists import BrowseList
from koroku_tui.ui.history.message_text import HistoryMoment, message_text
from koroku_tui.ui.safe_text import literal

__all__ = ["HistoryView"]

OLDER_MARKER_ID = "older"


class HistoryView(BrowseList):
    """Stored rows in id order; reaching the top asks for the previous page."""

    MARK_UNFOCUSED = False

    class LoadOlder(Message):
        """The user reached the oldest loaded row and older ones exist."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.messages: list[StoredMessage] = []
        self.has_older = False
        self._history_moment: HistoryMoment | None = None
        # Replacing the options scrolls to the top, which must not read as
        # "the user scrolled up, load more".
        self._quiet = False

    def show_messages(
        self,
        messages: list[StoredMessage],
        moment: HistoryMoment,
        *,
        has_older: bool,
        focus_id: int | None = None,
    ) -> None:
        """Show ``messages`` (id order) with the cursor on ``focus_id``, else the newest."""
        self._history_moment = moment
        self.messages = list(messages)
        self._rebuild(has_older)
        target = focus_id if focus_id is not None else (messages[-1].id if messages else None)
        if target is not None:
            self.scroll_to_message(target, top=focus_id is not None)

    def prepend(self, older: list[StoredMessage], *, has_older: bool) -> None:
        """Add an older page above; the cursor lands on the row that was first."""
        previous_first = self.messages[0].id if self.messages else None
        self.messages = [*older, *self.messages]
        self._rebuild(has_older)
        if previous_first is not None:
            self.scroll_to_message(previous_first, top=True)

    def clear_messages(self) -> None:
        """Show nothing (no session selected)."""
        self.messages = []
        self._rebuild(has_older=False)

    def scroll_to_message(self, message_id: int, *, top: bool = False) -> bool:
        """Put the cursor on a row; False when that row is not loaded."""
        try:
            index = self.get_option_index(f"m{message_id}")
        except OptionDoesNotExist:
            return False
        self._quiet = True
        try:
            self.highlighted = index
        finally:
            self._quiet = False
        # After the next refresh: the pane around this list may be changing
        # size in the same update (summaries appearing), and scrolling now
        # would use the old height.
        self.call_after_refresh(self.scroll_to_highlight, top)
        return True

    def message_at(self, index: int | None) -> StoredMessage | None:
        """The row shown at option ``index`` (the "older" marker is not a row)."""
        offset = 1 if self.has_older else 0
        if index is None or not 0 <= index - offset < len(self.messages):
            return None
        return self.messages[index - offset]

    @property
    def history_moment(self) -> HistoryMoment | None:
        """How rows are rendered (clock, latest compaction), once a session is shown."""
        return self._history_moment

    def _rebuild(self, has_older: bool) -> None:
        self.has_older = has_older
        moment = self._history_moment
        options: list[Option | None] = []
        if has_older:
            marker = literal("↑ older messages: scroll up or press l to load them", "dim italic")
            options.append(Option(marker, id=OLDER_MARKER_ID, disabled=True))
        if moment is not None:
            for message in self.messages:
                # None draws a rule under the previous row: rows are separated
                # without costing an option (indexes stay one per row).
                options += [Option(message_text(message, moment), id=f"m{message.id}"), None]
        self._quiet = True
        try:
            self.set_options(options)
        finally:
            self._quiet = False

    def watch_highlighted(self, highlighted: int | None) -> None:
        super().watch_highlighted(highlighted)
        first_row = 1 if self.has_older else 0
        if highlighted is not None and highlighted <= first_row:
            self._want_older()

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if new_value <= 0 < old_value:
            self._want_older()

    def _want_older(self) -> None:
        if self.has_older and not self._quiet:
            self.post_message(self.LoadOlder())
