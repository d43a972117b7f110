"""Fixtures of the tool tests: a workspace, a folder outside it, the tool settings, a call."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from google.genai import types

from koroku_tui.agent.tools import ToolSettings
from koroku_tui.agent.tools.approval import ApprovalDecision, ApprovalRequest
from koroku_tui.agent.tools.approval_rules import ApprovalRules

SECRET = "top secret"
"""What ``outside/secret.txt`` holds: no tool may ever show it."""


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """The folder the tools are confined to (``tmp_path/ws``)."""
    path = tmp_path / "ws"
    path.mkdir()
    return path


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder next to the workspace holding a file the tools must never reach."""
    path = tmp_path / "outside"
    path.mkdir()
    (path / "secret.txt").write_text(SECRET)
    return path


@pytest.fixture
def ctx(workspace: Path, tmp_path: Path) -> ToolSettings:
    """Tool settings on ``workspace``, auto-approving: approval has its own tests."""
    return ToolSettings(workspace=workspace, memory_dir=tmp_path / "memory", auto_approve=True)


def fcall(
    name: str, args: dict[str, Any] | None = None, call_id: str = "call-1"
) -> types.FunctionCall:
    """A function call as the model makes it."""
    return types.FunctionCall(id=call_id, name=name, args=args if args is not None else {})


class ScriptedApprover:
    """An approval callback that answers from a script and records what it was asked."""

    def __init__(self, *decisions: ApprovalDecision) -> None:
        self.decisions = list(decisions)
        self.requests: list[ApprovalRequest] = []

    async def __call__(self, request: ApprovalRequest) -> ApprovalDecision:
        self.requests.append(request)
        return self.decisions.pop(0)


def ruled(workspace: Path, approver: ScriptedApprover | None, **rules: Any) -> ToolSettings:
    """Tool settings on ``workspace`` asking ``approver``, under the approval ``rules``."""
    rulebook = ApprovalRules(**rules)
    return ToolSettings(workspace=workspace, approval_callback=approver, rules=rulebook)
