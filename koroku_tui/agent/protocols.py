"""What the agent needs from its neighbours, as structural types.

``SessionManager`` is a :class:`History`; so is the in-memory
``MemoryHistory``. ``koroku_tui.agent.context.compaction.SummaryCompactor`` is a
:class:`Compactor`. Tests and other front ends can plug in anything with the
same shape.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from koroku_tui.events import CompactionEvent, Event
from koroku_tui.store.errors import BusyWatcher
from koroku_tui.store.records import StoredMessage
from koroku_tui.store.replay import ReplayHandler

"""The seed's ``async def handler(*, event)``; one type for the agent's replay and the store's."""

__all__ = ["CompactionOutcome", "Compactor", "History", "ReplayHandler"]


class History(Protocol):
    """Where the conversation is kept: stored events and the model's context in memory."""

    async def add_message(self, event: Event, created_at: float | None = None) -> int:
        """Store ``event`` and append it to the in-memory context; returns its id."""
        ...

    async def load_messages(self) -> list[Event]:
        """The model's context (latest compaction, then what follows), from memory."""
        ...

    async def context_messages(self) -> list[StoredMessage]:
        """The same context with ids, which a compactor needs for its split point."""
        ...

    async def begin_turn(
        self, event: Event | None = None, *, busy: BusyWatcher | None = None
    ) -> int | None:
        """Become the session's one writer and store ``event`` at once; returns its id.

        Raises (the store's ``SessionBusyError``) when another process runs a
        turn on the session, having written nothing; ``busy`` hears of each
        attempt that found it busy while it waits.
        """
        ...

    async def end_turn(self) -> None:
        """Stop being the session's writer."""
        ...

    async def catch_up(self) -> list[StoredMessage]:
        """Add to the context what other processes stored since; returns those messages."""
        ...


class CompactionOutcome(Protocol):
    """What a compactor reports back (``compaction.CompactionResult`` has this shape)."""

    @property
    def event(self) -> CompactionEvent: ...

    @property
    def message_id(self) -> int | None:
        """The stored row id, or ``None`` if the compactor did not store the event."""
        ...

    @property
    def warning(self) -> str | None: ...

    @property
    def summarised_events(self) -> int:
        """How many events the summary replaced."""
        ...

    @property
    def suggested(self) -> int:
        """Lasting facts the summary proposed that wait as suggested memories."""
        ...


class Compactor(Protocol):
    """Summarises the older part of a context; called by the agent between turns only.

    Returns ``None`` when there is nothing to summarise, and raises an
    exception whose ``str()`` is a sentence for the user when it fails (the
    history must then be untouched). If the returned event was not stored
    (no ``message_id``), the agent stores it.
    """

    async def compact(
        self, messages: Sequence[StoredMessage]
    ) -> CompactionOutcome | CompactionEvent | None: ...
