"""The ``@`` picker: workspace files matching what follows the ``@``, above the prompt.

The prompt drives it (``ui.main.prompt``): ``@`` at the start or after a
space opens it, each key narrows it, up and down move, Enter or Tab chooses,
Escape closes. Each opening lists the workspace again on a thread
(``agent.tools.file_index``), so files made since are there, and searches
run on a thread too: the keys never wait for a walk of a large tree or a
search over it. What is listed so far is searched as the walk goes, so the
first matches show within a few milliseconds.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import work
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from koroku_tui.ui.safe_text import literal

if TYPE_CHECKING:
    # Imported at the first "@": pathspec has no place in the first frame.
    from koroku_tui.agent.tools.file_index import FileIndex

__all__ = ["SHOWN", "FilePicker"]

SHOWN = 50
"""Matches listed at most."""


class FilePicker(OptionList, can_focus=False):
    """The matching files; hidden until ``show`` is called."""

    DEFAULT_CSS = """
    FilePicker {
        display: none;
        height: auto;
        max-height: 12;
        border: round $accent;
    }
    FilePicker.-shown {
        display: block;
    }
    """

    def __init__(self, workspace: Path, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.workspace = workspace
        self.query_text: str | None = None
        """What follows the ``@`` now; ``None`` while closed."""
        self.index: FileIndex | None = None
        self.found: list[str] = []
        """The paths listed, best first."""
        self._shown_query: str | None = None  # what ``found`` answers
        self._lock = threading.Lock()  # one search at a time over the index's lists
        self.on_choose: Callable[[str], None] | None = None
        """What a click on a file does (the prompt writes it)."""

    @property
    def is_open(self) -> bool:
        """True while the picker is shown."""
        return self.query_text is not None

    def show(self, query: str) -> None:
        """Open on (or narrow to) the files matching ``query``."""
        opening = self.query_text is None
        self.query_text = query
        if opening:
            from koroku_tui.agent.tools.file_index import FileIndex

            self.add_class("-shown")
            self.index = FileIndex(self.workspace)
            self._list_files(self.index)
        self._search(query)

    def close(self) -> None:
        """Hide the picker, and end the listing if it still runs."""
        if self.index is not None:
            self.index.stopped.set()
        self.query_text = None
        self.remove_class("-shown")
        self.clear_options()
        self.found = []
        self._shown_query = None

    def on_unmount(self) -> None:
        # The walk runs on a thread the app's exit cannot stop: told here, it ends and lets
        # go of the paths it gathered (up to 250,000) instead of walking on after the app.
        if self.index is not None:
            self.index.stopped.set()

    def chosen(self) -> str | None:
        """The highlighted path, if any; the best match of what was typed if the list lags."""
        query, index = self.query_text, self.index
        if query is None:
            return None
        if query != self._shown_query and index is not None:
            # Enter or Tab before the search of the last keys answered: the list
            # shown is an older query's, and its first line is not what was asked.
            with self._lock:
                best = index.search(query, 1)
            return best[0] if best else None
        if self.highlighted is None or not self.found:
            return None
        return self.found[min(self.highlighted, len(self.found) - 1)]

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        index = int(event.option.id or -1)
        if self.on_choose is not None and 0 <= index < len(self.found):
            self.on_choose(self.found[index])

    @work(thread=True, group="at-files-list", exit_on_error=False)
    def _list_files(self, index: FileIndex) -> None:
        def more() -> None:
            if self.index is index:
                self.app.call_from_thread(self._search_again, index)

        index.build(on_batch=more, batch=5_000)

    def _search_again(self, index: FileIndex) -> None:
        """Search the files listed so far for what is typed now.

        The query is read here, on the loop, not in the walk's thread: read
        there, it could be a key behind ("sho" of "@shop"), and its search,
        started after the newest (searches are exclusive), cancelled that
        one and then found its own query stale: the picker showed nothing.
        """
        if self.index is index and self.query_text is not None:
            self._search(self.query_text)

    @work(thread=True, exclusive=True, group="at-files-search", exit_on_error=False)
    def _search(self, query: str) -> None:
        index = self.index
        if index is None:
            return
        with self._lock:
            if query != self.query_text:
                # Typed on while an earlier search ran: only the newest is worth
                # running (each was run in turn, the list lagging behind the keys).
                return
            found = index.search(query, SHOWN)
        self.app.call_from_thread(self._show, index, query, found)

    def _show(self, index: FileIndex, query: str, found: list[str]) -> None:
        if index is not self.index or query != self.query_text:
            return  # an older search answering late
        # More of the walk, same query: the file the user moved to stays chosen
        # (it went back to the first line at each batch, and Enter took that).
        kept = self.chosen() if query == self._shown_query else None
        self._shown_query = query
        self.found = found
        self.clear_options()
        if found:
            self.add_options(Option(literal(path), id=str(n)) for n, path in enumerate(found))
            self.highlighted = found.index(kept) if kept in found else 0
        else:
            busy = not index.done.is_set()
            said = "listing the workspace…" if busy else "no file matches"
            self.add_option(Option(literal(said, style="dim italic"), disabled=True))
