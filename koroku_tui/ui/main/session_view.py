"""Fills the transcript and the sidebar from the store: the tail first, older pages on demand.

Stored rows reach the transcript one way only: ``PageReplay.read``, one
page handed to a replay handler, ``handler(event=...)``, as the seed's
``initialize(replay_handler=)`` does (through ``SessionManager.replay``
unless the session was rewound). Start-up replays the
newest page (before the first frame, without the agent or the Gemini SDK);
scrolling up replays the page above. What compaction hid from the model is
replayed, so the user sees the conversation as it happened; what a rewind
abandoned is not (the conversation no longer goes through it: the history
screen shows it, marked), and each rewind shows as a one-line marker.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from textual.widget import Widget

from koroku_tui.events import CompactionEvent, RewindEvent, TextPart
from koroku_tui.events.turns import in_spans
from koroku_tui.events.views import tool_results
from koroku_tui.store import ReplayedPage, SessionInfo, SessionManager, StoredMessage
from koroku_tui.ui.main.blocks import NoticeBlock
from koroku_tui.ui.main.sidebar import ToolSidebar
from koroku_tui.ui.main.transcript import Shown, Transcript, blocks_for_event

__all__ = ["PAGE_SIZE", "Older", "Page", "PageReplay", "SessionView"]

Older = Literal["shown", "start", "full"]
"""What asking for older messages did: showed a page, or found the start, or no room."""

PAGE_SIZE = 40
"""Messages mounted at start and per "older" page (mount cost grows with this, not history)."""


def _events(rows: list[StoredMessage]) -> list[Shown]:
    shown: list[Shown] = []
    for row in rows:
        item = row.rewind or row.event
        if item is not None:
            shown.append(item)
    return shown


def _calls(events: Sequence[Shown]) -> list[tuple[str, dict[str, Any], bool]]:
    """Finished tool calls as the sidebar shows them, from the stored responses."""
    return [
        (result.name, dict(result.args or {}), result.failed)
        for event in events
        if not isinstance(event, RewindEvent)
        for result in tool_results(event)
    ]


def _lines(text: str, width: int) -> int:
    return sum(max(1, -(-len(line) // width)) for line in text.splitlines())


def estimated_lines(event: Shown, width: int) -> int:
    """Lines the event's blocks take at least, were they ``width`` columns wide.

    Cheap (no rendering) and on the low side: the transcript is narrower than
    the terminal, and Markdown adds lines rather than removing them.
    """
    if isinstance(event, CompactionEvent):
        return 2
    if isinstance(event, RewindEvent):
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


class PageReplay:
    """The replay handler the transcript is fed through: it keeps one page's events.

    The page is shown once whole (it is composed into the first frame, or
    mounted above the blocks already there), so the handler collects it.
    """

    def __init__(self) -> None:
        self.events: list[Shown] = []

    async def __call__(self, *, event: Shown) -> None:
        self.events.append(event)

    @classmethod
    async def read(
        cls,
        store: SessionManager,
        *,
        before: int | None = None,
        after: int | None = None,
        limit: int = PAGE_SIZE,
    ) -> tuple[ReplayedPage, list[Shown]]:
        """Replay one page of ``store`` through a new handler: where it lies, and its events.

        A session never rewound is replayed by ``SessionManager.replay``, as
        the seed's ``initialize(replay_handler=)`` does. Replay hands over
        model events only, so a session with rewinds is read as rows instead
        and handed over the same way: a rewind row as its marker, the rows it
        abandoned left out (the conversation no longer goes through them).
        Unreadable rows are skipped either way.
        """
        handler = cls()
        spans = await store.abandoned_spans()
        if not spans:
            page = await store.replay(handler, before=before, after=after, limit=limit)
            return page, handler.events
        if after is not None:  # rows stored since a page was read: few, newest
            recent = await store.load_all(before_id=before, limit=limit)
            rows = [r for r in recent if r.id > after and _on_line(r, spans)]
            more = False
        else:
            rows, more = await _line_rows(store, spans, before, limit)
        for row in rows:
            shown = row.rewind or row.event
            if shown is not None:
                await handler(event=shown)
        oldest, newest = (rows[0].id, rows[-1].id) if rows else (None, None)
        return ReplayedPage(oldest, newest, more, len(handler.events)), handler.events


def _on_line(row: StoredMessage, spans: list[tuple[int, int]]) -> bool:
    """True for a row the transcript shows: not abandoned (a rewind's own marker always)."""
    return row.rewind is not None or not in_spans(row.id, spans)


async def _line_rows(
    store: SessionManager, spans: list[tuple[int, int]], before: int | None, limit: int
) -> tuple[list[StoredMessage], bool]:
    """The newest ``limit`` rows on the session's line older than ``before``, and whether more.

    Rows a rewind abandoned are jumped over (never read), so the page after a
    rewind to an early message is that early conversation, not empty pages.
    """
    line: list[StoredMessage] = []
    cursor = before
    exhausted = False
    while len(line) < limit:
        rows = await store.load_all(before_id=cursor, limit=limit)
        line = [r for r in rows if _on_line(r, spans)] + line
        if len(rows) < limit:
            exhausted = True  # nothing older is stored
            break
        cursor = rows[0].id
        # The rows just below are an abandoned span (spans are merged): go under it.
        cursor = next((first for first, last in spans if first < cursor <= last + 1), cursor)
    if len(line) > limit:
        return line[-limit:], True
    return line, not exhausted


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
        page, events = await PageReplay.read(store)
        return cls(info, events, page.oldest_id, page.more, page.newest_id or 0)

    def blocks(self, start: int = 0) -> list[Widget]:
        return [block for event in self.events[start:] for block in blocks_for_event(event)]


class SessionView:
    """The current session's stored history, paged into the transcript and sidebar."""

    def __init__(self, store: SessionManager, transcript: Transcript, sidebar: ToolSidebar) -> None:
        self.store = store
        self.transcript = transcript
        self.sidebar = sidebar
        self._oldest_id: int | None = None
        self._newest_id = 0
        self._more = False
        self._all_calls = False
        """True once the sidebar lists every call of the session, not just the pages'."""
        # One change at a time: a page load, the sidebar fill and a session
        # switch each read the paging state and then await the store.
        self._lock = asyncio.Lock()

    def adopt(self, page: Page) -> None:
        """Take over a page already in the transcript (composed with the app): fill the sidebar."""
        self._oldest_id, self._more, self._all_calls = page.oldest_id, page.more, not page.more
        self._newest_id = page.newest_id
        for name, args, failed in _calls(page.events):
            self.sidebar.add_call(name, args, done=True, failed=failed)

    async def complete(self, page: Page, shown: int) -> None:
        """Mount what ``page`` holds above its ``shown`` newest events (start-up shows those)."""
        async with self._lock:
            await self.transcript.prepend(page.events[: len(page.events) - shown])

    async def show_current(self) -> SessionInfo:
        """Reset both widgets and mount the tail of the current session."""
        async with self._lock:
            page = await Page.latest(self.store)
            await self.transcript.clear()
            self.sidebar.clear()
            await self.transcript.add(*page.blocks())
            self.adopt(page)
            self.transcript.anchor()
            return page.info

    async def show_stored_since_page(self) -> None:
        """Show what another window stored between reading the page and the agent's context.

        Call once the agent has read its context and before a turn runs: rows
        stored in that gap are in the model's context already, so the agent
        never reports them as new.
        """
        page, events = await PageReplay.read(self.store, after=self._newest_id)
        if page.newest_id is not None and page.newest_id > self._newest_id:
            self._newest_id = page.newest_id
        await self._show_from_elsewhere(events)

    async def show_synced(self, messages: list[StoredMessage]) -> None:
        """Add what another Koroku window stored in this session since we last looked."""
        await self._show_from_elsewhere(_events(messages))

    async def _show_from_elsewhere(self, events: list[Shown]) -> None:
        if not events:
            return
        async with self._lock:
            # They were stored before the message just sent, so they go above it.
            blocks: list[Widget] = [NoticeBlock("From another Koroku window:")]
            blocks += [b for e in events for b in blocks_for_event(e)]
            await self.transcript.add_before_sent(*blocks)
            for name, args, failed in _calls(events):
                self.sidebar.add_call(name, args, done=True, failed=failed)

    async def show_earlier_calls(self) -> None:
        """Put the calls older than the mounted pages at the top of the sidebar.

        Reads only the rows holding tool results; run after start-up so that
        a long session's first frame does not wait for it.
        """
        async with self._lock:
            if self._all_calls or self._oldest_id is None:
                return
            spans = await self.store.abandoned_spans()
            rows = await self.store.tool_results(before_id=self._oldest_id)
            # The sidebar lists the calls of the line the transcript shows.
            calls = _calls(_events([r for r in rows if not in_spans(r.id, spans)]))
            if calls:
                self.sidebar.prepend_calls(calls)
            self._all_calls = True

    async def show_older(self) -> Older:
        """Prepend the previous page, if there is one and the transcript has room for it."""
        async with self._lock:
            return await self._show_older()

    async def _show_older(self) -> Older:
        if not self._more or self._oldest_id is None:
            return "start"
        room = self.transcript.room
        if room == 0:
            return "full"  # nothing skipped: the same page loads once there is room
        # Near the bound, read no more rows than there is room for blocks
        # (most messages are one block), so rows are not read and then cut.
        limit = min(PAGE_SIZE, room)
        page, events = await PageReplay.read(self.store, before=self._oldest_id, limit=limit)
        if page.oldest_id is None:
            self._more = False
            return "start"
        self._oldest_id = page.oldest_id
        self._more = page.more
        await self.transcript.prepend(events)
        if not self._all_calls:  # else the sidebar already lists them
            self.sidebar.prepend_calls(_calls(events))
        return "shown"
