"""The right-hand pane: the selected session's heading, summaries and raw history.

It loads what it shows itself, in workers, asking the SessionManager for
records (never SQL). The tail of the history comes first; older pages follow
when the user reaches the top.
"""

from __future__ import annotations

import asyncio

from textual import on, work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import OptionList, Static
from textual.worker import Worker

from koroku_tui.store import SessionInfo, SessionManager, StoredMessage, StoreError
from koroku_tui.ui.history.dates import Clock, full_when
from koroku_tui.ui.history.dialogs import TextReader
from koroku_tui.ui.history.history_view import HistoryView
from koroku_tui.ui.history.lists import SummaryList
from koroku_tui.ui.history.message_text import HistoryMoment, message_text
from koroku_tui.ui.history.wording import plural, session_heading
from koroku_tui.ui.safe_text import sanitize

__all__ = ["SessionDetail"]


class SessionDetail(Vertical):
    """Heading, compaction summaries and raw history of one session."""

    PAGE_SIZE = 100
    """Rows read per page of history."""

    def __init__(self, manager: SessionManager, clock: Clock, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._manager = manager
        self._clock = clock
        self.session: SessionInfo | None = None
        # The newest load: loading older rows waits for it (they share an
        # exclusive group, so starting one would cancel the other).
        self._worker: Worker[None] | None = None

    def compose(self) -> ComposeResult:
        yield Static("Select a session.", id="session-heading", markup=False)
        yield Static("", id="summaries-title", classes="section-title", markup=False)
        yield SummaryList(id="summary-list")
        yield Static("Raw history", classes="section-title", markup=False)
        yield HistoryView(id="history-view")

    @property
    def history(self) -> HistoryView:
        """The raw history list."""
        return self.query_one(HistoryView)

    def show(
        self,
        info: SessionInfo | None,
        *,
        current: bool,
        focus_message_id: int | None = None,
        delay: float = 0.0,
    ) -> None:
        """Show ``info`` (``None``: nothing), scrolled to ``focus_message_id`` if given.

        ``delay`` debounces cursor movement in the session list: each call
        cancels the previous load, so only where the cursor stops is read.
        """
        self.session = info
        if info is None:
            self.workers.cancel_group(self, "history-detail")
            self.query_one("#session-heading", Static).update("Select a session.")
            self._show_summaries_title(0)
            self.query_one(SummaryList).show_summaries([], self._clock())
            self.history.clear_messages()
            return
        self._worker = self._load(info, current, focus_message_id, delay)

    def update_heading(self, info: SessionInfo, *, current: bool) -> None:
        """Redraw the heading (after a rename)."""
        self.session = info
        heading = session_heading(info, self._clock(), current=current)
        self.query_one("#session-heading", Static).update(heading)

    def load_older(self) -> None:
        """Read the page before the oldest row shown (no-op when there is none)."""
        busy = self._worker is not None and not self._worker.is_finished
        view = self.history
        if self.session is not None and view.has_older and view.messages and not busy:
            self._worker = self._load_older(self.session.id)

    @work(exclusive=True, group="history-detail", exit_on_error=False)
    async def _load(
        self, info: SessionInfo, current: bool, focus_id: int | None, delay: float
    ) -> None:
        try:
            if delay:
                await asyncio.sleep(delay)
            summaries = await self._manager.compaction_summaries(info.id)
            abandoned = tuple(await self._manager.abandoned_spans(info.id))
            page = await self._manager.load_all(info.id, limit=self.PAGE_SIZE)
            has_older = len(page) == self.PAGE_SIZE
            # A search hit may be older than the tail: page back until it is in.
            while focus_id is not None and has_older and page and focus_id < page[0].id:
                older = await self._page_before(info.id, page[0])
                has_older = len(older) == self.PAGE_SIZE
                page = [*older, *page]
        except StoreError as error:
            self.notify(sanitize(str(error)), severity="error", markup=False)
            return
        now = self._clock()
        self.update_heading(info, current=current)
        self._show_summaries_title(len(summaries))
        self.query_one(SummaryList).show_summaries(summaries, now)
        moment = HistoryMoment(now, summaries[-1] if summaries else None, abandoned)
        self.history.show_messages(page, moment, has_older=has_older, focus_id=focus_id)

    @work(exclusive=True, group="history-detail", exit_on_error=False)
    async def _load_older(self, session_id: int) -> None:
        view = self.history
        try:
            older = await self._page_before(session_id, view.messages[0])
        except StoreError as error:
            self.notify(sanitize(str(error)), severity="error", markup=False)
            return
        if self.session is not None and self.session.id == session_id:
            view.prepend(older, has_older=len(older) == self.PAGE_SIZE)

    async def _page_before(self, session_id: int, first: StoredMessage) -> list[StoredMessage]:
        return await self._manager.load_all(session_id, before_id=first.id, limit=self.PAGE_SIZE)

    def _show_summaries_title(self, count: int) -> None:
        title = f"Compaction summaries ({count})" if count else "No compaction summaries"
        self.query_one("#summaries-title", Static).update(title)
        self.query_one(SummaryList).display = count > 0

    @on(HistoryView.LoadOlder)
    def _on_load_older(self) -> None:
        self.load_older()

    @on(OptionList.OptionSelected, "#summary-list")
    def _read_summary(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        summary = self.query_one(SummaryList).summary_at(event.option_index)
        if summary is not None:
            when = full_when(summary.created_at, self._clock())
            title = f"Compaction summary #{summary.message_id} · {when}"
            self.app.push_screen(TextReader(title, summary.summary))

    @on(OptionList.OptionSelected, "#history-view")
    def _read_message(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        view = self.history
        message = view.message_at(event.option_index)
        if message is not None and view.history_moment is not None:
            body = message_text(message, view.history_moment, whole=True).plain
            title = f"Message #{message.id} ({plural(len(body.splitlines()), 'line')})"
            self.app.push_screen(TextReader(title, body))
