"""Textual messages carrying the agent's hook payloads to the App.

The agent worker runs on the App's event loop; its hook handlers only post
these messages, so widgets are changed from message handlers in arrival order.
"""

from __future__ import annotations

from textual.message import Message

from koroku_tui.agent import (
    CompactionFailed,
    CompactionFinished,
    CompactionStarted,
    ErrorNotice,
    HistorySynced,
    ModelResponse,
    RetryNotice,
    ToolCallFinished,
    ToolCallStarted,
)
from koroku_tui.agent.context.budget import ContextBudget

__all__ = [
    "AgentCompactionFailed",
    "AgentCompactionFinished",
    "AgentCompactionStarted",
    "AgentError",
    "AgentHistorySynced",
    "AgentModelResponse",
    "AgentRetry",
    "AgentTextDelta",
    "AgentThoughtDelta",
    "AgentToolCall",
    "AgentToolResult",
    "AgentUsage",
    "TurnFinished",
]


class AgentTextDelta(Message):
    """A piece of the answer's visible text."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text


class AgentThoughtDelta(Message):
    """A piece of the model's thought summary."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text


class AgentModelResponse(Message):
    """A model step finished (its streamed blocks can be closed)."""

    def __init__(self, response: ModelResponse) -> None:
        super().__init__()
        self.response = response


class AgentToolCall(Message):
    """A tool call is about to run."""

    def __init__(self, started: ToolCallStarted) -> None:
        super().__init__()
        self.started = started


class AgentToolResult(Message):
    """A tool call finished (check or cross)."""

    def __init__(self, finished: ToolCallFinished) -> None:
        super().__init__()
        self.finished = finished


class AgentUsage(Message):
    """The context budget changed."""

    def __init__(self, budget: ContextBudget) -> None:
        super().__init__()
        self.budget = budget


class AgentCompactionStarted(Message):
    """Compaction began."""

    def __init__(self, started: CompactionStarted) -> None:
        super().__init__()
        self.started = started


class AgentCompactionFinished(Message):
    """Compaction stored a summary."""

    def __init__(self, finished: CompactionFinished) -> None:
        super().__init__()
        self.finished = finished


class AgentCompactionFailed(Message):
    """Compaction did not happen."""

    def __init__(self, failed: CompactionFailed) -> None:
        super().__init__()
        self.failed = failed


class AgentError(Message):
    """A failure to show as a sentence."""

    def __init__(self, notice: ErrorNotice) -> None:
        super().__init__()
        self.notice = notice


class AgentRetry(Message):
    """A request will be retried."""

    def __init__(self, notice: RetryNotice) -> None:
        super().__init__()
        self.notice = notice


class AgentHistorySynced(Message):
    """Another Koroku window stored messages in this session; the model sees them now."""

    def __init__(self, synced: HistorySynced) -> None:
        super().__init__()
        self.synced = synced


class TurnFinished(Message):
    """The agent worker ended a turn (done, failed or cancelled)."""

    def __init__(self, cancelled: bool) -> None:
        super().__init__()
        self.cancelled = cancelled
