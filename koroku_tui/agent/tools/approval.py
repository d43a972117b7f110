"""Asking the user before a tool with side effects runs.

The UI supplies an async callback; the executor calls
:meth:`ToolSettings.seek_approval` before every call that asks: one of a
tool whose spec says ``needs_approval``, or one the approval rules say to ask
about (``approval_rules.py``; rules that allow or deny a call decide it
without the dialog). An ALLOW_SESSION answer is kept in the
``ToolSettings`` so the same tool is not asked about again in that session.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from koroku_tui.agent.tools.approval_rules import UnappliedRule
from koroku_tui.agent.tools.change_preview import FileChange
from koroku_tui.agent.tools.denials import denial, is_denial

if TYPE_CHECKING:
    from koroku_tui.agent.tools.spec import ToolSpec

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
    """What the UI shows when asking: the tool's spec and the (validated) arguments."""

    spec: ToolSpec
    """The tool asked about: the dialog reads what to say from it, never its name."""
    args: dict[str, Any] = field(default_factory=dict)
    call_id: str | None = None
    """The function call's id, so the UI can tie the prompt to its sidebar row."""
    workspace: Path | None = None
    """The folder the tool works in (its working directory); ``None`` when unknown."""
    change: FileChange | None = None
    """What the call would change (its spec's ``preview``); ``None`` when nothing is shown."""
    unapplied: tuple[UnappliedRule, ...] = ()
    """Approval rules that would have allowed or denied the call but do not apply to its
    command (shell syntax, hidden characters): the dialog says so, one line each."""

    @property
    def tool_name(self) -> str:
        """The tool's name, as the model called it."""
        return self.spec.name


ApprovalCallback = Callable[[ApprovalRequest], Awaitable[ApprovalDecision]]
"""``async (ApprovalRequest) -> ApprovalDecision``, provided by the UI."""
