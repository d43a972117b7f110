"""The tool budget of one turn, and the nudge against repeating a call verbatim.

A turn runs from the event that opens it (``koroku_tui.events.turns.opens_turn``:
a real user message or a summary; tool responses have role "user" too and do
not count) to the model's final answer.
Every function call the model makes in it counts against the budget, whether
it ran or not. Once the budget is used, the next request withdraws the tools
and adds ``instructions.guardrail_instruction``; a call made beyond the budget is
answered with :data:`TOOL_BUDGET_EXHAUSTED` so that no call is ever left
without a response (the seed design silently skipped them).

The state is rebuilt from the context at the start of every step, so a retry
or a restart in the middle of a turn counts exactly what the model did.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from koroku_tui.agent.tools.answer_words import ASK_BEFORE_REPEATING, REPORT_AND_ASK
from koroku_tui.events import Event, SessionEvent
from koroku_tui.events.turns import current_turn_opener

__all__ = [
    "CANCELLED_BY_USER",
    "CUT_OFF_BEFORE_RUN",
    "INTERRUPTED_BY_STOP",
    "REPEAT_NUDGE_AFTER",
    "TOOL_BUDGET_EXHAUSTED",
    "TurnGuard",
    "call_key",
]

TOOL_BUDGET_EXHAUSTED = f"Not run: the tool budget for this turn is used up. {REPORT_AND_ASK}"
CANCELLED_BY_USER = (
    "Cancelled by the user before this call finished; it may or may not have run. "
    f"{ASK_BEFORE_REPEATING}"
)
INTERRUPTED_BY_STOP = (
    "Interrupted: Koroku was closed or stopped (SIGTERM or SIGHUP) before this call finished; "
    "it may or may not have done its work (a command and every process it started were "
    f"killed). {ASK_BEFORE_REPEATING}"
)
CUT_OFF_BEFORE_RUN = (
    "Not run: the connection to Gemini broke before this step finished arriving, so "
    "Koroku did not run the call."
)
REPEAT_NUDGE_AFTER = 3
"""The third identical call in a row (and any after it) gets the nudge."""


def call_key(name: str | None, args: dict[str, Any] | None) -> str:
    """A canonical text of a call, equal for calls with the same name and arguments."""
    return json.dumps([name or "", args or {}], sort_keys=True, default=str)


@dataclass
class TurnGuard:
    """Counts the current turn's tool calls and tracks identical repeats."""

    limit: int
    calls_used: int = 0
    last_key: str | None = None
    streak: int = 0
    """How many times in a row the last call was made identically."""

    @classmethod
    def from_events(cls, events: Sequence[Event], limit: int) -> TurnGuard:
        """The guard's state after the calls already made in the context's current turn.

        Scans back only to the start of the turn, so the cost does not grow
        with the length of the history.
        """
        guard = cls(limit=limit)
        opener = current_turn_opener(events)
        for event in events[0 if opener is None else opener + 1 :]:
            if isinstance(event, SessionEvent) and event.role == "model":
                for part in event.function_calls:
                    guard.count(part.function_call.name, part.function_call.args)
        return guard

    @property
    def exhausted(self) -> bool:
        """True once the turn has made ``limit`` calls: no more tools are offered."""
        return self.calls_used >= self.limit

    def count(self, name: str | None, args: dict[str, Any] | None) -> bool:
        """Count one call; True if it is within the budget and may run."""
        allowed = not self.exhausted
        self.calls_used += 1
        key = call_key(name, args)
        self.streak = self.streak + 1 if key == self.last_key else 1
        self.last_key = key
        return allowed

    @property
    def needs_nudge(self) -> bool:
        """True when the call just counted repeats the previous ones verbatim often enough."""
        return self.streak >= REPEAT_NUDGE_AFTER
