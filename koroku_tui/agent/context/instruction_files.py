"""The instruction files the model is told: personal ones, then the project's, re-read on change.

Read, in this order (the order of the system instruction):

1. personal: each configured name (``[instructions] files``, ``AGENTS.md``
   and ``KOROKU.md`` by default) in the user config folder
   (``~/.config/koroku``): the user's standing instructions, always used;
2. the project's: the same names in each folder from the repository root
   down to the workspace (``config.files.project_folders``), outermost first,
   so the nearest file comes last and has the last word. Used only when the
   workspace is trusted (``config.trust``); otherwise they are listed as
   ignored, never read.

Together they are capped at :data:`INSTRUCTIONS_CAP` bytes: the file that
crosses it is cut, those after it are left out, and both the model and the
user are told. :meth:`InstructionFiles.refresh` is called at the start of
each turn: it stats the candidate files (a few ``stat`` calls) and reads
them again only when one changed (modification time, size or inode), was
added or removed, or the folder became trusted.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from koroku_tui.agent.context.project_files import (
    FileText,
    project_files,
    read_project_text,
    size_text,
)
from koroku_tui.config.files import project_folders, repository_root, shown_path

__all__ = [
    "INSTRUCTIONS_CAP",
    "InstructionFile",
    "InstructionFiles",
    "LoadedInstructions",
]

INSTRUCTIONS_CAP = 64 * 1024
"""The most bytes of instruction files the model is told, all files together (64 KB)."""

Scope = Literal["personal", "project"]
Signature = tuple[bool, tuple[tuple[str, int, int, int] | None, ...]]


@dataclass(frozen=True)
class InstructionFile:
    """One file found: what of it the model is told, and what the user is shown about it."""

    scope: Scope
    read: FileText

    @property
    def path(self) -> Path:
        """Where the file is."""
        return self.read.path

    @property
    def used(self) -> bool:
        """Some of its text reaches the model."""
        return self.read.refused is None and bool(self.read.text)


@dataclass(frozen=True)
class LoadedInstructions:
    """The instruction files as last read: their text in order, and what was not used."""

    files: tuple[InstructionFile, ...] = ()
    """Every file found, in the order of the system instruction (refused ones too)."""
    left_out: tuple[Path, ...] = ()
    """Files not read at all: the cap was reached before them."""
    ignored: tuple[Path, ...] = ()
    """Project files present but not used: the folder is not trusted."""
    home: Path | None = field(default=None, compare=False)
    """The user's home, for paths written ``~/...``."""
    cap: int = INSTRUCTIONS_CAP

    @property
    def used(self) -> list[InstructionFile]:
        """The files whose text (maybe cut) reaches the model, in order."""
        return [f for f in self.files if f.used]

    @property
    def cut(self) -> bool:
        """The cap cut a file or left one out."""
        return bool(self.left_out) or any(f.read.cut for f in self.files)

    def shown(self, path: Path) -> str:
        """``path`` as the user reads it (``~/proj/AGENTS.md``)."""
        return shown_path(path, self.home)

    def summary(self) -> str:
        """``Instructions: ~/proj/AGENTS.md, 2.1 KB`` (files comma-separated); ``""`` for none.

        Says when the cap cut them, and which files were refused.
        """
        used = [f"{self.shown(f.path)}, {size_text(f.read.size)}" for f in self.used]
        refused = [f for f in self.files if f.read.refused is not None]
        if not used and not refused:
            return ""
        line = f"Instructions: {', '.join(used)}" if used else "Instructions: none used"
        if self.cut:
            line += f" (cut at {size_text(self.cap)}, the most Koroku sends)"
        if refused:
            line += "; not read: " + ", ".join(
                f"{self.shown(f.path)} {f.read.refused}" for f in refused
            )
        return line


Listener = Callable[[LoadedInstructions], None]


