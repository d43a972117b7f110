"""The agent's settings: one small frozen dataclass, with sensible defaults."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from koroku_tui.agent.context.budget import BudgetPolicy
from koroku_tui.agent.context.compaction import DEFAULT_COMPACTION_MODEL
from koroku_tui.agent.wire.client import DEFAULT_API_VERSION, DEFAULT_TIMEOUT_SECONDS
from koroku_tui.agent.wire.retry import RetryPolicy
from koroku_tui.config.settings import (
    COMMAND,
    DEFAULT_MODEL,
    DEFAULT_STALL_TIMEOUT,
    MEMORY_DIRNAME,
    default_home,
)

__all__ = ["DEFAULT_MAX_TOOL_CALLS", "DEFAULT_MODEL", "AgentConfig"]

DEFAULT_MAX_TOOL_CALLS = 15


def _default_memory_dir() -> Path:
    """The platform's Koroku home's memory folder: a plain default, read from no setting.

    ``KOROKU_HOME`` and ``--home`` reach the agent through the assembly
    (``koroku_tui.modes.wiring``), which always passes the home's own folder.
    """
    return default_home() / MEMORY_DIRNAME


@dataclass(frozen=True)
class AgentConfig:
    """How the agent talks to Gemini, when it stops a tool loop, and when it compacts."""

    api_version: str = DEFAULT_API_VERSION
    """Used when the agent builds its own client."""
    request_timeout: float = DEFAULT_TIMEOUT_SECONDS
    """The transport's timeout when the agent builds its own client: httpx applies it to
    connecting and to each read, not to the whole request (raised to ``stall_timeout``)."""
    stall_timeout: float = DEFAULT_STALL_TIMEOUT
    """Seconds Gemini may send nothing (no headers, no chunk) before the request is given
    up with "Gemini sent nothing for N s", without retrying. A slow but steady stream is
    never cut: the clock restarts at every chunk."""
    context_window: int | None = None
    """Input tokens the model takes; ``None`` asks ``models.get`` (1,048,576 if unreachable).
    Set (a mode's own window, the demo's), it stays when the session changes model."""
    session_models: bool = True
    """Use the model a session chose ("Change model…", kept with it) over the one the agent
    is made with; off when ``--model`` names the model of the run."""
    model_info_timeout: float = 5.0
    """Seconds to wait for ``models.get`` at start before assuming the default window."""
    budget: BudgetPolicy = field(default_factory=BudgetPolicy)
    """When to compact; its ``window`` is replaced by the model's real context window."""
    max_tool_calls_per_turn: int = DEFAULT_MAX_TOOL_CALLS
    """Tool calls allowed between two user messages before tools are withdrawn."""
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    """Attempts and backoff for transient failures (tests use tiny delays)."""
    memory_dir: Path = field(default_factory=_default_memory_dir)
    """The daily summary files; named in the system instruction. The default is the
    platform's Koroku home's; a run's assembly passes its own home's."""
    compaction_model: str = DEFAULT_COMPACTION_MODEL
    """The (stronger) model that writes summaries."""
    auto_compact: bool = True
    """Build the standard compactor when the Agent is not given one."""
    compaction_retry_after_events: int = 10
    """After a failed compaction, wait for this many new events before trying again."""
    include_thoughts: bool = True
    """Ask for thought summaries (they stream to ``on_thought_delta``)."""
    command: str = COMMAND
    """How the user starts Koroku, as advice names it (``uv run koroku-tui`` under uv)."""
