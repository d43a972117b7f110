"""Fills the transcript and the sidebar from the store: the tail first, other pages on demand.

Stored rows reach the transcript through ``PageReplay`` (``page_reading``).
Start-up replays the newest page (before the first frame, without the agent
or the Gemini SDK); scrolling up replays the page above, unmounting pages far
below; scrolling back down replays the page below, unmounting pages far
above, until the newest page (the live end) is mounted again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Literal

from textual.widget import Widget

from koroku_tui.agent.tools.denials import is_denial
from koroku_tui.agent.tools.spec import ToolLookup
from koroku_tui.events import CompactionEvent, RewindEvent, TextPart, TurnErrorEvent
from koroku_tui.events.turns import in_spans
from koroku_tui.events.views import tool_results
from koroku_tui.store import ReplayedPage, SessionInfo, SessionManager, StoredMessage
from koroku_tui.ui.main.blocks import NoticeBlock
from koroku_tui.ui.main.mounted import RowSpan
from koroku_tui.ui.main.page_reading import PageReplay, shown_after, shown_events
from koroku_tui.ui.main.sidebar import FinishedCall, ToolSidebar
from koroku_tui.ui.main.transcript import Shown, Transcript, blocks_for_events, ends_in_calls

__all__ = ["PAGE_SIZE", "Older", "Page", "SessionView"]

Older = Literal["shown", "start", "wait"]
"""What asking for older messages did: showed a page, found the start, or must
wait for the running turn (its blocks at the end stay mounted, at the bound)."""

PAGE_SIZE = 40
"""Messages mounted at start and per page (mount cost grows with this, not history)."""


def _calls(events: Sequence[Shown]) -> list[FinishedCall]:
    """Finished tool calls as the sidebar shows them, from the stored responses."""
    return [
        FinishedCall(
            result.name,
            dict(result.args or {}),
            result.failed,
            result.failed and is_denial(result.outcome),
        )
        for event in events
        if not isinstance(event, RewindEvent | TurnErrorEvent)
        for result in tool_results(event)
    ]


def _blocks(events: Sequence[Shown], tools: ToolLookup, *, at_end: bool = False) -> list[Widget]:
    """The blocks of a page; ``at_end``: it ends where the session does (see blocks_for_events)."""
    return blocks_for_events(events, tools, at_end=at_end)


async def _page_blocks(
    store: SessionManager,
    page: ReplayedPage,
    events: list[Shown],
    tools: ToolLookup,
    *,
    at_end: bool = False,
) -> list[Widget]:
    """The blocks of a page read from ``store``: a call ending it is checked against the next row.

    Without that look, a call Koroku was killed in would show nothing when
    a page ends with it (its "interrupted" row comes from the row after).
    A page that filled up just before the session's end does not know it
    ends there (``more``): nothing shown after it says so.
    """
    then = None
    if not at_end and page.newest_id is not None and ends_in_calls(events):
        then = await shown_after(store, page.newest_id)
        at_end = then is None
    return blocks_for_events(events, tools, at_end=at_end, then=then)


def _span(page: ReplayedPage) -> RowSpan | None:
    if page.oldest_id is None or page.newest_id is None:
        return None
    return RowSpan(page.oldest_id, page.newest_id)


def _lines(text: str, width: int) -> int:
    return sum(max(1, -(-len(line) // width)) for line in text.splitlines())


def estimated_lines(event: Shown, width: int) -> int:
    """Lines the event's blocks take at least, were they ``width`` columns wide.

    Cheap (no rendering) and on the low side: the transcript is narrower than
    the terminal, and Markdown adds lines rather than removing them.
    """
    if isinstance(event, CompactionEvent):
        return 2
    if isinstance(event, RewindEvent | TurnErrorEvent):
        return 1
    lines = len(tool_results(event))
    if any(isinstance(p, TextPart) and p.thought for p in event.parts):
        lines += 2
    if event.text:
        lines += _lines(event.text, width) + 1
    return lines


def screenful(events: list[Shown], width: int, height: int) -> int:
    """How many of the newest ``events`` fit in ``height`` lines (at least one)."""
    filled = 0
    for count, event in enumerate(reversed(events)):
        filled += estimated_lines(event, max(width, 1))
        if filled > height:
            return max(count, 1)
    return len(events)


@dataclass
class Page:
    """The newest stored messages of a session (what start-up and a switch show first)."""

    info: SessionInfo
    events: list[Shown]
    oldest_id: int | None
    more: bool
    """True when older messages exist (``show_older`` can load them)."""
    newest_id: int = 0
    """The newest row read: rows after it were stored once the page was read."""

    @classmethod
    async def latest(cls, store: SessionManager) -> Page:
        """The current session's last ``PAGE_SIZE`` messages: a cost independent of its length."""
        info = await store.get_session(store.session_id)
        page, events = await PageReplay.read(store, limit=PAGE_SIZE)
        return cls(info, events, page.oldest_id, page.more, page.newest_id or 0)

    def blocks(self, tools: ToolLookup, start: int = 0) -> list[Widget]:
        """The blocks of the events from ``start`` on, each call's row as its spec says."""
        # The newest page ends where the session does: a call left alone there was cut off.
        return _blocks(self.events[start:], tools, at_end=True)

    @cached_property
    def span(self) -> RowSpan:
        """The rows the page was read from (one object: a page comes and goes whole)."""
        return RowSpan(self.oldest_id or 0, self.newest_id)


