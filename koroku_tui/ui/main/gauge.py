"""The context gauge: how much room is left before compaction, and how full the window is."""

from __future__ import annotations

from typing import Any

from textual.widgets import Static

from koroku_tui.agent.context.budget import ContextBudget

__all__ = ["CRITICAL_AT", "WARN_AT", "ContextGauge", "gauge_text"]

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


class ContextGauge(Static):
    """One line fed by ``agent.budget`` and the ``on_usage`` hook."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__("Context: unknown", markup=False, **kwargs)
        self.budget: ContextBudget | None = None

    def show(self, budget: ContextBudget) -> None:
        """Show ``budget``; ``-warn`` / ``-critical`` as the context remaining runs low."""
        self.budget = budget
        self.update(gauge_text(budget))
        remaining = budget.context_remaining_percent
        self.set_class(CRITICAL_AT < remaining <= WARN_AT, "-warn")
        self.set_class(remaining <= CRITICAL_AT, "-critical")
