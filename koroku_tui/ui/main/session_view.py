"""Fills the transcript and the sidebar from the store: the tail first, older pages on demand.

Replay reads ``load_all(limit=...)`` (everything stored, including what
compaction hid from the model) rather than the model's context, so the user
sees the conversation as it happened.
"""

from __future__ import annotations

from typing import Any

from koroku_tui.events import CompactionEvent, FunctionResponsePart, SessionEvent
from koroku_tui.store import SessionInfo, SessionManager, StoredMessage
from koroku_tui.ui.main.sidebar import ToolSidebar
from koroku_tui.ui.main.transcript import Transcript, blocks_for_event

__all__ = ["PAGE_SIZE", "SessionView"]

PAGE_SIZE = 40
"""Messages mounted at start and per "older" page (mount cost grows with this, not history)."""


def _events(rows: list[StoredMessage]) -> list[SessionEvent | CompactionEvent]:
    return [row.event for row in rows if row.event is not None]


def _calls(events: list[SessionEvent | CompactionEvent]) -> list[tuple[str, dict[str, Any], bool]]:
    """Finished tool calls as the sidebar shows them, from the stored responses."""
    calls: list[tuple[str, dict[str, Any], bool]] = []
    for event in events:
        if isinstance(event, SessionEvent):
            for part in event.function_responses:
                meta = part.fc_metadata
                name = meta.name if meta else part.function_response.name
                args = dict(meta.args) if meta else {}
                calls.append((name, args, isinstance(part, FunctionResponsePart) and part.is_error))
    return calls


class SessionView:
    """The current session's stored history, paged into the transcript and sidebar."""

    def __init__(self, store: SessionManager, transcript: Transcript, sidebar: ToolSidebar) -> None:
        self.store = store
        self.transcript = transcript
        self.sidebar = sidebar
        self._oldest_id: int | None = None
        self._more = False

    async def show_current(self) -> SessionInfo:
        """Reset both widgets and mount the tail of the current session."""
        info = await self.store.get_session(self.store.session_id)
        rows = await self.store.load_all(limit=PAGE_SIZE)
        self._oldest_id = rows[0].id if rows else None
        self._more = len(rows) == PAGE_SIZE
        events = _events(rows)
        await self.transcript.clear()
        self.sidebar.clear()
        await self.transcript.add(*[b for event in events for b in blocks_for_event(event)])
        for name, args, failed in _calls(events):
            self.sidebar.add_call(name, args, done=True, failed=failed)
        self.transcript.anchor()
        return info

    async def show_older(self) -> bool:
        """Prepend the previous page; False when there is nothing older."""
        if not self._more or self._oldest_id is None:
            return False
        rows = await self.store.load_all(before_id=self._oldest_id, limit=PAGE_SIZE)
        if not rows:
            self._more = False
            return False
        self._oldest_id = rows[0].id
        self._more = len(rows) == PAGE_SIZE
        events = _events(rows)
        await self.transcript.prepend(events)
        self.sidebar.prepend_calls(_calls(events))
        return True
