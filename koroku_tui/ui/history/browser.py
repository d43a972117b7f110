"""The left-hand pane: the session list (paged), the trash, the memories, or search hits.

It reads what it lists itself, in workers; the screen reacts to the
``OptionList`` messages that bubble out of it (a session highlighted, a hit
chosen) and drives it with ``reload``, ``search``, ``end_search`` and
``show_trash`` and ``show_memories``.
"""

from __future__ import annotations

import asyncio

from textual import on, work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static
from textual.worker import Worker

from koroku_tui.store import SessionInfo, SessionManager, StoreError
from koroku_tui.ui.history.dates import Clock
from koroku_tui.ui.history.lists import SearchResults, SessionList, TrashList
from koroku_tui.ui.history.memory_list import MemoryList, memory_status
from koroku_tui.ui.history.wording import clip, plural
from koroku_tui.ui.safe_text import sanitize

__all__ = ["SessionBrowser"]


class SessionBrowser(Vertical):
    """Sessions newest first, a page at a time; or the trash, or the memories; search hits
    while searching."""

    PAGE_SIZE = 100
    SEARCH_LIMIT = 100
    SEARCH_DEBOUNCE = 0.25
    """Keystrokes closer together than this run one search, for the last of them."""

    def __init__(
        self,
        manager: SessionManager,
        clock: Clock,
        current_id: int | None,
        *,
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self._manager = manager
        self._clock = clock
        self.current_id = current_id
        """The App's current session: marked in the list, highlighted after a reload."""
        self._paging: Worker[None] | None = None
        self._trash_paging: Worker[None] | None = None

    def compose(self) -> ComposeResult:
        yield SessionList(id="session-list")
        yield TrashList(id="trash-list")
        yield SearchResults(id="search-results")
        yield MemoryList(id="memory-list")
        yield Static("Loading sessions…", id="history-status", markup=False)

    def on_mount(self) -> None:
        self.reload()

    @property
    def sessions(self) -> SessionList:
        """The paged session list."""
        return self.query_one("#session-list", SessionList)

    @property
    def trash(self) -> TrashList:
        """The sessions in the trash."""
        return self.query_one("#trash-list", TrashList)

    @property
    def in_trash(self) -> bool:
        """True while the trash is shown instead of the sessions (searching aside)."""
        return self.has_class("-trash")

    @property
    def shown(self) -> SessionList:
        """The list of sessions shown: the session list or the trash."""
        return self.trash if self.in_trash else self.sessions

    def show_trash(self, shown: bool) -> None:
        """Show the trash (read again) or the sessions in the left pane."""
        self.set_class(shown, "-trash")
        if shown:
            self._trash_paging = self._load_trash(reset=True)
        elif not self.searching:
            self._session_status()

    @property
    def memories(self) -> MemoryList:
        """The memories and suggestions."""
        return self.query_one(MemoryList)

    @property
    def in_memories(self) -> bool:
        """True while the memories are shown instead of the sessions (searching aside)."""
        return self.has_class("-memories")

    def show_memories(self, shown: bool) -> None:
        """Show the memories (read again) or the sessions in the left pane."""
        self.set_class(shown, "-memories")
        if shown:
            self.reload_memories()
        elif not self.searching:
            self._session_status()

    def reload_memories(self) -> Worker[None]:
        """Read the memories again (after a change), keeping the cursor on the same one."""
        return self._load_memories()

    @work(exclusive=True, group="history-memories", exit_on_error=False)
    async def _load_memories(self) -> None:
        try:
            memories = await self._manager.list_memories()
        except StoreError as error:
            self._report(error)
            self._status("Could not read the memories.")
            return
        self.memories.show_memories(memories, self._clock())
        if self.in_memories and not self.searching:
            self._status(memory_status(memories))

    @property
    def results(self) -> SearchResults:
        """The search hits."""
        return self.query_one(SearchResults)

    @property
    def searching(self) -> bool:
        """True while hits are shown instead of the sessions."""
        return self.has_class("-searching")

    def reload(self) -> None:
        """Read the first page again, with the cursor on the current session."""
        self._paging = self._load_page(reset=True)

    def search(self, query: str) -> None:
        """Show the hits for ``query`` (after the debounce), or the sessions when it is blank."""
        query = query.strip()
        self.set_class(bool(query), "-searching")
        if query:
            self._status("Searching…")
            self._search(query)
        else:
            self.end_search()

    def end_search(self) -> None:
        """Back to the session list (or the trash)."""
        self.remove_class("-searching")
        self.workers.cancel_group(self, "history-search")
        if self.in_trash:
            self._trash_status()
        else:
            self._session_status()

    @work(exclusive=True, group="history-sessions", exit_on_error=False)
    async def _load_page(self, *, reset: bool) -> None:
        sessions = self.sessions
        offset = 0 if reset else sessions.rows_read
        try:
            page = await self._manager.list_sessions(self.PAGE_SIZE, offset)
        except StoreError as error:
            self._report(error)
            self._status("Could not read the sessions.")
            return
        if reset:
            sessions.reset()
        exhausted = len(page) < self.PAGE_SIZE
        now = self._clock()
        sessions.add_sessions(page, now=now, current_id=self.current_id, exhausted=exhausted)
        if not self.searching and not self.in_trash:
            self._session_status()
        if reset and sessions.option_count:
            # Start on the App's current session when it is in the first page.
            found = self.current_id is not None and sessions.highlight_session(self.current_id)
            if not found:
                sessions.highlighted = 0

    @work(exclusive=True, group="history-trash", exit_on_error=False)
    async def _load_trash(self, *, reset: bool) -> None:
        trash = self.trash
        offset = 0 if reset else trash.rows_read
        try:
            page = await self._manager.list_trash(self.PAGE_SIZE, offset)
        except StoreError as error:
            self._report(error)
            self._status("Could not read the trash.")
            return
        if reset:
            trash.reset()
        now = self._clock()
        trash.add_sessions(page, now=now, current_id=None, exhausted=len(page) < self.PAGE_SIZE)
        if self.in_trash and not self.searching:
            self._trash_status()
        if reset and trash.option_count:
            trash.highlighted = 0

    @on(SessionList.NeedMore, "#session-list")
    def _next_page(self) -> None:
        if self._paging is None or self._paging.is_finished:
            self._paging = self._load_page(reset=False)

    @on(SessionList.NeedMore, "#trash-list")
    def _next_trash_page(self) -> None:
        if self._trash_paging is None or self._trash_paging.is_finished:
            self._trash_paging = self._load_trash(reset=False)

    @work(exclusive=True, group="history-search", exit_on_error=False)
    async def _search(self, query: str) -> None:
        await asyncio.sleep(self.SEARCH_DEBOUNCE)  # cancelled by the next keystroke
        try:
            page = await self._manager.search_page(query, self.SEARCH_LIMIT)
        except StoreError as error:
            self._report(error)
            return
        hits = page.hits
        self.results.show_hits(hits, self._clock())
        found = plural(len(hits), "match", "matches")
        if page.more:  # only the best are listed: say so, and how many there are
            found = f"Showing the best {len(hits):,} of {page.total:,} matches"
        self._status(found if hits else f"No matches for “{clip(query, 40)}”.")

    def remove_session(self, session_id: int) -> None:
        """Drop a session moved to the trash from the list (and read the trash again)."""
        self.sessions.remove_session(session_id)
        self._trash_paging = self._load_trash(reset=True)
        if not self.searching and not self.in_trash:
            self._session_status()

    def restored(self, session_id: int) -> None:
        """A session came back from the trash: out of it, into the session list."""
        self.trash.remove_session(session_id)
        if self.in_trash and not self.searching:
            self._trash_status()
        self.reload()

    def emptied(self) -> None:
        """The trash was emptied."""
        self.trash.reset()
        self.trash.exhausted = True
        if self.in_trash and not self.searching:
            self._trash_status()

    def update_session(self, info: SessionInfo) -> None:
        """Redraw a renamed session."""
        self.sessions.update_session(info, now=self._clock(), current_id=self.current_id)

    def _session_status(self) -> None:
        count = self.sessions.option_count
        more = "" if self.sessions.exhausted else ", more below"
        self._status(f"{plural(count, 'session')}{more}" if count else "No sessions yet.")

    def _trash_status(self) -> None:
        count = self.trash.option_count
        if not count:
            self._status("The trash is empty.")
            return
        more = "" if self.trash.exhausted else ", more below"
        self._status(f"Trash: {plural(count, 'session')}{more} · Enter restores one")

    def _status(self, text: str) -> None:
        self.query_one("#history-status", Static).update(text)

    def _report(self, error: StoreError) -> None:
        self.notify(sanitize(str(error)), severity="error", markup=False)
