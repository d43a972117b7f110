"""The context gauge: how much of the window is free, and how close compaction is."""

from __future__ import annotations

from typing import Any

from textual.widgets import Static

from koroku_tui.agent.context.budget import ContextBudget

__all__ = ["CRITICAL_AT", "WARN_AT", "ContextGauge", "gauge_text"]

WARN_AT = 0.7
"""Share of the compaction threshold at which the gauge turns to a warning colour."""
CRITICAL_AT = 0.9


def gauge_text(budget: ContextBudget) -> str:
    """E.g. ``Context 97% free · ~31,337 / 1,048,576 tokens`` ("~" when estimated)."""
    approx = "~" if budget.estimated else ""
    free = round(budget.remaining_share * 100)
    return f"Context {free}% free · {approx}{budget.tokens_used:,} / {budget.window:,} tokens"


class ContextGauge(Static):
    """One line fed by ``agent.budget`` and the ``on_usage`` hook."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__("Context: unknown", markup=False, **kwargs)
        self.budget: ContextBudget | None = None

    def show(self, budget: ContextBudget) -> None:
        """Show ``budget``; ``-warn`` / ``-critical`` as the threshold nears."""
        self.budget = budget
        self.update(gauge_text(budget))
        used = budget.threshold_share_used
        self.set_class(CRITICAL_AT > used >= WARN_AT, "-warn")
        self.set_class(used >= CRITICAL_AT, "-critical")
