"""Textual messages carrying the agent's hook payloads to the main screen.

The agent worker runs on the App's event loop; its hook handlers only post
these messages (``ui.main.bridge``), so widgets are changed from message
handlers in arrival order. Each message holds the hook's typed payload as it
came; the bridge builds them from one table, hook name -> message class.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.message import Message

if TYPE_CHECKING:  # annotations only: the hooks module brings the SDK, loaded with the agent
    from koroku_tui.agent import hooks
    from koroku_tui.agent.context.budget import ContextBudget
    from koroku_tui.agent.tools.mcp.status import ServerStatus

__all__ = [
    "AgentBatch",
    "AgentCompactionFailed",
    "AgentCompactionFinished",
    "AgentCompactionStarted",
    "AgentError",
    "AgentHistorySynced",
    "AgentMcpStatus",
    "AgentMessage",
    "AgentModelResponse",
    "AgentReplyStreamed",
    "AgentRetry",
    "AgentSessionBusy",
    "AgentTextDelta",
    "AgentThoughtDelta",
    "AgentToolCall",
    "AgentToolResult",
    "AgentUsage",
    "InstructionsNotice",
    "TurnFinished",
]


@dataclass
class AgentMessage(Message):
    """Base of every message that carries one agent hook's payload."""


@dataclass
class AgentTextDelta(AgentMessage):
    """A piece of the answer's visible text."""

    delta: hooks.TextDelta


@dataclass
class AgentThoughtDelta(AgentMessage):
    """A piece of the model's thought summary."""

    delta: hooks.ThoughtDelta


@dataclass
class AgentReplyStreamed(AgentMessage):
    """A model step's reply all arrived: its answer's last words can be drawn (stored next)."""

    streamed: hooks.ReplyStreamed


@dataclass
class AgentModelResponse(AgentMessage):
    """A model step finished (its streamed blocks can be closed)."""

    response: hooks.ModelResponse


@dataclass
class AgentToolCall(AgentMessage):
    """A tool call is about to run."""

    started: hooks.ToolCallStarted


@dataclass
class AgentToolResult(AgentMessage):
    """A tool call finished (check or cross)."""

    finished: hooks.ToolCallFinished


@dataclass
class AgentUsage(AgentMessage):
    """The context budget changed."""

    budget: ContextBudget


@dataclass
class AgentCompactionStarted(AgentMessage):
    """Compaction began."""

    started: hooks.CompactionStarted


@dataclass
class AgentCompactionFinished(AgentMessage):
    """Compaction stored a summary."""

    finished: hooks.CompactionFinished


@dataclass
class AgentCompactionFailed(AgentMessage):
    """Compaction did not happen."""

    failed: hooks.CompactionFailed


@dataclass
class AgentError(AgentMessage):
    """A failure to show as a sentence."""

    notice: hooks.ErrorNotice


@dataclass
class AgentRetry(AgentMessage):
    """A request will be retried."""

    notice: hooks.RetryNotice


@dataclass
class AgentHistorySynced(AgentMessage):
    """Another Koroku window stored messages in this session; the model sees them now."""

    synced: hooks.HistorySynced


@dataclass
class AgentSessionBusy(AgentMessage):
    """Another Koroku window's turn holds the session: this turn waits (or the wait is over)."""

    busy: hooks.SessionBusy


@dataclass
class AgentMcpStatus(AgentMessage):
    """An MCP server started, got ready, failed or listed new tools: every server's status."""

    statuses: tuple[ServerStatus, ...]


@dataclass
class AgentBatch(Message):
    """What the hooks said since the last batch, in order (``ui.main.bridge.HookFeed``)."""

    messages: list[AgentMessage]


@dataclass
class TurnFinished(Message):
    """The turn worker ended a turn (done, failed or cancelled); not an agent hook."""

    cancelled: bool


@dataclass
class InstructionsNotice(Message):
    """The instruction files were read (at start) or read again (changed): the line to show."""

    text: str
