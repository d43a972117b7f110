"""The agent side of Koroku: the Gemini tool loop and the tools it can call.

Knows the Gemini SDK, never Textual or Rich.

The names below are imported on first use (``from koroku_tui.agent import
Agent`` works as usual): importing a light part such as ``agent.errors`` or
``agent.context.budget`` runs this file first, and the app's first frame must
not wait for the SDK that ``Agent`` brings (~1.5 s here).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from koroku_tui.agent.lazy_exports import lazy_getattr

if TYPE_CHECKING:  # for type checkers; at run time __getattr__ imports them
    from koroku_tui.agent.config import DEFAULT_MODEL, AgentConfig
    from koroku_tui.agent.context.history import MemoryHistory
    from koroku_tui.agent.errors import AgentError, ErrorKind, NoCompactorError
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
        ModelRequest,
        ModelResponse,
        ReplyStreamed,
        RetryNotice,
        SessionBusy,
        TextDelta,
        ThoughtDelta,
        ToolCallFinished,
        ToolCallStarted,
    )
    from koroku_tui.agent.loop.agent import Agent
    from koroku_tui.agent.protocols import CompactionOutcome, Compactor, History, ReplayHandler
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
    "ModelRequest",
    "ModelResponse",
    "NoCompactorError",
    "ReplayHandler",
    "ReplyStreamed",
    "RetryNotice",
    "RetryPolicy",
    "SessionBusy",
    "TextDelta",
    "ThoughtDelta",
    "ToolCallFinished",
    "ToolCallStarted",
]

_MODULE_OF = {
    "DEFAULT_MODEL": "config",
    "AgentConfig": "config",
    "MemoryHistory": "context.history",
    "AgentError": "errors",
    "ErrorKind": "errors",
    "NoCompactorError": "errors",
    **dict.fromkeys(
        (
            "HOOK_NAMES",
            "CompactionFailed",
            "CompactionFinished",
            "CompactionStarted",
            "ErrorNotice",
            "Handler",
            "HistorySynced",
            "HookName",
            "KeywordHandler",
            "ModelRequest",
            "ModelResponse",
            "ReplyStreamed",
            "RetryNotice",
            "SessionBusy",
            "TextDelta",
            "ThoughtDelta",
            "ToolCallFinished",
            "ToolCallStarted",
        ),
        "hooks",
    ),
    "Agent": "loop.agent",
    "CompactionOutcome": "protocols",
    "Compactor": "protocols",
    "History": "protocols",
    "ReplayHandler": "protocols",
    "AnswerCut": "wire.finish",
    "RetryPolicy": "wire.retry",
}
"""The module (under ``koroku_tui.agent``) that defines each name of ``__all__``."""


__getattr__ = lazy_getattr(__name__, _MODULE_OF, globals())
