"""The conversation as a scrolling column of blocks, one per entry.

Only a bounded number of blocks is mounted (``MAX_BLOCKS``): replay mounts the
tail of the stored history; scrolling to the top mounts the page above and
unmounts pages far below, scrolling back down mounts them again and unmounts
pages far above (``ui.main.mounted`` keeps which rows each page shows). The
view is anchored to the bottom so it follows new output until the user
scrolls up; new output while the newest messages are unmounted first brings
them back (``back_to_live``): nothing is ever streamed into an old page.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from textual.containers import VerticalScroll
from textual.message import Message
from textual.widget import Widget

from koroku_tui.agent.wire.finish import stored_cut
from koroku_tui.events import CompactionEvent, Event, RewindEvent
from koroku_tui.events.views import Said, ToolResult, part_views
from koroku_tui.ui.main.blocks import (
    AnswerBlock,
    CompactionBlock,
    ErrorBlock,
    NoticeBlock,
    ThoughtBlock,
    ToolRow,
    UserBlock,
)
from koroku_tui.ui.main.mounted import Edges, RowSpan, groups
from koroku_tui.ui.main.recall_row import new_tool_row

__all__ = ["MAX_BLOCKS", "Shown", "Transcript", "blocks_for_event", "rewind_marker"]

MAX_BLOCKS = 300
"""Mounted blocks kept at most (pages further away are unmounted); a Markdown
block is ~10 widgets, so the DOM stays small."""

Shown = Event | RewindEvent
"""What a stored row shows as: an event, or a rewind's marker line."""


def rewind_marker(rewind: RewindEvent) -> str:
    """The transcript's one line where a rewind took the conversation back."""
    return (
        f"↶ Rewound to before message #{rewind.before_message_id}: what followed it is "
        "kept in the history (ctrl+r), no longer sent to the model."
    )


def tool_row(result: ToolResult) -> ToolRow:
    """The finished row of a stored tool result (arguments unknown show as none)."""
    row = new_tool_row(result.name, dict(result.args or {}))
    outcome = result.outcome
    row.finish(result.failed, outcome if isinstance(outcome, str) else None)
    return row


def blocks_for_event(event: Shown) -> list[Widget]:
    """The finished blocks that show a stored event (no streaming state)."""
    if isinstance(event, RewindEvent):
        return [NoticeBlock(rewind_marker(event), rewind=True)]
    if isinstance(event, CompactionEvent):
        return [CompactionBlock(event.summary)]
    blocks: list[Widget] = []
    views = list(part_views(event))
    if event.role == "user":
        for view in views:
            if isinstance(view, Said) and not view.thought and view.text:
                blocks.append(UserBlock(view.text))
            elif isinstance(view, ToolResult):
                # Rows come from the responses (name, args and outcome in one place),
                # so a replayed turn looks exactly like a finished live one.
                blocks.append(tool_row(view))
        return blocks
    thought = "".join(v.text for v in views if isinstance(v, Said) and v.thought)
    if thought:
        block = ThoughtBlock(thought)
        block.finish()
        blocks.append(block)
    if event.text:
        blocks.append(AnswerBlock(event.text))
    cut = stored_cut(event)
    if cut is not None:
        blocks.append(NoticeBlock(cut.message, cut=True))
    return blocks


