"""Replay: stored events handed to a handler, a page at a time, the newest page first.

The seed's ``initialize(replay_handler=...)`` hands each stored event to
``await replay_handler(event=event)``. The TUI draws its transcript through
the same kind of handler, but a long session must not be read whole before
the first frame: :func:`replay` reads one page (the newest, or the one before
a row id) and calls the handler for each of its events, oldest first within
the page. The returned :class:`ReplayedPage` says where to ask for the page
before it.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from koroku_tui.events import Event, TurnErrorEvent

if TYPE_CHECKING:
    from koroku_tui.store.manager.pages import PagesMixin

__all__ = ["ReplayHandler", "ReplayedPage", "replay"]


class ReplayHandler(Protocol):
    """``async def handler(*, event)`` (a plain function is accepted too)."""

    def __call__(self, *, event: Event) -> Awaitable[None] | None: ...


@dataclass(frozen=True)
class ReplayedPage:
    """What one :func:`replay` call read: pass ``oldest_id`` as ``before`` for the page above."""

    oldest_id: int | None
    """The oldest row read (``None`` when the page was empty)."""
    newest_id: int | None
    """The newest row read: rows after it were stored once the page was read."""
    more: bool
    """True when rows older than ``oldest_id`` may exist."""
    replayed: int
    """Events handed to the handler (unreadable rows are skipped)."""


async def replay(
    store: PagesMixin,
    handler: ReplayHandler,
    *,
    before: int | None = None,
    after: int | None = None,
    limit: int | None = None,
    errors: Callable[[TurnErrorEvent], Awaitable[None]] | None = None,
) -> ReplayedPage:
    """Hand the current session's stored events to ``handler(event=...)``, one page.

    The page is the newest ``limit`` rows older than ``before`` (all rows
    when ``limit`` is ``None``), keeping only those newer than ``after``;
    its events go to the handler oldest first. Everything stored is
    replayed, including what compaction hid from the model, so the user sees
    the conversation as it happened. Rewind rows are not events (they never
    reach the model) and are skipped like unreadable rows; a reader that
    marks them reads ``load_all`` (``StoredMessage.rewind``). A turn's error
    row goes to ``errors`` when given (in its place among the events), else
    it is skipped too: the seed's handlers receive events only.
    """
    for name, value in (("before", before), ("after", after), ("limit", limit)):
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**63
        ):
            raise ValueError(f"replay's {name} must be a whole number from 0, not {value!r}")
    rows = await store.load_all(before_id=before, limit=limit)
    oldest = rows[0].id if rows else None
    newest = rows[-1].id if rows else None
    more = bool(rows) and limit is not None and len(rows) == limit
    replayed = 0
    for row in rows:
        if after is not None and row.id <= after:
            continue
        if row.turn_error is not None and errors is not None:
            await errors(row.turn_error)
            replayed += 1
            continue
        if row.event is None:
            continue
        result = handler(event=row.event)
        if inspect.isawaitable(result):
            await result
        replayed += 1
    return ReplayedPage(oldest, newest, more, replayed)
