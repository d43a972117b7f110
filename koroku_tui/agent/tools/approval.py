"""Asking the user before a tool with side effects runs.

The UI supplies an async callback; the executor calls :func:`seek_approval`
before every tool marked ``needs_approval``. An ALLOW_SESSION answer is kept
in the ``ToolContext`` so the same tool is not asked about again in that
session.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from koroku_tui.agent.tools.context import ToolContext

__all__ = ["ApprovalCallback", "ApprovalDecision", "ApprovalRequest", "seek_approval"]


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


ApprovalCallback = Callable[[ApprovalRequest], Awaitable[ApprovalDecision]]
"""``async (ApprovalRequest) -> ApprovalDecision``, provided by the UI."""


async def seek_approval(request: ApprovalRequest, context: ToolContext) -> str | None:
    """Decide whether the call may run: ``None`` if so, else the error text for the model.

    Order: auto-approve, then a tool already allowed for the session, then the
    callback. Without a callback (headless) the call is refused with a hint
    on how to opt in. Cancellation while the user is being asked propagates.
    """
    name = request.tool_name
    if context.auto_approve or name in context.session_allowed:
        return None
    callback = context.approval_callback
    if callback is None:
        return (
            f"{name} needs the user's approval and there is no one to ask, so nothing was "
            f"done. {context.opt_in_hint}"
        )
    try:
        decision = await callback(request)
    except Exception as exc:  # CancelledError is not an Exception: it propagates
        # A broken prompt must not run the tool, nor crash the agent loop.
        return f"Could not ask the user to approve {name} ({exc}), so nothing was done."
    if decision is ApprovalDecision.ALLOW_SESSION:
        context.session_allowed.add(name)
        return None
    if decision is ApprovalDecision.ALLOW_ONCE:
        return None
    return (
        f"The user denied {name}; nothing was done. Do not retry it: ask the user "
        "what they want instead."
    )
