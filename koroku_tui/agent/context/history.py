"""``MemoryHistory``: the conversation kept in memory only (no session store).

Used when the Agent has no ``SessionManager`` (tests, throwaway sessions). It
applies the store's context rule (``koroku_tui.events.turns.compacted``), so
compaction behaves the same: a ``CompactionEvent`` restarts the context with
itself and the messages from its ``kept_from_id`` on.
"""

from __future__ import annotations

import time
from collections.abc import Iterable

from koroku_tui.events import CompactionEvent, Event
from koroku_tui.events.turns import compacted
from koroku_tui.store.errors import BusyWatcher
from koroku_tui.store.records import StoredMessage

__all__ = ["MEMORY_SESSION_ID", "MemoryHistory"]

MEMORY_SESSION_ID = 0
"""The session id stamped on in-memory messages."""


class MemoryHistory:
    """The model's context in a list; ids count up from 1 like database row ids."""

    def __init__(self, events: Iterable[Event] = ()) -> None:
        self._messages: list[StoredMessage] = []
        self._events: list[Event] = []
        self._next_id = 1
        # A given starting context is taken as is: it already is a context.
        for event in events:
            self._messages.append(self._record(event, time.time()))
            self._events.append(event)

    def _record(self, event: Event, when: float) -> StoredMessage:
        message = StoredMessage(self._next_id, MEMORY_SESSION_ID, event.event_type, when, event)
        self._next_id += 1
        return message

    async def add_message(self, event: Event, created_at: float | None = None) -> int:
        """Append ``event`` (a compaction restarts the context) and return its id."""
        message = self._record(event, time.time() if created_at is None else created_at)
        if isinstance(event, CompactionEvent):
            self._messages = compacted(self._messages, message)
            self._events = [m.event for m in self._messages if m.event is not None]
        else:
            self._messages.append(message)
            self._events.append(event)
        return message.id

    async def load_messages(self) -> list[Event]:
        """The context's events, oldest first (a new list; the events are shared)."""
        return self._events.copy()

    async def context_messages(self) -> list[StoredMessage]:
        """The context with ids."""
        return self._messages.copy()

    async def begin_turn(
        self, event: Event | None = None, *, busy: BusyWatcher | None = None
    ) -> int | None:
        """Store ``event`` (nothing shares a memory history: nothing waits, nor hears ``busy``)."""
        return None if event is None else await self.add_message(event)

    async def end_turn(self) -> None:
        """Nothing to give back."""

    async def catch_up(self) -> list[StoredMessage]:
        """No other process writes here."""
        return []
