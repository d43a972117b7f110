"""Reading one page of a session's stored rows for the transcript, up or down from a row.

Stored rows reach the transcript one way only: ``PageReplay``, one page
handed to a replay handler, ``handler(event=...)``, as the seed's
``initialize(replay_handler=)`` does (through ``SessionManager.replay``
unless the session was rewound). What compaction hid from the model is
replayed, so the user sees the conversation as it happened; what a rewind
abandoned is not (the conversation no longer goes through it: the history
screen shows it, marked), and each rewind shows as a one-line marker.
"""

from __future__ import annotations

from koroku_tui.events import TurnErrorEvent
from koroku_tui.events.turns import in_spans
from koroku_tui.store import ReplayedPage, SessionManager, StoredMessage
from koroku_tui.ui.main.transcript import Shown

__all__ = ["PageReplay", "shown_after", "shown_events"]

PageRead = tuple[ReplayedPage, list[Shown]]
"""Where a page read lies in the session, and the events it shows."""

_LOOK_AHEAD = 8
"""Rows read past a page to find what it is followed by (unreadable rows show nothing)."""


def shown_events(rows: list[StoredMessage]) -> list[Shown]:
    """What ``rows`` show, in order (unreadable rows show nothing)."""
    shown: list[Shown] = []
    for row in rows:
        item = row.shown
        if item is not None:
            shown.append(item)
    return shown


async def shown_after(store: SessionManager, row_id: int) -> Shown | None:
    """What the transcript shows first after row ``row_id`` on the session's line, if stored.

    For a page that ends in a call: whether the next page starts with its
    answers, or the call never got any (Koroku killed while it ran).
    """
    spans = await store.abandoned_spans()
    rows, _more = await _line_rows_after(store, spans, row_id, _LOOK_AHEAD)
    shown = shown_events(rows)
    return shown[0] if shown else None


class PageReplay:
    """The replay handler the transcript is fed through: it keeps one page's events.

    The page is shown once whole (it is composed into the first frame, or
    mounted above or below the blocks already there), so the handler collects it.
    """

    def __init__(self) -> None:
        self.events: list[Shown] = []

    async def __call__(self, *, event: Shown) -> None:
        self.events.append(event)

    async def error(self, error: TurnErrorEvent) -> None:
        """A turn's error row, in its place among the events."""
        self.events.append(error)

    @classmethod
    async def read(
        cls,
        store: SessionManager,
        *,
        limit: int,
        before: int | None = None,
        after: int | None = None,
    ) -> PageRead:
        """:meth:`_read_one`, reading on upward past pages that show nothing.

        A run of unreadable rows a page long or longer would otherwise end
        the paging there (an empty page mounts nothing, so nothing scrolls to
        ask for the next): the page returned spans the skipped rows too.
        """
        page, events = await cls._read_one(store, limit=limit, before=before, after=after)
        while not events and page.more and page.oldest_id is not None and after is None:
            above, events = await cls._read_one(
                store, limit=limit, before=page.oldest_id, after=None
            )
            page = _joined(above, page, more=above.more)
        return page, events

    @classmethod
    async def _read_one(
        cls, store: SessionManager, *, limit: int, before: int | None, after: int | None
    ) -> PageRead:
        """Replay one page of ``store`` through a new handler: where it lies, and its events.

        The newest ``limit`` rows older than ``before`` (of all rows without
        it); with ``after``, only those newer than it. A session never
        rewound is replayed by ``SessionManager.replay``, as the seed's
        ``initialize(replay_handler=)`` does (a turn's error row going to
        ``error``). Replay hands over model events only, so a session with
        rewinds is read as rows instead and handed over the same way: a
        rewind row as its marker, a turn's error as its sentence, the rows it
        abandoned left out (the conversation no longer goes through them). Unreadable
        rows are skipped either way.
        """
        handler = cls()
        spans = await store.abandoned_spans()
        if not spans:
            page = await store.replay(
                handler, before=before, after=after, limit=limit, errors=handler.error
            )
            return page, handler.events
        if after is not None:  # rows stored since a page was read: few, newest
            recent = await store.load_all(before_id=before, limit=limit)
            rows = [r for r in recent if r.id > after and _on_line(r, spans)]
            more = False
        else:
            rows, more = await _line_rows(store, spans, before, limit)
        return await cls._of_rows(rows, more)

    @classmethod
    async def read_newer(cls, store: SessionManager, *, after: int, limit: int) -> PageRead:
        """:meth:`_read_newer_one`, reading on downward past pages that show nothing."""
        page, events = await cls._read_newer_one(store, after=after, limit=limit)
        while not events and page.more and page.newest_id is not None:
            below, events = await cls._read_newer_one(store, after=page.newest_id, limit=limit)
            page = _joined(page, below, more=below.more)
        return page, events

    @classmethod
    async def _read_newer_one(cls, store: SessionManager, *, after: int, limit: int) -> PageRead:
        """The page below row ``after``: the oldest ``limit`` rows on the line newer than it.

        The way back down once the newer pages were unmounted. ``more`` says
        whether rows newer than the page exist; ``newest_id`` is where to
        read the next one from. Rewinds are handled as in :meth:`read`.
        """
        spans = await store.abandoned_spans()
        rows, more = await _line_rows_after(store, spans, after, limit)
        return await cls._of_rows(rows, more)

    @classmethod
    async def _of_rows(cls, rows: list[StoredMessage], more: bool) -> PageRead:
        """Rows read as rows (not replayed) handed over as replay would: the page and its events."""
        handler = cls()
        for shown in shown_events(rows):
            await handler(event=shown)
        oldest, newest = (rows[0].id, rows[-1].id) if rows else (None, None)
        return ReplayedPage(oldest, newest, more, len(handler.events)), handler.events


def _joined(upper: ReplayedPage, lower: ReplayedPage, *, more: bool) -> ReplayedPage:
    """Two adjacent pages read as one: ``upper`` holds the older rows, ``lower`` the newer.

    ``more`` is the further one's: whether rows lie beyond it, the way read.
    """
    return ReplayedPage(
        upper.oldest_id if upper.oldest_id is not None else lower.oldest_id,
        lower.newest_id if lower.newest_id is not None else upper.newest_id,
        more,
        upper.replayed + lower.replayed,
    )


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


async def _line_rows_after(
    store: SessionManager, spans: list[tuple[int, int]], after: int, limit: int
) -> tuple[list[StoredMessage], bool]:
    """The oldest ``limit`` rows on the line newer than ``after``, and whether more follow.

    :func:`_line_rows` the other way: abandoned spans are jumped over.
    """
    line: list[StoredMessage] = []
    cursor = after
    while len(line) < limit:
        # The rows just above are an abandoned span: go over it.
        cursor = next((last for first, last in spans if first <= cursor + 1 <= last), cursor)
        rows = await store.load_after(cursor, limit=limit)
        line += [r for r in rows if _on_line(r, spans)]
        if len(rows) < limit:
            return line[:limit], len(line) > limit  # nothing newer is stored
        cursor = rows[-1].id
    return line[:limit], True