class InstructionFiles:
    """The run's instruction files: where to look, whether the project counts, what was read.

    Built by the assembly (``modes/wiring.py``) without touching the disk;
    the agent calls :meth:`refresh` when it starts and at each turn, and the
    app reads :attr:`loaded` (and :meth:`trust` after the trust prompt).
    """

    def __init__(
        self,
        workspace: Path,
        *,
        names: Sequence[str],
        personal_dir: Path | None,
        trusted: bool,
        home: Path | None = None,
        cap: int = INSTRUCTIONS_CAP,
    ) -> None:
        self.workspace = Path(os.path.abspath(workspace))
        self.names = list(dict.fromkeys(names))  # a name listed twice is read once
        self.personal_dir = personal_dir
        self.trusted = trusted
        """Whether the project's files are used (the workspace is in a trusted folder)."""
        self.home = home
        self.cap = cap
        self.loaded: LoadedInstructions | None = None
        """What the last :meth:`refresh` read; ``None`` before the first."""
        self._signature: Signature | None = None
        self._listeners: list[Listener] = []

    @property
    def project_root(self) -> Path:
        """The folder the trust prompt offers to trust: the repository root, which the
        project's files span, or the workspace outside a repository.

        Not the user's home (or ``/``) when that is the repository (a dotfiles
        checkout): trusting it would trust every folder below, every clone
        in ``~/src`` included. The workspace is offered instead.
        """
        root = repository_root(self.workspace)
        if root is None or root == self.home or root == Path(root.anchor):
            return self.workspace
        return root

    @property
    def link_root(self) -> Path:
        """The folder no link of the project's files may lead out of: :attr:`project_root`,
        the one trust covers. Not the repository root when that is the home: in a dotfiles
        checkout, ``AGENTS.md -> ../../.ssh/id_rsa`` stayed "inside the repository"."""
        return self.project_root

    def project_files(self) -> list[Path]:
        """The project files present (instruction files and ``.koroku/config.toml``)."""
        return project_files(self.workspace, self.names)

    def listen(self, listener: Listener) -> None:
        """Call ``listener`` with each new reading (the first one, and each change after)."""
        self._listeners.append(listener)

    def trust(self) -> None:
        """The user trusted the project: its files count from the next :meth:`refresh`."""
        self.trusted = True

    def refresh(self) -> LoadedInstructions:
        """The files as they are now: read again only when one changed since the last time."""
        candidates = self._candidates()
        signature = (self.trusted, tuple(_stat_signature(path) for _scope, path in candidates))
        if self.loaded is not None and signature == self._signature:
            return self.loaded
        loaded = self._read(candidates)
        self.loaded, self._signature = loaded, signature
        for listener in self._listeners:
            listener(loaded)
        return loaded

    def _candidates(self) -> list[tuple[Scope, Path]]:
        found: list[tuple[Scope, Path]] = []
        if self.personal_dir is not None:
            found += [("personal", self.personal_dir / name) for name in self.names]
        for folder in project_folders(self.workspace):
            found += [("project", folder / name) for name in self.names]
        return found

    def _read(self, candidates: list[tuple[Scope, Path]]) -> LoadedInstructions:
        files: list[InstructionFile] = []
        left_out: list[Path] = []
        ignored: list[Path] = []
        room = self.cap
        root = self.link_root
        for scope, path in candidates:
            if scope == "project" and not self.trusted:
                if os.path.lexists(path):
                    ignored.append(path)
                continue
            if room <= 0:
                if os.path.lexists(path):
                    left_out.append(path)
                continue
            read = read_project_text(path, limit=room, root=root if scope == "project" else None)
            if read is None:
                continue
            files.append(InstructionFile(scope, read))
            room = 0 if read.cut else room - read.size  # a cut file took all there was
        return LoadedInstructions(
            tuple(files), tuple(left_out), tuple(ignored), home=self.home, cap=self.cap
        )


def _stat_signature(path: Path) -> tuple[str, int, int, int] | None:
    """What changes when a file is edited, replaced or removed; a link's target counts too."""
    try:
        info = os.stat(path)
    except OSError:
        try:
            info = os.lstat(path)  # a broken link or a refused one: its own stat
        except OSError:
            return None
    return (str(path), info.st_mtime_ns, info.st_size, info.st_ino)
