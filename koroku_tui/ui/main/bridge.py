"""Turns the agent's hooks into Textual messages posted to the main screen.

One table, ``HOOK_MESSAGES``, says which message carries which hook's
payload: adding a hook is one payload class (``agent/hooks.py``), one row
here with its message class, and one handler on the screen. A hook left out
on purpose goes in ``NOT_SHOWN`` with the reason; a test checks that every
hook of ``HOOK_NAMES`` is in one of the two.

The agent worker runs on the App's loop, so the handlers only post: the
widgets change later, in the screen's message handlers, in arrival order.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from textual.message import Message

from koroku_tui.ui.main import messages as m

if TYPE_CHECKING:  # the agent (and its SDK) loads after the first frame
    from koroku_tui.agent import Agent
    from koroku_tui.agent.hooks import HookName

__all__ = ["HOOK_MESSAGES", "NOT_SHOWN", "connect_hooks"]

HOOK_MESSAGES: Mapping[HookName, Callable[[Any], m.AgentMessage]] = {
    "on_text_delta": m.AgentTextDelta,
    "on_thought_delta": m.AgentThoughtDelta,
    "on_model_response": m.AgentModelResponse,
    "on_tool_call": m.AgentToolCall,
    "on_tool_result": m.AgentToolResult,
    "on_usage": m.AgentUsage,
    "on_compaction_started": m.AgentCompactionStarted,
    "on_compaction_finished": m.AgentCompactionFinished,
    "on_compaction_failed": m.AgentCompactionFailed,
    "on_error": m.AgentError,
    "on_retry": m.AgentRetry,
    "on_history_synced": m.AgentHistorySynced,
    "on_session_busy": m.AgentSessionBusy,
}
"""Each hook the screen shows, and the message that carries its payload."""

NOT_SHOWN: Mapping[str, str] = {}
"""Hooks deliberately not bridged, each with why (none today)."""


def _poster(
    post: Callable[[Message], object], message: Callable[[Any], m.AgentMessage]
) -> Callable[[Any], None]:
    # One positional parameter: the agent passes it the hook's typed payload.
    def handler(payload: Any) -> None:
        post(message(payload))

    return handler


def connect_hooks(agent: Agent, post: Callable[[Message], object]) -> None:
    """Register one handler per hook of ``HOOK_MESSAGES``, each posting its message."""
    for name, message in HOOK_MESSAGES.items():
        agent.on(name, _poster(post, message))
