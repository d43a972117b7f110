"""Which config files a start reads: the user's own, and a project's ``.koroku/config.toml``.

Only paths are worked out here (a few ``stat`` calls); reading is the
loader's (``config/loading.py``), through ``privacy/user_files``.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["PROJECT_CONFIG", "project_config_files", "project_folders", "tilde"]

PROJECT_CONFIG = Path(".koroku") / "config.toml"
"""A project's config file, relative to the workspace or a parent up to the repository root."""


def project_folders(workspace: Path) -> list[Path]:
    """The workspace and its parents up to the repository root, outermost first.

    The repository root is the nearest folder holding ``.git`` (a folder, or
    the file a worktree or submodule has). Outside a repository only the
    workspace itself counts: a stray file in a parent (``~/.koroku``) is no
    project's.
    """
    here = Path(os.path.abspath(workspace))
    climbed: list[Path] = []
    for folder in (here, *here.parents):
        climbed.append(folder)
        if os.path.lexists(folder / ".git"):
            return climbed[::-1]
    return [here]


def project_config_files(workspace: Path) -> list[Path]:
    """The project config files there are (links too: the reader refuses them), outermost first."""
    return [
        folder / PROJECT_CONFIG
        for folder in project_folders(workspace)
        if os.path.lexists(folder / PROJECT_CONFIG)
    ]


def tilde(path: Path) -> str:
    """``path`` for a sentence, with the user's home folder written ``~``."""
    try:
        return f"~/{path.relative_to(Path.home()).as_posix()}"
    except (ValueError, RuntimeError):  # elsewhere, or no home folder known
        return str(path)