class Transcript(VerticalScroll):
    """Scrolling transcript; the App calls these methods from its message handlers."""

    class ReachedTop(Message):
        """The user scrolled up to the first mounted block: older ones may be loaded."""

    class ReachedBottom(Message):
        """The user scrolled down to the last mounted block, and newer ones are not mounted."""

    def __init__(self, *blocks: Widget, **kwargs: Any) -> None:
        super().__init__(*blocks, **kwargs)
        self._answer: AnswerBlock | None = None
        self._thought: ThoughtBlock | None = None
        self._pending: list[ToolRow] = []
        self.sent: UserBlock | None = None
        """The message of the turn now running, until the turn ends."""
        self._sized = False
        self._scrolled_by_user = False
        self.edges = Edges()
        self._spans: dict[Widget, RowSpan] = {}
        self.back_to_live: Callable[[], Awaitable[None]] | None = None
        """Mounts the newest page again when output comes while it is unmounted."""
        self._held: tuple[Widget, int] | None = None
        """The block read and its place in the view, to keep there across a page change."""

    def on_resize(self) -> None:
        # Anchor once the size is known: anchored before the first layout,
        # Textual scrolls by a zero-height viewport and the first frame shows
        # the view one screen too far down (blank).
        if not self._sized:
            self._sized = True
            self.anchor()

    def anchor(self, anchor: bool = True) -> None:
        super().anchor(anchor)
        self._scrolled_by_user = False

    def release_anchor(self) -> None:
        # Textual calls this when the user scrolls (wheel, keys, scrollbar).
        super().release_anchor()
        self._scrolled_by_user = True

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if new_value >= self.max_scroll_y:
            if not self.edges.away:
                self._scrolled_by_user = False  # back at the bottom: following again
                if not self.is_anchored:
                    self.anchor()
            elif new_value > old_value:
                self.post_message(self.ReachedBottom())
        elif self._scrolled_by_user and new_value <= 0 < old_value:
            self.post_message(self.ReachedTop())

    # -- pages -----------------------------------------------------------

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

    async def clear(self) -> None:
        """Remove every block (new or switched session, or back to the newest page)."""
        await self.end_step()
        self._pending.clear()
        await self.remove_children()
        self._spans.clear()
        self.edges = Edges()
        self.anchor()

    # -- building --------------------------------------------------------

    async def add(self, *blocks: Widget) -> None:
        """Mount live blocks at the end (the newest page first, if it was unmounted).

        Past the bound, pages far above go.
        """
        if self.edges.away and self.back_to_live is not None:
            await self.back_to_live()
        if blocks:
            await self.mount_all(blocks)
        if len(self.children) > MAX_BLOCKS:
            await self.drop_above(0)
            self._hold_after_layout()

    # -- live turn -------------------------------------------------------

    async def add_user(self, text: str) -> None:
        self.sent = UserBlock(text)
        await self.add(self.sent)
        self.anchor()  # sending a message means the user wants to see the answer

    async def withdraw_sent(self) -> None:
        """Remove the block of the message just sent: it was not stored (back in the prompt)."""
        sent, self.sent = self.sent, None
        if sent is not None and sent.is_attached:
            await sent.remove()

    async def add_before_sent(self, *blocks: Widget) -> None:
        """Mount blocks above the message just sent (what was stored before it), else at the end."""
        sent = self.sent
        if sent is None or not sent.is_attached or self.edges.away:
            await self.add(*blocks)
            return
        await self.mount_all(blocks, before=sent)
        await self.add()  # drop pages past the bound

    async def add_text(self, fragment: str) -> None:
        if self._answer is None:
            self._finish_thought()
            self._answer = AnswerBlock()
            await self.add(self._answer)
        await self._answer.write(fragment)

    async def add_thought(self, fragment: str) -> None:
        if self._thought is None:
            self._thought = ThoughtBlock()
            await self.add(self._thought)
        self._thought.append(fragment)

    async def end_step(self) -> None:
        """Close the streamed blocks of a model step."""
        self._finish_thought()
        answer, self._answer = self._answer, None
        if answer is not None:
            await answer.finish()

    def _finish_thought(self) -> None:
        thought, self._thought = self._thought, None
        if thought is not None:
            thought.finish()

    async def tool_started(self, name: str, args: dict[str, Any], call_id: str | None) -> None:
        await self.end_step()
        row = new_tool_row(name, args, call_id)
        self._pending.append(row)
        await self.add(row)

    def tool_finished(
        self, name: str, call_id: str | None, failed: bool, answer: str | None = None
    ) -> None:
        """Mark the matching pending row (by call id, else the oldest of that name).

        ``answer`` is the tool's output or error, for rows that show it.
        """
        for row in self._pending:
            if (call_id is not None and row.call_id == call_id) or (
                call_id is None and row.tool_name == name
            ):
                row.finish(failed, answer)
                self._pending.remove(row)
                return

    async def add_compaction(self, summary: str) -> None:
        await self.add(CompactionBlock(summary))

    async def add_error(self, message: str) -> None:
        await self.end_step()
        await self.add(ErrorBlock(message))

    async def add_notice(self, message: str) -> None:
        await self.add(NoticeBlock(message))

    async def add_cut_notice(self, message: str) -> None:
        """Say under the answer just shown that Gemini cut it (token limit, safety filter...)."""
        await self.add(NoticeBlock(message, cut=True))
