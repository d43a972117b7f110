"""Which config files a start reads: the user's own, and a project's ``.koroku/config.toml``.

Only paths are worked out here (a few ``stat`` calls); reading is the
loader's (``config/loading.py``), through ``privacy/user_files``.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = [
    "PROJECT_CONFIG",
    "project_config_files",
    "project_folders",
    "repository_root",
    "shown_path",
    "tilde",
]

PROJECT_CONFIG = Path(".koroku") / "config.toml"
"""A project's config file, relative to the workspace or a parent up to the repository root."""


def repository_root(folder: Path) -> Path | None:
    """The nearest folder at or above ``folder`` holding ``.git`` (a folder, or the file a
    worktree or submodule has); ``None`` outside a repository."""
    here = Path(os.path.abspath(folder))
    for candidate in (here, *here.parents):
        if os.path.lexists(candidate / ".git"):
            return candidate
    return None


def project_folders(workspace: Path) -> list[Path]:
    """The project's folders, outermost first: the repository root down to ``workspace``.

    A project's files (``.koroku/config.toml``, instruction files) are looked
    for in each. Outside a repository only the workspace itself counts: a
    parent of an unversioned workspace (the home, ``/tmp``) is nobody's
    project, and a stray file there (``~/.koroku``) is no project's.
    """
    here = Path(os.path.abspath(workspace))
    root = repository_root(here)
    if root is None:
        return [here]
    return [here, *(folder for folder in here.parents if folder.is_relative_to(root))][::-1]


def project_config_files(workspace: Path) -> list[Path]:
    """The project config files there are (links too: the reader refuses them), outermost first."""
    return [
        folder / PROJECT_CONFIG
        for folder in project_folders(workspace)
        if os.path.lexists(folder / PROJECT_CONFIG)
    ]


def shown_path(path: Path, home: Path | None) -> str:
    """``path`` with the user's ``home`` written ``~``, as shells and the status line show it
    (``home`` ``None`` or ``/``: as it is)."""
    if home is not None and home != Path("/") and path.is_relative_to(home):
        return "~" if path == home else f"~/{path.relative_to(home)}"
    return str(path)


def tilde(path: Path) -> str:
    """``path`` for a sentence, with the user's home folder (``Path.home()``) written ``~``."""
    try:
        home: Path | None = Path.home()
    except RuntimeError:  # no home folder known
        home = None
    return shown_path(path, home)