class SessionView:
    """The current session's stored history, paged into the transcript and sidebar.

    ``running`` says whether a turn (or a compaction) is writing at the end of
    the transcript: those live blocks are never unmounted under it.
    """

    def __init__(
        self,
        store: SessionManager,
        transcript: Transcript,
        sidebar: ToolSidebar,
        running: Callable[[], bool] = lambda: False,
    ) -> None:
        self.store = store
        self.transcript = transcript
        self.sidebar = sidebar
        self._running = running
        self._newest_id = 0
        self._calls_before: int | None = None
        """The sidebar lists the calls of the rows from this id on (``None``: of none yet)."""
        self._all_calls = False
        """True once the sidebar lists every call of the session, not just the pages'."""
        self._older_waits = False
        """True when an older page waited for the running turn (no room at the bound)."""
        # One change at a time: a page load, the sidebar fill and a session
        # switch each read the paging state and then await the store.
        self._lock = asyncio.Lock()
        # Page loads one at a time, each waiting for its layout (which the next
        # one measures) outside ``_lock``: handlers take that one, and the wait
        # ends in the screen's task, which a handler waiting for it would block.
        self._paging = asyncio.Lock()
        transcript.back_to_live = self.back_to_live

    def adopt(self, page: Page) -> None:
        """Take over a page already in the transcript (composed with the app): fill the sidebar."""
        self._take(page.oldest_id, page.more, page.newest_id)
        self.transcript.tag(page.span)
        self._calls_before, self._all_calls = page.oldest_id, not page.more
        for name, args, failed, denied in _calls(page.events):
            self.sidebar.add_call(name, args, done=True, failed=failed, denied=denied)

    def _take(self, oldest_id: int | None, more: bool, newest_id: int) -> None:
        """The newest page is mounted: where the pages above start, and the live blocks."""
        edges = self.transcript.edges
        edges.before, edges.more_before = oldest_id, more
        edges.after, edges.live_after = None, newest_id
        self._newest_id = newest_id

    async def complete(self, page: Page, shown: int) -> None:
        """Mount what ``page`` holds above its ``shown`` newest events (start-up shows those)."""
        async with self._lock:
            split = len(page.events) - shown
            rest, then = page.events[:split], page.events[split] if shown else None
            await self.transcript.prepend_page(
                blocks_for_events(rest, self.transcript.tools, then=then), page.span
            )

    async def show_current(self) -> SessionInfo:
        """Reset both widgets and mount the tail of the current session."""
        async with self._lock:
            page = await Page.latest(self.store)
            await self.transcript.clear()
            self.sidebar.clear()
            await self.transcript.append_page(page.blocks(self.transcript.tools), page.span)
            self.adopt(page)
            self.transcript.anchor()
            return page.info

    async def show_at(self, message_id: int) -> tuple[SessionInfo, Widget | None]:
        """Reset both widgets and mount the rows around ``message_id``; its first block.

        A page of the rows before it above, a page from it on below, the
        view away from the live end unless that page reaches it. A row the
        transcript does not show (one a rewind abandoned, one without
        blocks) gives the first block shown after it: for an abandoned row,
        the rewind's marker. ``None`` when nothing follows it.
        """
        async with self._lock:
            info = await self.store.get_session(self.store.session_id)
            above, above_events = await PageReplay.read(
                self.store, before=message_id, limit=PAGE_SIZE
            )
            below, below_events = await PageReplay.read_newer(
                self.store, after=message_id - 1, limit=PAGE_SIZE
            )
            await self.transcript.clear()
            self.sidebar.clear()
            tools = self.transcript.tools
            upper = await _page_blocks(self.store, above, above_events, tools)
            lower = await _page_blocks(
                self.store, below, below_events, tools, at_end=not below.more
            )
            for page, blocks in ((above, upper), (below, lower)):
                span = _span(page)
                if span is not None:
                    await self.transcript.append_page(blocks, span)
            newest = await self.store.load_all(limit=1)
            last = newest[-1].id if newest else 0
            self._take(above.oldest_id or below.oldest_id, above.more, last)
            if below.more:  # the live end is further down: scrolling there pages to it
                self.transcript.edges.after = below.newest_id
            # Pages below come back without listing their calls: the sidebar
            # lists every call of the line instead (show_earlier_calls, after the switch).
            self._calls_before, self._all_calls = last + 1, False
            self.transcript.anchor(False)
            return info, (lower[0] if lower else None)

    async def back_to_live(self) -> None:
        """Mount the newest page again in place of the pages shown (the sidebar stays)."""
        async with self._lock:
            await self._back_to_live()

    async def _back_to_live(self) -> None:
        if not self.transcript.edges.away:
            return
        page, events = await PageReplay.read(self.store, limit=PAGE_SIZE)
        await self.transcript.clear()
        span = _span(page)
        if span is not None:
            await self.transcript.append_page(
                _blocks(events, self.transcript.tools, at_end=True), span
            )
        self._take(page.oldest_id, page.more, page.newest_id or 0)
        self.transcript.anchor()

    async def seal_live(self) -> None:
        """A turn ended: its blocks become a page of the rows it stored, unmounted like others.

        Without this a long session run in one sitting would grow the
        transcript past its bound, live blocks being kept whole.
        """
        async with self._lock:
            edges = self.transcript.edges
            if edges.away or not self.transcript.live_blocks():
                return
            newest = await self.store.load_all(limit=1)
            last = newest[-1].id if newest else edges.live_after
            self.transcript.tag(RowSpan(edges.live_after + 1, last), self.transcript.live_blocks())
            edges.live_after = max(last, edges.live_after)
            if self._older_waits and self.transcript.scroll_y <= 0:
                # Still at the top, where no scroll can happen: load what waited.
                self.transcript.post_message(Transcript.ReachedTop())
            self._older_waits = False

    async def show_stored_since_page(self) -> None:
        """Show what another window stored between reading the page and the agent's context.

        Call once the agent has read its context and before a turn runs: rows
        stored in that gap are in the model's context already, so the agent
        never reports them as new.
        """
        page, events = await PageReplay.read(self.store, after=self._newest_id, limit=PAGE_SIZE)
        if page.newest_id is not None and page.newest_id > self._newest_id:
            self._newest_id = page.newest_id
        if events:
            async with self._lock:
                await self._back_to_live()  # so that adding below cannot wait for this lock
                await self._show_from_elsewhere(events)

    async def show_synced(self, messages: list[StoredMessage]) -> None:
        """Add what another Koroku window stored in this session since we last looked.

        Rows a page read since then shows already are left out: the pages
        read again on the way back down, or the newest page read again for
        the message just sent, once this window's turn was paged away.
        """
        async with self._lock:
            await self._back_to_live()  # so that adding below cannot wait for this lock
            fresh = [m for m in messages if m.id > self._newest_id]
            self._newest_id = max([self._newest_id, *(m.id for m in fresh)])
            await self._show_from_elsewhere(shown_events(fresh))

    async def _show_from_elsewhere(self, events: list[Shown]) -> None:
        """Mount another window's ``events`` at the live end (hold ``_lock``)."""
        if not events:
            return
        # They were stored before the message just sent, so they go above it.
        blocks: list[Widget] = [NoticeBlock("From another Koroku window:")]
        blocks += blocks_for_events(events, self.transcript.tools)
        await self.transcript.add_before_sent(*blocks)
        for name, args, failed, denied in _calls(events):
            self.sidebar.add_call(name, args, done=True, failed=failed, denied=denied)

    async def show_earlier_calls(self) -> None:
        """Put the calls older than the mounted pages at the top of the sidebar.

        Reads only the rows holding tool results; run after start-up so that
        a long session's first frame does not wait for it.
        """
        async with self._lock:
            await self._show_earlier_calls()

    async def _show_earlier_calls(self) -> None:
        if self._all_calls or self._calls_before is None:
            return
        spans = await self.store.abandoned_spans()
        rows = await self.store.tool_results(before_id=self._calls_before)
        # The sidebar lists the calls of the line the transcript shows.
        calls = _calls(shown_events([r for r in rows if not in_spans(r.id, spans)]))
        if calls:
            self.sidebar.prepend_calls(calls)
        self._all_calls = True

    async def show_older(self) -> Older:
        """Mount the page above the first block, unmounting pages far below (out of view)."""
        async with self._paging:
            async with self._lock:
                older = await self._show_older()
            await self.transcript.laid_out()
            return older

    async def _show_older(self) -> Older:
        edges = self.transcript.edges
        if not edges.more_before or edges.before is None:
            return "start"
        page, events = await PageReplay.read(self.store, before=edges.before, limit=PAGE_SIZE)
        span = _span(page)
        if span is None:
            edges.more_before = False
            return "start"
        blocks = await _page_blocks(self.store, page, events, self.transcript.tools)
        if not await self.transcript.drop_below(len(blocks), keep_live=self._running()):
            self._older_waits = True  # nothing skipped: the same page loads once the turn ends
            return "wait"
        edges.before, edges.more_before = span.first, page.more
        await self.transcript.prepend_page(blocks, span)
        await self._list_calls(span, events)
        return "shown"

    async def _list_calls(self, span: RowSpan, events: list[Shown]) -> None:
        """The calls of a page read above, unless the sidebar lists them already."""
        if self._all_calls or self._calls_before is None or span.first >= self._calls_before:
            return
        if span.last < self._calls_before:
            self.sidebar.prepend_calls(_calls(events))
            self._calls_before = span.first
        else:  # the page straddles what is listed: list every earlier call instead
            await self._show_earlier_calls()

    async def show_newer(self) -> bool:
        """Mount the page below the last block, unmounting pages far above; True if one came."""
        async with self._paging:
            async with self._lock:
                newer = await self._show_newer()
            await self.transcript.laid_out()
            return newer

    async def _show_newer(self) -> bool:
        edges = self.transcript.edges
        if edges.after is None:
            return False
        page, events = await PageReplay.read_newer(self.store, after=edges.after, limit=PAGE_SIZE)
        span = _span(page)
        blocks = await _page_blocks(
            self.store, page, events, self.transcript.tools, at_end=not page.more
        )
        if span is not None:
            await self.transcript.drop_above(len(blocks))
            await self.transcript.append_page(blocks, span)
            edges.after = span.last
        if not page.more:  # the newest page: live blocks follow it from here
            edges.after, edges.live_after = None, edges.after or 0
            self._newest_id = max(self._newest_id, edges.live_after)
        return span is not None
