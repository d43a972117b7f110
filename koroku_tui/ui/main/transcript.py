"""The conversation as a scrolling column of blocks, one per entry.

Only a bounded number of blocks is mounted: replay mounts the
tail of the stored history; scrolling to the top mounts the page above and
unmounts pages far below, scrolling back down mounts them again and unmounts
pages far above (``ui.main.mounted.PagedColumn``, at most ``MAX_BLOCKS``). The
view is anchored to the bottom so it follows new output until the user
scrolls up; new output while the newest messages are unmounted first brings
them back (``back_to_live``): nothing is ever streamed into an old page.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable, Sequence
from itertools import takewhile
from typing import Any

from textual.message import Message
from textual.widget import Widget

from koroku_tui.agent.tools.spec import ToolLookup
from koroku_tui.agent.wire.finish import stored_cut
from koroku_tui.events import CompactionEvent, Event, RewindEvent, SessionEvent, TurnErrorEvent
from koroku_tui.events.views import Called, Said, ToolResult, part_views, tool_results
from koroku_tui.ui.main.attachment_row import AttachmentRow
from koroku_tui.ui.main.blocks import (
    AnswerBlock,
    CompactionBlock,
    ErrorBlock,
    NoticeBlock,
    ThoughtBlock,
    UserBlock,
)
from koroku_tui.ui.main.call_list import ROWS_AS_WIDGETS, CallList, call_blocks, call_rows
from koroku_tui.ui.main.call_state import CallState
from koroku_tui.ui.main.mounted import PagedColumn

__all__ = [
    "Shown",
    "Transcript",
    "blocks_for_event",
    "blocks_for_events",
    "ends_in_calls",
    "rewind_marker",
]

LAST_WORDS_WAIT = 1.0
"""Seconds ``last_words_drawn`` waits at most (a huge code block's last step: ~1 s here)."""

Shown = Event | RewindEvent | TurnErrorEvent
"""What a stored row shows as: an event, a rewind's marker line, or a turn's error."""


def rewind_marker(rewind: RewindEvent) -> str:
    """The transcript's one line where a rewind took the conversation back."""
    return (
        f"↶ Rewound to before message #{rewind.before_message_id}: what followed it is "
        "kept in the history (ctrl+r), no longer sent to the model."
    )


def finished_rows(results: list[ToolResult], tools: ToolLookup) -> list[Widget]:
    """The finished rows of stored tool results (arguments unknown show as none)."""
    rows = call_rows([(tools(r.name), dict(r.args or {}), None) for r in results])
    for row, result in zip(rows, results, strict=True):
        outcome = result.outcome
        # Koroku's tools answer text; a response written otherwise opens on its JSON.
        answer = outcome if isinstance(outcome, str) else json.dumps(outcome, default=str, indent=1)
        row.finish(result.failed, answer)
    return call_blocks(rows)


def interrupted_rows(event: SessionEvent, tools: ToolLookup) -> list[Widget]:
    """Rows for the calls of a model step that never got their responses."""
    called = [view for view in part_views(event) if isinstance(view, Called)]
    rows = call_rows([(tools(view.name), dict(view.args), None) for view in called])
    for row in rows:
        row.interrupt()
    return call_blocks(rows)


def ends_in_calls(events: Sequence[Shown]) -> bool:
    """True when the last event is a model step with calls (their answers come next, if any)."""
    last = events[-1] if events else None
    return isinstance(last, SessionEvent) and last.role == "model" and bool(last.function_calls)


def _unanswered(event: Shown, following: Shown | None) -> bool:
    """True for a model step with calls that the next row does not answer."""
    if not (isinstance(event, SessionEvent) and event.role == "model" and event.function_calls):
        return False
    # Responses are stored together, right after their step, or not at all.
    return not (isinstance(following, SessionEvent) and tool_results(following))


def blocks_for_events(
    events: Sequence[Shown],
    tools: ToolLookup,
    *,
    at_end: bool = False,
    then: Shown | None = None,
) -> list[Widget]:
    """The blocks of stored rows in order, calls never answered shown "interrupted".

    A crash (or a kill) between a call and its response leaves the call
    stored alone. ``at_end``: ``events`` end where the session ends, so
    calls in the last step are unanswered too (else their responses may
    follow in rows not given here). ``tools`` gives each call's spec (its
    row). ``then``: what is shown right after
    ``events`` (the next page's first event), when known: the last step's
    calls are unanswered unless it answers them.
    """
    blocks: list[Widget] = []
    for index, event in enumerate(events):
        blocks += blocks_for_event(event, tools)
        following = events[index + 1] if index + 1 < len(events) else then
        if (following is not None or at_end) and _unanswered(event, following):
            assert isinstance(event, SessionEvent)
            blocks += interrupted_rows(event, tools)
    return blocks


def blocks_for_event(event: Shown, tools: ToolLookup) -> list[Widget]:
    """The finished blocks that show a stored event (no streaming state)."""
    if isinstance(event, RewindEvent):
        return [NoticeBlock(rewind_marker(event), rewind=True)]
    if isinstance(event, TurnErrorEvent):
        return [ErrorBlock(event.message)]
    if isinstance(event, CompactionEvent):
        return [CompactionBlock(event.summary)]
    blocks: list[Widget] = []
    views = list(part_views(event))
    if event.role == "user":
        # Rows come from the responses (name, args and outcome in one place),
        # so a replayed turn looks exactly like a finished live one.
        results: list[ToolResult] = []  # a run of them, shown together
        for view in [*views, None]:
            if isinstance(view, ToolResult):
                results.append(view)
                continue
            if results:
                blocks += finished_rows(results, tools)
                results = []
            if isinstance(view, Said) and not view.thought and view.text:
                file = view.file
                blocks.append(UserBlock(view.text) if file is None else AttachmentRow(file))
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


class Transcript(PagedColumn):
    """Scrolling transcript; the App calls these methods from its message handlers."""

    class ReachedTop(Message):
        """The user scrolled up to the first mounted block: older ones may be loaded."""

    class ReachedBottom(Message):
        """The user scrolled down to the last mounted block, and newer ones are not mounted."""

    def __init__(self, *blocks: Widget, tools: ToolLookup, **kwargs: Any) -> None:
        super().__init__(*blocks, **kwargs)
        self.tools = tools
        """Each call's spec by the tool's name: how its row is drawn."""
        self._answer: AnswerBlock | None = None
        self._ended: AnswerBlock | None = None
        """The answer the last ``end_step`` closed (``last_words_drawn``)."""
        self._thought: ThoughtBlock | None = None
        self._pending: list[CallState] = []
        self._step_calls = 0
        """How many calls the model step now running made (``expect_calls``)."""
        self._step_list: CallList | None = None
        """The list of that step's calls, once its first calls came, if they are many."""
        self.sent: UserBlock | None = None
        """The message of the turn now running, until the turn ends."""
        self._sized = False
        self.back_to_live: Callable[[], Awaitable[None]] | None = None
        """Mounts the newest page again when output comes while it is unmounted."""

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

    def bring_into_view(self, block: Widget) -> None:
        """Scroll ``block`` to the middle of the view as the user would: following the end stops."""
        PagedColumn.anchor(self, False)
        self._scrolled_by_user = True
        self.scroll_to_center(block, animate=False, immediate=True)

    # -- pages -----------------------------------------------------------

    async def clear(self) -> None:
        """Remove every block (new or switched session, or back to the newest page)."""
        await self.end_step()
        self._pending.clear()
        self.expect_calls(0)
        await self.remove_children()
        self.mark_first()
        self.forget_pages()
        self.anchor()

    # -- building --------------------------------------------------------

    async def add(self, *blocks: Widget) -> None:
        """Mount live blocks at the end (the newest page first, if it was unmounted).

        Past the bound, pages far above go. Once the app is quitting nothing
        is mounted (Textual would raise): what a turn shows is stored already.
        """
        if not self.is_attached:
            return
        if self.edges.away and self.back_to_live is not None:
            await self.back_to_live()
        if blocks:
            await self.mount_all(blocks)
        if self.over_bound():
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
            after = list(self.children)
            after = after[after.index(sent) + 1 :]
            files = list(takewhile(lambda block: isinstance(block, AttachmentRow), after))
            await self.remove_children([sent, *files])  # its @files' rows go with it
            self.mark_first()

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
            self._ended = answer
            await answer.finish()

    async def last_words_drawn(self) -> None:
        """Return once the answer the last ``end_step`` closed has drawn its last words.

        A long answer's last step is planned in a thread; what waits for its end
        to show waits at most :data:`LAST_WORDS_WAIT` s.
        """
        answer = self._ended
        if answer is None or not answer.is_attached:
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(answer.ended.wait(), LAST_WORDS_WAIT)

    def _finish_thought(self) -> None:
        thought, self._thought = self._thought, None
        if thought is not None:
            thought.finish()

    async def tool_started(self, name: str, args: dict[str, Any], call_id: str | None) -> None:
        await self.tools_started([(name, args, call_id)])

    async def tools_started(self, calls: list[tuple[str, dict[str, Any], str | None]]) -> None:
        """A row per call (name, arguments, id), mounted at once, each pending its result."""
        await self.end_step()
        # A step of a thousand calls is one widget that draws the rows in view
        # (``call_list.CallList``): a thousand widgets held the keys for seconds.
        made = [(self.tools(name), args, call_id) for name, args, call_id in calls]
        step_list = self._step_list
        listed = step_list if step_list is not None and step_list.is_attached else None
        rows = call_rows(made, listed=listed is not None or self._step_calls > ROWS_AS_WIDGETS)
        self._pending.extend(rows)
        if listed is not None:  # the rest of the step's calls (they came in two batches)
            listed.extend(rows)
            return
        blocks = call_blocks(rows)
        if blocks and isinstance(blocks[0], CallList):
            self._step_list = blocks[0]
        await self.add(*blocks)

    def expect_calls(self, count: int) -> None:
        """The model step just received made ``count`` calls: their rows come next."""
        self._step_calls, self._step_list = count, None

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
