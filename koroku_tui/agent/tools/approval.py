"""Asking the user before a tool with side effects runs.

The UI supplies an async callback; the executor calls :meth:`ToolSettings.seek_approval`
before every tool marked ``needs_approval``. An ALLOW_SESSION answer is kept
in the ``ToolSettings`` so the same tool is not asked about again in that
session.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from koroku_tui.agent.tools.change_preview import FileChange
from koroku_tui.agent.tools.denials import denial, is_denial

__all__ = ["ApprovalCallback", "ApprovalDecision", "ApprovalRequest", "denial", "is_denial"]


class ApprovalDecision(StrEnum):
    """The user's answer to an approval request."""

    ALLOW_ONCE = "allow_once"
    """Run this call; ask again next time."""
    ALLOW_SESSION = "allow_session"
    """Run this call and every later call of the same tool in this session."""
    DENY = "deny"
    """Do not run it; the model gets an error result saying so."""


@dataclass(frozen=True)
class ApprovalRequest:
    """What the UI shows when asking: the tool and the (validated) arguments."""

    tool_name: str
    args: dict[str, Any] = field(default_factory=dict)
    call_id: str | None = None
    """The function call's id, so the UI can tie the prompt to its sidebar row."""
    workspace: Path | None = None
    """The folder the tool works in (its working directory); ``None`` when unknown."""
    change: FileChange | None = None
    """What the call would change in a file (``write_file``); ``None`` for other tools."""


ApprovalCallback = Callable[[ApprovalRequest], Awaitable[ApprovalDecision]]
"""``async (ApprovalRequest) -> ApprovalDecision``, provided by the UI."""
