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


_DENIED = "The user denied {name}; nothing was done."


def denial(name: str) -> str:
    """The error a denied call answers the model with (stored as the call's response)."""
    return _DENIED.format(name=name) + " Do not retry it: ask the user what they want instead."


def is_denial(error: object) -> bool:
    """True when a call's stored error is ``denial``'s: the user said no, nothing failed.

    The function response is the only record of a denial, so a replayed row
    tells it apart from a failure by this sentence.
    """
    if not isinstance(error, str):
        return False
    head, _, tail = _DENIED.partition("{name}")
    first = error.split("\n", 1)[0]
    return first.startswith(head) and tail in first
