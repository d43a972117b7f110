"""Projects on disk for the instruction-file and trust tests: nested git repositories.

``nested_project`` lays out, under ``tmp_path``::

    AGENTS.md                      above every repository: never read
    src/.git/                      the outer repository
    src/AGENTS.md                  outer root: read from src/docs, not from lib/app
    src/lib/.git                   a nested repository (a worktree's .git file)
    src/lib/AGENTS.md  KOROKU.md   the nested root
    src/lib/app/AGENTS.md          the workspace's own

and a personal ``AGENTS.md`` in the user config folder (``XDG_CONFIG_HOME``,
a temporary folder for every test: see ``conftest.home_in_tmp``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from koroku_tui.agent.context.instruction_files import INSTRUCTIONS_CAP, InstructionFiles
from koroku_tui.config.settings import DEFAULT_INSTRUCTION_FILES, user_config_dir


@dataclass(frozen=True)
class Project:
    """Where ``nested_project`` put things."""

    outer: Path
    """The outer repository's root (``src``)."""
    root: Path
    """The nested repository's root (``src/lib``): the workspace's project root."""
    workspace: Path
    """``src/lib/app``."""
    personal: Path
    """The user config folder holding the personal ``AGENTS.md``."""


def write(path: Path, text: str | bytes) -> Path:
    """Write ``text`` at ``path``, making its folders."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def nested_project(tmp_path: Path) -> Project:
    """The layout of the module docstring; each file's text names where it is."""
    outer, root = tmp_path / "src", tmp_path / "src" / "lib"
    workspace = root / "app"
    (outer / ".git").mkdir(parents=True)
    write(root / ".git", "gitdir: ../.git/worktrees/lib\n")
    write(tmp_path / "AGENTS.md", "ABOVE-ALL: never read\n")
    write(outer / "AGENTS.md", "OUTER-ROOT rules\n")
    write(root / "AGENTS.md", "LIB-ROOT agents\n")
    write(root / "KOROKU.md", "LIB-ROOT koroku\n")
    write(workspace / "AGENTS.md", "APP agents\n")
    personal = user_config_dir()
    write(personal / "AGENTS.md", "PERSONAL standing orders\n")
    return Project(outer, root, workspace, personal)


def files_for(
    workspace: Path,
    *,
    trusted: bool,
    names: tuple[str, ...] = DEFAULT_INSTRUCTION_FILES,
    cap: int = INSTRUCTIONS_CAP,
) -> InstructionFiles:
    """The run's instruction files as the assembly makes them, personal folder included."""
    return InstructionFiles(
        workspace, names=names, personal_dir=user_config_dir(), trusted=trusted, cap=cap
    )
