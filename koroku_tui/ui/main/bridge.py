"""Turns the agent's hooks into Textual messages posted to the App.

The agent worker runs on the App's loop, so the handlers only post: the
widgets change later, in the App's message handlers, in arrival order.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from textual.message import Message

from koroku_tui.agent import Agent, TextDelta, ThoughtDelta
from koroku_tui.ui.main import messages as m

__all__ = ["connect_hooks"]

P = TypeVar("P")


def _poster(post: Callable[[Message], object], wrap: Callable[[P], Message]) -> Callable[[P], None]:
    def handler(payload: P) -> None:
        post(wrap(payload))

    return handler


def _text(payload: TextDelta) -> Message:
    return m.AgentTextDelta(payload.text)


def _thought(payload: ThoughtDelta) -> Message:
    return m.AgentThoughtDelta(payload.text)


def connect_hooks(agent: Agent, post: Callable[[Message], object]) -> None:
    """Register one handler per hook, each posting the matching message."""
    agent.on("on_text_delta", _poster(post, _text))
    agent.on("on_thought_delta", _poster(post, _thought))
    agent.on("on_model_response", _poster(post, m.AgentModelResponse))
    agent.on("on_tool_call", _poster(post, m.AgentToolCall))
    agent.on("on_tool_result", _poster(post, m.AgentToolResult))
    agent.on("on_usage", _poster(post, m.AgentUsage))
    agent.on("on_compaction_started", _poster(post, m.AgentCompactionStarted))
    agent.on("on_compaction_finished", _poster(post, m.AgentCompactionFinished))
    agent.on("on_compaction_failed", _poster(post, m.AgentCompactionFailed))
    agent.on("on_error", _poster(post, m.AgentError))
    agent.on("on_retry", _poster(post, m.AgentRetry))
    agent.on("on_history_synced", _poster(post, m.AgentHistorySynced))
