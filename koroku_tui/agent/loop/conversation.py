"""The model's context as the agent holds it: events in memory, Contents ready to send.

The store keeps the context in memory (``load_messages`` is a list copy, no
SQL), so a step never re-reads the database. Three things would still grow
with the history on every step, and are kept out of it:

* Converting events to ``types.Content``: each event is converted once and
  the Content cached by event object. A model reply is cached as the very
  Content the stream produced, so it goes back byte for byte as it came.
* Converting Contents to the dicts the API receives (``wire/body.py``): each
  event's wire form is built once, from its cached Content, and kept next to
  it; a request body is those dicts in a list.
* The repair pass: everything before the current turn was repaired on an
  earlier step and is reused (see :meth:`Conversation.request_contents`).
* The budget: measured from the last reply's usage, read near the end.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import threading
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

from google.genai import types

from koroku_tui.agent.context.budget import BudgetPolicy, ContextBudget, context_budget
from koroku_tui.agent.context.repair import RepairReport, repair_history
from koroku_tui.agent.loop import full_collections
from koroku_tui.agent.protocols import History
from koroku_tui.agent.wire.body import WireContent
from koroku_tui.agent.wire.image_room import fit_images, holds_inline_data
from koroku_tui.events import CompactionEvent, Event, SessionEvent, TextPart
from koroku_tui.events.turns import current_turn_opener, opens_turn
from koroku_tui.store.errors import BusyWatcher
from koroku_tui.store.records import StoredMessage

__all__ = ["Conversation", "Told", "finish_despite_cancel"]

logger = logging.getLogger(__name__)

T = TypeVar("T")

_PRUNE_SLACK = 64

PREPARE_SLICE = 100
"""Parts of one event converted between two looks at ``prepare``'s stop."""

#: Closes a repaired prefix: a real user message opens a turn, so the repair
#: pairs nothing across it and signs nothing before it.
_TURN_BOUNDARY = SessionEvent(role="user", parts=[TextPart(text="")])


@dataclasses.dataclass
class _RepairedPrefix:
    """``events[:size]`` as already repaired and converted, held by identity."""

    size: int = 0
    first: Event | None = None
    last: Event | None = None
    contents: list[types.Content] = dataclasses.field(default_factory=list)
    wires: list[WireContent] = dataclasses.field(default_factory=list)
    """The wire forms of ``contents`` (empty when the conversation has no wire form)."""
    images: list[int] = dataclasses.field(default_factory=list)
    """Indices of the ``wires`` holding inline data (images), found once per prefix."""

    def covers(self, events: Sequence[Event], end: int) -> bool:
        """True when this prefix is the start of ``events[:end]`` (same event objects)."""
        if self.size == 0:
            return True
        return self.size <= end and events[0] is self.first and events[self.size - 1] is self.last


Told = Callable[[], Awaitable[None]]
"""Tells the hooks of what was just stored (see ``Conversation.save``)."""


async def finish_despite_cancel(work: Awaitable[T]) -> T:
    """Run ``work`` to the end even if the caller is cancelled meanwhile, then re-raise.

    Used for the writes that make the history valid: a cancel landing between
    storing a model step and storing its responses would leave calls unanswered.
    """
    task = asyncio.ensure_future(work)
    cancelled = False
    while True:
        try:
            result = await asyncio.shield(task)
            break
        except asyncio.CancelledError:
            if task.done():
                raise  # the work itself was cancelled (the loop is shutting down)
            cancelled = True
        except BaseException as exc:
            if not cancelled:
                raise
            # The caller asked to be cancelled: honour that (task groups and
            # timeouts count on it) and keep the write's failure as the cause.
            raise asyncio.CancelledError() from exc
    if cancelled:
        raise asyncio.CancelledError()
    return result


