"""The one sentence that says what a compaction did."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the agent (and the SDK) load after the first frame
    from koroku_tui.agent import CompactionFinished
    from koroku_tui.agent.context.budget import ContextBudget

__all__ = ["compaction_done"]


def _tokens(budget: ContextBudget) -> str:
    return f"{'~' if budget.estimated else ''}{budget.tokens_used:,}"


def compaction_done(finished: CompactionFinished) -> str:
    """E.g. "Older turns summarised: 12 messages into one summary; context 8,400 → ~900 tokens."""
    said = "Older turns summarised"
    if finished.summarised is not None:
        plural = "message" if finished.summarised == 1 else "messages"
        said += f": {finished.summarised} {plural} into one summary"
    if finished.before is not None:
        said += "; " if finished.summarised is not None else ": "
        said += f"context {_tokens(finished.before)} → {_tokens(finished.budget)} tokens"
    if finished.suggested:
        facts = "fact waits" if finished.suggested == 1 else "facts wait"
        said += (
            f". {finished.suggested} suggested {facts} in the history's memory pane, "
            "to accept or delete"
        )
    return said + "."
