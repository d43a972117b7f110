"""Fixtures of the tool tests: a workspace, a folder outside it, and the tool settings."""

from __future__ import annotations

from pathlib import Path

import pytest

from koroku_tui.agent.tools import ToolSettings

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
