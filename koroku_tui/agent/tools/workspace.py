"""Keeping file tools inside the workspace folder.

Every path the model gives is resolved (``..`` collapsed, symlinks followed)
before it is checked, so ``../x``, absolute paths elsewhere and links whose
target lies outside are all refused the same way.
"""

from __future__ import annotations

from pathlib import Path

from koroku_tui.agent.tools.result import ToolError

__all__ = ["display_path", "resolve_in_workspace"]


def resolve_in_workspace(workspace: Path, path: str) -> Path:
    """The real location of ``path`` (relative to ``workspace``), if it stays inside it.

    Raises ``ToolError`` when the resolved path leaves the workspace or cannot
    be resolved. The path need not exist (``write_file`` creates files).

    A link swapped between this check and the actual open could still escape;
    the workspace guards against the model's mistakes, not a hostile local user.
    """
    root = workspace.resolve()
    try:
        resolved = (root / path).resolve()  # an absolute ``path`` replaces ``root``
    except (OSError, RuntimeError, ValueError) as exc:
        raise ToolError(f"Cannot use the path {path!r}: {exc}.") from exc
    if not resolved.is_relative_to(root):
        raise ToolError(
            f"The path {path!r} is outside the workspace ({root}); "
            "only files inside the workspace can be used."
        )
    return resolved


def display_path(workspace: Path, resolved: Path) -> str:
    """``resolved`` relative to the workspace, for messages (``.`` for the root itself)."""
    relative = resolved.relative_to(workspace.resolve())
    return relative.as_posix() if relative.parts else "."
