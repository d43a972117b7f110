"""Replay's types: the handler stored events are handed to, and the page one call read.

The seed's ``initialize(replay_handler=...)`` hands each stored event to
``await replay_handler(event=event)``. The TUI draws its transcript through
the same kind of handler, but a long session must not be read whole before
the first frame: ``SessionManager.replay`` (``store/manager/pages.py``) reads
one page (the newest, or the one before a row id) and calls the handler for
each of its events, oldest first within the page. The returned
:class:`ReplayedPage` says where to ask for the page before it.
"""

from __future__ import annotations

from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Protocol

from koroku_tui.events import Event

__all__ = ["ReplayHandler", "ReplayedPage"]


class ReplayHandler(Protocol):
    """``async def handler(*, event)`` (a plain function is accepted too)."""

    def __call__(self, *, event: Event) -> Awaitable[None] | None: ...


@dataclass(frozen=True)
class ReplayedPage:
    """What one ``replay`` call read: pass ``oldest_id`` as ``before`` for the page above."""

    oldest_id: int | None
    """The oldest row read (``None`` when the page was empty)."""
    newest_id: int | None
    """The newest row read: rows after it were stored once the page was read."""
    more: bool
    """True when rows older than ``oldest_id`` may exist."""
    replayed: int
    """Events handed to the handler (unreadable rows are skipped)."""
