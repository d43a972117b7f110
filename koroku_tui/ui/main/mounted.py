"""Which stored rows the transcript's mounted blocks show, so far-away pages can go and come back.

The transcript mounts a window of the session, not all of it: a page read
from the store is tagged with the ids of the rows it was read from
(``RowSpan``); blocks of the running conversation (streamed, sent, notices)
carry no tag: they are the *live* blocks at the end. ``Edges`` says where
the next page up and down is read from. Pages are unmounted whole, so a page
read again shows each of its messages exactly once.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.widget import Widget

__all__ = ["Edges", "Group", "RowSpan", "groups"]


@dataclass(eq=False)
class RowSpan:
    """The stored rows a page of blocks was read from: ids ``first`` to ``last``."""

    first: int
    last: int


@dataclass
class Edges:
    """Where the mounted window ends, as the row ids the next pages are read from."""

    before: int | None = None
    """Older rows are those with an id below this (``None``: none were read yet)."""
    more_before: bool = False
    """True when rows older than ``before`` may exist."""
    after: int | None = None
    """Newer rows are those after this id; ``None`` while the live end is mounted."""
    live_after: int = 0
    """At the live end: the newest row the pages hold (live blocks show what follows)."""

    @property
    def away(self) -> bool:
        """True when the newest messages are not mounted (the view is back in the history)."""
        return self.after is not None


Group = tuple[RowSpan | None, list[Widget]]
"""Consecutive blocks of one page (``None``: the live blocks), in screen order."""


def groups(blocks: list[Widget], spans: dict[Widget, RowSpan]) -> list[Group]:
    """``blocks`` cut into runs that come and go together: one per page, one for live ones."""
    runs: list[Group] = []
    for block in blocks:
        span = spans.get(block)
        if runs and runs[-1][0] is span:
            runs[-1][1].append(block)
        else:
            runs.append((span, [block]))
    return runs