class Conversation:
    """The in-memory context over a :class:`History`, with a Content cache."""

    def __init__(
        self,
        history: History,
        redact: Callable[[types.Content], types.Content] | None = None,
        wire: Callable[[types.Content], WireContent] | None = None,
    ) -> None:
        self.history = history
        self._redact = redact
        """Applied to every event converted from the store (rows older than redaction)."""
        self._wire = wire
        """Turns a Content into the dict the API receives (``WireForm.content``)."""
        self.events: list[Event] = []
        """The model's context as of the last reload or write (oldest first)."""
        # The event is kept next to its Content so that a recycled id() of a
        # dropped event can never return a stale Content.
        self._contents: dict[int, tuple[Event, types.Content]] = {}
        self._wires: dict[int, tuple[Event, WireContent]] = {}
        self._prefix = _RepairedPrefix()
        self.last_row_id: int | None = None
        """The row id of the newest event this conversation stored (a step's calls name it)."""
        self.in_turn = False
        """True between ``begin_turn`` and ``end_turn``: this process is the session's writer."""

    async def reload(self) -> None:
        """Take the context from the store again (cheap: it is served from memory).

        Picks up changes made through the store since the last step, such as
        a session switch, a clear or a compaction.
        """
        self.events = await self.history.load_messages()
        self._prune()

    async def begin_turn(
        self,
        event: Event | None,
        content: types.Content | None,
        busy: BusyWatcher | None = None,
    ) -> None:
        """Become the session's writer, storing ``event`` (a user message) in the same step.

        The context is then re-read: rows another process stored before the
        turn began come before ``event``. ``busy`` hears of each attempt that
        found another process's turn on the session.
        """
        # Marked first: whatever interrupts the start (a cancel while waiting
        # for another window, a failure), end_turn then gives back what was
        # taken. The store finishes each attempt it began, so a cancel never
        # leaves half a lease, and stops the wait between attempts at once.
        if not self.in_turn:
            full_collections.hold()  # no 15-35 ms full collection mid-turn
        self.in_turn = True
        try:
            await self.history.begin_turn(event, busy=busy)
        except BaseException:
            await self.end_turn()
            raise
        if event is not None and content is not None:
            self._contents[id(event)] = (event, content)
        await self.reload()

    async def end_turn(self) -> None:
        """Stop being the session's writer (safe to call when not one)."""
        if self.in_turn:
            full_collections.release()
        self.in_turn = False
        await finish_despite_cancel(self.history.end_turn())

    async def catch_up(self) -> list[StoredMessage]:
        """Take in what other processes stored since the last look; returns it."""
        found = await self.history.catch_up()
        await self.reload()
        return found

    async def save(
        self, *items: tuple[Event, types.Content | None], then: Told | None = None
    ) -> None:
        """Store events in order, each with the Content it came from (if any), then ``then()``.

        A cancel arriving meanwhile waits for every write to finish and then
        propagates, so a group of writes is never split; ``then()`` (telling
        the hooks what was stored) runs before it goes on: the hooks hear of
        everything the history holds, and a UI shows what a restart shows.
        """
        try:
            await finish_despite_cancel(self._write(items))
        except asyncio.CancelledError:
            if then is not None and items and self.last is items[-1][0]:  # stored all the same
                await then()
            raise
        if then is not None:
            await then()

    async def _write(self, items: Sequence[tuple[Event, types.Content | None]]) -> None:
        for event, content in items:
            self.last_row_id = await self.history.add_message(event)
            if content is not None:
                self._contents[id(event)] = (event, content)
            if isinstance(event, SessionEvent):
                self.events.append(event)
            else:
                await self.reload()  # a compaction restarts the context

    @property
    def last(self) -> Event | None:
        """The newest event of the context."""
        return self.events[-1] if self.events else None

    def is_last_stored(self, content: types.Content) -> bool:
        """True when ``content`` is the newest stored event (e.g. responses run() returned)."""
        last = self.last
        if last is None:
            return False
        cached = self._contents.get(id(last))
        if cached is not None and cached[0] is last and cached[1] is content:
            return True
        return isinstance(last, SessionEvent) and last.to_content() == content

    def request_contents(self) -> list[types.Content]:
        """The context repaired for the API (see ``repair_history``), as Contents."""
        prefix, current = self._repaired()
        return [*prefix.contents, *(self.content_of(e) for e in current)]

    def request_wire(self) -> list[WireContent]:
        """The context repaired for the API, as the dicts the API receives.

        The stored events keep every image; the request carries the newest
        ones that fit Gemini's request size (``wire/image_room.py``).
        """
        prefix, current = self._repaired()
        start = len(prefix.wires)
        wires = [*prefix.wires, *(self.wire_of(e) for e in current)]
        holding = prefix.images + [
            start + i for i, wire in enumerate(wires[start:]) if holds_inline_data(wire)
        ]
        if not holding:
            return wires
        newest = start if current and opens_turn(current[0]) else None
        return fit_images(wires, holding, newest)

    def unconverted_parts(self) -> int:
        """Parts of the newest events not yet converted for a request (0: all are cached).

        New events come at the end: counting stops at the first one converted.
        """
        count = 0
        for event in reversed(self.events):
            cached = self._wires.get(id(event))
            if cached is not None and cached[0] is event:
                break
            count += len(getattr(event, "parts", None) or ())
        return count

    async def prepare_in_thread(self) -> None:
        """Convert a newly loaded context for requests, in a thread (see :meth:`prepare`).

        A cancel (quitting, mostly) stops the thread at its next event and
        waits for that: nothing converts beside the loop once this returns,
        and the exit is not held up by the rest of a long context.
        """
        stop = threading.Event()
        converting = asyncio.ensure_future(asyncio.to_thread(self.prepare, stop))
        try:
            await asyncio.shield(converting)
        except asyncio.CancelledError:
            stop.set()
            await finish_despite_cancel(converting)
            raise

    def prepare(self, stop: threading.Event) -> None:
        """Convert every event of the context now, as the next request will need them.

        Meant for a thread after a load or a session switch: the first request
        would otherwise convert them all on the spot, on the caller's event
        loop (3.4 s at 10,000 events here, the screen frozen meanwhile). Only
        the per-event caches are filled (the repair pass stays with the
        request: ~12 ms at 10,000 events). The caller holds the agent's lock,
        so nothing else uses them meanwhile, and sets ``stop`` to end this at
        the next event: a thread cut off at exit while inside pydantic-core
        aborted the process.
        """
        for event in list(self.events):
            if stop.is_set():
                return
            try:
                if self._wire is None:
                    self.content_of(event)
                else:
                    self._wire_by_slices(event, stop)
            except Exception:  # the request converts it again, and reports what fails
                continue

    def _wire_by_slices(self, event: Event, stop: threading.Event) -> None:
        """``wire_of(event)``, ``PREPARE_SLICE`` parts at a time until ``stop`` is set.

        One step of a thousand calls is one event: converted whole, a cancel
        (Escape) waited for all of it. A Content's wire form is its parts'
        forms in order, so the slices' parts joined are the whole one's.
        """
        content = self.content_of(event)
        parts = content.parts or []
        if len(parts) <= PREPARE_SLICE:
            self.wire_of(event)
            return
        assert self._wire is not None
        pieces: list[WireContent] = []
        for start in range(0, len(parts), PREPARE_SLICE):
            if stop.is_set():
                return  # left for the request, which converts what is missing
            piece = parts[start : start + PREPARE_SLICE]
            pieces.append(self._wire(types.Content.model_construct(role=content.role, parts=piece)))
        wire = {**pieces[0], "parts": [part for piece in pieces for part in piece["parts"]]}
        self._wires[id(event)] = (event, wire)

    def _repaired(self) -> tuple[_RepairedPrefix, list[Event]]:
        """The repaired part before the current turn, and the current turn repaired.

        Equal to repairing the whole context, at the cost of the current turn
        only. A real user message is a safe split point for the repair: no
        call/response pair spans it, and signatures are only added after the
        last one. So the part before the current turn is repaired once (its
        Contents and wire forms kept) and only extended as turns are added; a
        compaction, a reload from another session or any other change starts
        it afresh.
        """
        events = self.events
        start = current_turn_opener(events) or 0
        prefix = self._prefix
        if not prefix.covers(events, start):
            prefix = _RepairedPrefix()
        if prefix.size < start:
            # The turn boundary ends the added slice like a next turn would.
            added, report = repair_history([*events[prefix.size : start], _TURN_BOUNDARY])
            assert added[-1] is _TURN_BOUNDARY
            self._log_repair(report)
            contents = prefix.contents + [self.content_of(e) for e in added[:-1]]
            wires, images = prefix.wires, prefix.images
            if self._wire is not None:
                new = [self.wire_of(e) for e in added[:-1]]
                found = (i for i, wire in enumerate(new) if holds_inline_data(wire))
                images = images + [len(wires) + i for i in found]
                wires = wires + new
            prefix = _RepairedPrefix(start, events[0], events[start - 1], contents, wires, images)
        self._prefix = prefix
        current, report = repair_history(events[start:])
        self._log_repair(report)
        return prefix, current

    @staticmethod
    def _log_repair(report: RepairReport) -> None:
        if report.changed:
            logger.info("history repaired before sending: %s", report)

    def budget(self, policy: BudgetPolicy) -> ContextBudget:
        """``context_budget(self.events, policy)``, read from the end of the context.

        ``context_budget`` walks back to the latest compaction, which in a long
        context without one means every event. The store's context holds a
        compaction only as its first event, so the budget is that of the tail
        from the last measured reply (with the full event count); any other
        shape takes the exact, slower path.
        """
        events = self.events
        first = events[0] if events else None
        trusted = 1 + first.kept_events if isinstance(first, CompactionEvent) else 0
        for index in range(len(events) - 1, trusted - 1, -1):
            event = events[index]
            if isinstance(event, CompactionEvent):
                break
            usage = event.usage
            if usage is not None and usage.prompt_token_count is not None:
                tail = context_budget(events[index:], policy)
                return dataclasses.replace(tail, events=len(events))
        return context_budget(events, policy)

    def content_of(self, event: Event) -> types.Content:
        """``event`` as a Content, converted once per event object."""
        cached = self._contents.get(id(event))
        if cached is not None and cached[0] is event:
            return cached[1]
        content = event.to_content()
        if self._redact is not None:
            content = self._redact(content)
        self._contents[id(event)] = (event, content)
        return content

    def wire_of(self, event: Event) -> WireContent:
        """``event`` as the API receives it, converted once per event object."""
        cached = self._wires.get(id(event))
        if cached is not None and cached[0] is event:
            return cached[1]
        if self._wire is None:
            raise RuntimeError("this conversation was made without a wire form")
        wire = self._wire(self.content_of(event))
        self._wires[id(event)] = (event, wire)
        return wire

    def _prune(self) -> None:
        # Repaired copies and compacted-away events pile up; drop them now and then.
        if len(self._contents) + len(self._wires) > 4 * len(self.events) + _PRUNE_SLACK:
            live = {id(e) for e in self.events}
            self._contents = {k: v for k, v in self._contents.items() if k in live}
            self._wires = {k: v for k, v in self._wires.items() if k in live}
