"""The context gauge: how much room is left before compaction, and how full the window is.

Its tooltip counts the running turn's tokens (in, cached, out, thinking) reply
by reply, and keeps the last turn's once it ends.
"""

from __future__ import annotations

from typing import Any

from textual.widgets import Static

from koroku_tui.agent.context.budget import ContextBudget
from koroku_tui.events import TokenCounts, TokenUsage

__all__ = ["CRITICAL_AT", "WARN_AT", "ContextGauge", "gauge_text", "turn_tokens_text"]

WARN_AT = 30
"""Percent of context remaining (before compaction) at which the gauge turns to a warning colour."""
CRITICAL_AT = 10
"""Percent of context remaining at which the gauge turns critical: compaction is near."""


def gauge_text(budget: ContextBudget) -> str:
    """E.g. ``97% context remaining · ~31,337 / 1,048,576 tokens (97% of the window free)``.

    The headline is ``should_summarise``'s own figure, against the compaction
    threshold (0% = compact now); "~" marks an estimate.
    """
    approx = "~" if budget.estimated else ""
    window_free = round(budget.remaining_share * 100)
    return (
        f"{budget.context_remaining_percent}% context remaining · "
        f"{approx}{budget.tokens_used:,} / {budget.window:,} tokens "
        f"({window_free}% of the window free)"
    )


def turn_tokens_text(tokens: TokenCounts, requests: int, *, running: bool) -> str:
    """``This turn: 12,345 in (2,000 cached) · 678 out · 90 thinking · 2 requests``."""
    which = "This turn" if running else "Last turn"
    if not requests:
        return f"{which}: no reply yet"
    plural = "" if requests == 1 else "s"
    return f"{which}: {tokens.describe()} · {requests} request{plural}"


class ContextGauge(Static):
    """One line fed by ``agent.budget`` and the ``on_usage`` hook."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__("Context: unknown", markup=False, **kwargs)
        self.budget: ContextBudget | None = None
        self.turn_tokens = TokenCounts()
        """The tokens of the running (or last) turn's replies, added up."""
        self.turn_requests = 0
        self._turn_running = False

    def show(self, budget: ContextBudget) -> None:
        """Show ``budget``; ``-warn`` / ``-critical`` as the context remaining runs low."""
        self.budget = budget
        # One line the screen's width, whatever it says: no layout needed (a
        # layout redoes the whole screen, ~5-15 ms a usage report, in a frame
        # the keys wait on).
        self.update(gauge_text(budget), layout=False)
        remaining = budget.context_remaining_percent
        self.set_class(CRITICAL_AT < remaining <= WARN_AT, "-warn")
        self.set_class(remaining <= CRITICAL_AT, "-critical")

    def turn_started(self) -> None:
        """A message was sent: the tooltip counts its turn from nothing."""
        self.turn_tokens, self.turn_requests, self._turn_running = TokenCounts(), 0, True
        self._show_turn()

    def reply_counted(self, usage: TokenUsage | None) -> None:
        """A reply of the turn was stored: its tokens join the turn's."""
        self.turn_tokens += TokenCounts.of(usage)
        self.turn_requests += 1
        self._show_turn()

    def turn_ended(self) -> None:
        """The turn is over: the tooltip keeps its figures, as the last turn's."""
        self._turn_running = False
        if self.turn_requests:
            self._show_turn()

    def forget_turn(self) -> None:
        """Another session is shown: its gauge says nothing of a turn of this one."""
        self.turn_tokens, self.turn_requests, self._turn_running = TokenCounts(), 0, False
        self.tooltip = None

    def _show_turn(self) -> None:
        running = self._turn_running
        self.tooltip = turn_tokens_text(self.turn_tokens, self.turn_requests, running=running)
