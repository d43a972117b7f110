"""Which stored rows the transcript's mounted blocks show, so far-away pages can go and come back.

The transcript mounts a window of the session, not all of it: a page read
from the store is tagged with the ids of the rows it was read from
(``RowSpan``); blocks of the running conversation (streamed, sent, notices)
carry no tag: they are the *live* blocks at the end. ``Edges`` says where
the next page up and down is read from. Pages are unmounted whole, so a page
read again shows each of its messages exactly once.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from textual.containers import VerticalScroll
from textual.widget import AwaitMount, Widget

from koroku_tui.ui.main.laid_out import ScrollLaidOutOnce

__all__ = ["MAX_BLOCKS", "Edges", "Group", "PagedColumn", "RowSpan", "groups"]

FIRST = "-first"
"""The class of the first mounted block (the stylesheet takes its top margin away).

Not ``:first-child``: Textual restyles every child that an order rule could
match at each mount, so that rule restyled all 300 mounted blocks for each
frame's worth of a big step's tool rows."""

MAX_BLOCKS = 300
"""Mounted blocks kept at most (pages further away are unmounted); a Markdown
block is ~10 widgets, so the DOM stays small."""


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


class PagedColumn(VerticalScroll, ScrollLaidOutOnce):
    """A scrolling column of blocks that mounts pages of stored rows and unmounts far ones.

    The transcript's base: it knows pages and the view, not what a block is.
    """

    def __init__(self, *blocks: Widget, **kwargs: Any) -> None:
        super().__init__(*blocks, **kwargs)
        self._scrolled_by_user = False
        self.edges = Edges()
        self._spans: dict[Widget, RowSpan] = {}
        self._held: tuple[Widget, int] | None = None
        """The block read and its place in the view, to keep there across a page change."""
        self._first: Widget | None = None
        """The block marked :data:`FIRST`."""

    def on_mount(self) -> None:
        self.mark_first()

    def mount(
        self,
        *widgets: Widget,
        before: int | str | Widget | None = None,
        after: int | str | Widget | None = None,
    ) -> AwaitMount:
        """Mount as Textual does (``mount_all`` comes here too), then mark the first block."""
        mounted = super().mount(*widgets, before=before, after=after)
        self.mark_first()  # the new widgets are children already
        return mounted

    def mark_first(self) -> None:
        """Give :data:`FIRST` to the first block, and take it from the one that had it."""
        first = self.children[0] if self.children else None
        if first is self._first:
            return
        if self._first is not None:
            self._first.remove_class(FIRST)
        if first is not None:
            first.add_class(FIRST)
        self._first = first

    def over_bound(self) -> bool:
        """True when more than ``MAX_BLOCKS`` blocks are mounted."""
        return len(self.children) > MAX_BLOCKS

    def forget_pages(self) -> None:
        """Every block is gone: no page is mounted, nothing was read yet."""
        self._spans.clear()
        self.edges = Edges()

    def tag(self, span: RowSpan, blocks: list[Widget] | None = None) -> None:
        """Say that ``blocks`` (all mounted ones by default) show the rows of ``span``."""
        for block in self.children if blocks is None else blocks:
            self._spans[block] = span

    def live_blocks(self) -> list[Widget]:
        """The blocks no page was read for: the running conversation's, at the end."""
        return [block for block in self.children if block not in self._spans]

    async def append_page(self, blocks: list[Widget], span: RowSpan) -> None:
        """Mount a page read from the store at the end (below what is mounted)."""
        self.tag(span, blocks)
        if blocks:
            await self.mount_all(blocks)
        self._hold_after_layout()

    async def prepend_page(self, blocks: list[Widget], span: RowSpan) -> None:
        """Mount a page read from the store above the first block, what is read staying put."""
        self.tag(span, blocks)
        if not blocks:
            return
        if not self.children:
            await self.mount_all(blocks)
            return
        self._held = self._on_screen() if self._scrolled_by_user else None
        await self.mount_all(blocks, before=self.children[0])
        self._hold_after_layout()

    async def drop_below(self, incoming: int, *, keep_live: bool) -> bool:
        """Unmount whole pages at the end, out of view, until ``incoming`` more blocks fit.

        The live blocks go too (the newest page is read again when the view
        comes back down), unless ``keep_live``: a turn is still writing there.
        False when they stand in the way: ``incoming`` blocks do not fit.
        """
        bottom = self.scroll_y + self.scrollable_content_region.height
        runs = groups(list(self.children), self._spans)
        count, dropped = len(self.children), list[Widget]()
        topmost: RowSpan | None = None
        while len(runs) > 1 and count + incoming > MAX_BLOCKS:
            span, blocks = runs[-1]
            if span is None and keep_live:
                return False  # the live blocks are last: nothing could go, nothing fits
            if blocks[0].virtual_region.y < bottom:
                break  # on screen: it stays
            runs.pop()
            dropped += blocks
            count -= len(blocks)
            topmost = span
        if not dropped:
            return True
        await self._unmount(dropped)
        edges = self.edges
        edges.after = edges.live_after if topmost is None else topmost.first - 1
        VerticalScroll.anchor(self, False)  # nothing below to follow until the live end is back
        return True

    async def drop_above(self, incoming: int) -> None:
        """Unmount whole pages at the top, out of view, until ``incoming`` more blocks fit.

        What is read stays in place: the view moves up by what went.
        """
        top = self.scroll_y
        runs = groups(list(self.children), self._spans)
        count, dropped = len(self.children), list[Widget]()
        lowest: RowSpan | None = None
        while len(runs) > 1 and count + incoming > MAX_BLOCKS:
            span, blocks = runs[0]
            if span is None or blocks[-1].virtual_region.bottom > top:
                break  # live blocks come back only with the newest page; or on screen
            runs.pop(0)
            dropped += blocks
            count -= len(blocks)
            lowest = span
        if lowest is None:
            return
        following = not self._scrolled_by_user and not self.edges.away
        self._held = None if following else self._on_screen(after=dropped[-1])
        await self._unmount(dropped)
        self.edges.before, self.edges.more_before = lowest.last + 1, True

    async def _unmount(self, blocks: list[Widget]) -> None:
        await self.remove_children(blocks)
        self.mark_first()
        for block in blocks:
            self._spans.pop(block, None)

    def _on_screen(self, after: Widget | None = None) -> tuple[Widget, int] | None:
        """The first block in view (below ``after``) and its distance from the view's top."""
        top, blocks = self.scroll_y, list(self.children)
        start = 0 if after is None else blocks.index(after) + 1
        for block in blocks[start:]:
            region = block.virtual_region
            if region.bottom > top:
                return block, region.y - round(top)
        return None

    def _hold_after_layout(self) -> None:
        """Once the blocks just mounted or unmounted are laid out, put back the one read."""
        held, self._held = self._held, None
        if held is not None:
            self.call_after_refresh(self._hold, *held)

    def _hold(self, block: Widget, offset: int) -> None:
        """After a layout: scroll so that ``block`` is ``offset`` lines below the view's top."""
        if block.is_attached:
            y = block.virtual_region.y - offset
            if y != round(self.scroll_y):
                self.scroll_to(y=y, animate=False, immediate=True, release_anchor=False)

    async def laid_out(self) -> None:
        """Wait until the page changes are laid out (and held in place); workers only.

        A handler of this widget's screen must not wait here: the wait ends
        in that screen's own task.
        """
        done = asyncio.Event()
        self.call_after_refresh(done.set)
        await done.wait()
