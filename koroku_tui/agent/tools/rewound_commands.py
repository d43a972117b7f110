"""Which of the turns a rewind takes back ran commands: what no restore can put back.

A command (a tool whose spec's kind is ``RUNS_COMMANDS``) can change anything
the user can; Koroku keeps no snapshot of what it did. The rewind dialog
names those turns, read from the stored calls and each tool's spec, never
from a tool's name.
"""

from __future__ import annotations

from typing import Protocol

from koroku_tui.agent.tools.spec import ToolKind, ToolLookup
from koroku_tui.events import SessionEvent
from koroku_tui.store.records import StoredMessage

__all__ = ["turns_that_ran_commands"]

_PAGE = 500


class RowsAfter(Protocol):
    """The store's paged reading (``SessionManager.load_after``)."""

    async def load_after(
        self, after_id: int, *, limit: int, session_id: int | None = None
    ) -> list[StoredMessage]: ...


async def turns_that_ran_commands(
    store: RowsAfter, from_message_id: int, spec_for: ToolLookup, session_id: int | None = None
) -> list[StoredMessage]:
    """The user messages, from ``from_message_id`` on, whose turns called a command tool."""
    turns: list[StoredMessage] = []
    turn: StoredMessage | None = None
    after = from_message_id - 1
    while True:
        rows = await store.load_after(after, limit=_PAGE, session_id=session_id)
        for row in rows:
            event = row.event
            if not isinstance(event, SessionEvent):
                continue
            if event.is_real_user_turn:
                turn = row
            elif turn is not None and (not turns or turns[-1] is not turn):
                kinds = {spec_for(part.function_call.name).kind for part in event.function_calls}
                if ToolKind.RUNS_COMMANDS in kinds:
                    turns.append(turn)
        if len(rows) < _PAGE:
            return turns
        after = rows[-1].id
