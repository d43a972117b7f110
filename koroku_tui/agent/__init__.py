"""The agent side of Koroku: the Gemini tool loop and the tools it can call.

Knows the Gemini SDK, never Textual or Rich.
"""

from koroku_tui.agent.config import DEFAULT_MODEL, AgentConfig
from koroku_tui.agent.context.history import MemoryHistory
from koroku_tui.agent.hooks import (
    HOOK_NAMES,
    CompactionFailed,
    CompactionFinished,
    CompactionStarted,
    ErrorNotice,
    Handler,
    HistorySynced,
    HookName,
    KeywordHandler,
    ModelResponse,
    RetryNotice,
    TextDelta,
    ThoughtDelta,
    ToolCallFinished,
    ToolCallStarted,
)
from koroku_tui.agent.loop.agent import Agent
from koroku_tui.agent.protocols import CompactionOutcome, Compactor, History, ReplayHandler
from koroku_tui.agent.wire.errors import AgentError, ErrorKind, NoCompactorError
from koroku_tui.agent.wire.finish import AnswerCut
from koroku_tui.agent.wire.retry import RetryPolicy

__all__ = [
    "DEFAULT_MODEL",
    "HOOK_NAMES",
    "Agent",
    "AgentConfig",
    "AgentError",
    "AnswerCut",
    "CompactionFailed",
    "CompactionFinished",
    "CompactionOutcome",
    "CompactionStarted",
    "Compactor",
    "ErrorKind",
    "ErrorNotice",
    "Handler",
    "History",
    "HistorySynced",
    "HookName",
    "KeywordHandler",
    "MemoryHistory",
    "ModelResponse",
    "NoCompactorError",
    "ReplayHandler",
    "RetryNotice",
    "RetryPolicy",
    "TextDelta",
    "ThoughtDelta",
    "ToolCallFinished",
    "ToolCallStarted",
]
