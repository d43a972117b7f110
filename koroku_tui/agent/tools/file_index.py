"""The workspace's files, listed once for the ``@`` picker, as ``git`` would list them.

``.gitignore`` files are honoured as git reads them: each applies below its
own folder, a deeper one wins over a shallower one, the last matching line
wins within a file, ``!`` re-includes, and nothing below an ignored folder is
listed (git cannot re-include it either). ``.git`` is skipped. Links are
never followed into folders (no loops, no way out); a link to a file is
listed only when its target is a file inside the workspace.

The listing runs on a thread (``FileIndex.build``); the picker queries what
is listed so far (``FileIndex.search``), so first results come before the
walk of a large tree ends. Lines use ``pathspec``'s gitignore patterns; one
combined regular expression per file tells most paths "no line matches"
in a single search (per-line matching cost a second on 100,000 files).

Compiling patterns costs too, more than in proportion (1,000 lines a
tenth of a second, 5,000 nearly two): a ``.gitignore`` is honoured for its
first ``MAX_IGNORE_LINES_PER_FILE`` patterns, a walk for ``MAX_IGNORE_LINES``
in all. A 100,000-line ``.gitignore`` kept the list empty for half a minute;
past the caps the list shows files git would hide, nothing worse.
"""

from __future__ import annotations

import os
import re
import stat
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from pathspec import GitIgnoreSpec

from koroku_tui.agent.tools.fuzzy import Candidates, rank
from koroku_tui.privacy.home_files import read_at_most

__all__ = ["MAX_FILES", "MAX_IGNORE_LINES", "MAX_IGNORE_LINES_PER_FILE", "FileIndex", "IgnoreRules"]

MAX_FILES = 250_000
"""Files listed at most: a home folder or a whole disk must not fill the memory."""
MAX_IGNORE_LINES_PER_FILE = 1_000
"""Patterns of one ``.gitignore`` honoured at most (its first ones)."""
MAX_IGNORE_LINES = 10_000
"""Patterns of all ``.gitignore`` files honoured at most in one walk."""

_GROUP = re.compile(r"\(\?P<\w+>")
_SKIPPED = frozenset({".git"})
_GITIGNORE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC


@dataclass(frozen=True)
class _Rules:
    """One ``.gitignore``: its folder (``""`` or ``"src/"``) and its lines."""

    base: str
    spec: GitIgnoreSpec
    any_line: re.Pattern[str]

    def verdict(self, path: str) -> bool | None:
        """True ignored, False re-included, None no line of this file speaks of ``path``."""
        if not path.startswith(self.base):
            return None
        relative = path[len(self.base) :]
        if self.any_line.search(relative) is None:
            return None
        return self.spec.check_file(relative).include


def _rules(base: str, lines: list[str]) -> _Rules | None:
    spec = GitIgnoreSpec.from_lines(lines)
    patterns = [
        _GROUP.sub("(?:", regex.pattern)
        for p in spec.patterns
        if p.include is not None and (regex := getattr(p, "regex", None)) is not None
    ]
    if not patterns:
        return None
    return _Rules(base, spec, re.compile("|".join(f"(?:{p})" for p in patterns)))


@dataclass
class IgnoreRules:
    """The ``.gitignore`` files in force in one folder, the shallowest first."""

    stack: tuple[_Rules, ...] = ()

    def below(self, folder: str, lines: list[str]) -> IgnoreRules:
        """The rules in force in ``folder`` (``"src/"``), given its own ``.gitignore`` patterns."""
        if not lines:
            return self
        rules = _rules(folder, lines)
        return self if rules is None else IgnoreRules((*self.stack, rules))

    def ignored(self, path: str) -> bool:
        """Whether ``path`` (``"src/a.py"``, a folder with a trailing ``/``) is ignored."""
        for rules in reversed(self.stack):  # the deepest file that speaks decides
            verdict = rules.verdict(path)
            if verdict is not None:
                return verdict
        return False


@dataclass
class FileIndex:
    """The workspace's files (paths from it, ``/``-separated), listed on a thread."""

    workspace: Path
    paths: list[str] = field(default_factory=list)
    """Listed so far, in walk order (appended by the building thread)."""
    done: threading.Event = field(default_factory=threading.Event)
    """Set when the walk ended (or stopped at ``MAX_FILES``)."""
    truncated: bool = False
    """The walk stopped at ``MAX_FILES``."""
    stopped: threading.Event = field(default_factory=threading.Event)
    """Set to end the walk early (the picker closed, or opened again on a new index)."""
    _candidates: Candidates = field(default_factory=Candidates)

    def build(self, on_batch: Callable[[], None] | None = None, batch: int = 2_000) -> None:
        """Walk the workspace (blocking: run it on a thread); ``on_batch`` after each batch."""
        root = str(self.workspace)
        real_root = os.path.realpath(root)
        pending: list[tuple[str, IgnoreRules]] = [("", IgnoreRules())]
        since, room = 0, MAX_IGNORE_LINES
        try:
            while pending and not self.stopped.is_set():
                folder, rules = pending.pop()
                lines = _read_gitignore(os.path.join(root, folder))
                lines = lines[: min(MAX_IGNORE_LINES_PER_FILE, room)]
                room -= len(lines)
                rules = rules.below(folder, lines)
                subfolders: list[tuple[str, IgnoreRules]] = []
                for name, kind in _entries(os.path.join(root, folder)):
                    path = folder + name
                    if kind == "dir":
                        if name not in _SKIPPED and not rules.ignored(path + "/"):
                            subfolders.append((path + "/", rules))
                        continue
                    if rules.ignored(path):
                        continue
                    if kind == "link" and not _file_inside(os.path.join(root, path), real_root):
                        continue
                    self.paths.append(path)
                    since += 1
                    if len(self.paths) >= MAX_FILES:
                        self.truncated = True
                        return
                    if since >= batch and on_batch is not None:
                        since = 0
                        on_batch()
                # Sorted reversed so that pop() walks folders in name order.
                pending.extend(sorted(subfolders, reverse=True))
        finally:
            self.done.set()
            if on_batch is not None:
                on_batch()

    def search(self, query: str, limit: int = 50) -> list[str]:
        """The best ``limit`` paths for ``query`` among those listed so far (see ``fuzzy``)."""
        return rank(self._candidates.update(self.paths), query, limit)


def _entries(folder: str) -> list[tuple[str, str]]:
    """A folder's names with their kind (``dir``, ``file``, ``link``), sorted; plain names only."""
    found: list[tuple[str, str]] = []
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                name = entry.name
                if not name.isprintable() or any(c in name for c in '"\\'):
                    continue  # could not be written after "@" and read back the same
                try:
                    if entry.is_symlink():
                        kind = "link"
                    elif entry.is_dir(follow_symlinks=False):
                        kind = "dir"
                    elif entry.is_file(follow_symlinks=False):
                        kind = "file"
                    else:
                        continue  # pipes, sockets, devices: never attached
                except OSError:
                    continue
                found.append((name, kind))
    except OSError:  # unreadable, or gone meanwhile
        return []
    found.sort()
    return found


def _read_gitignore(folder: str) -> list[str]:
    """The pattern lines of ``folder``'s ``.gitignore`` (no blank line, no comment)."""
    try:
        # No link (it could read a file outside the workspace); O_NONBLOCK and
        # the regular-file check: a FIFO named .gitignore held the walk forever.
        fd = os.open(os.path.join(folder, ".gitignore"), _GITIGNORE_FLAGS)
    except OSError:
        return []
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return []
        text = read_at_most(fd, 1_000_000).decode("utf-8", errors="replace")
    except OSError:
        return []
    finally:
        os.close(fd)
    return [line for line in text.splitlines() if line.strip() and not line.startswith("#")]


def _file_inside(path: str, real_root: str) -> bool:
    """Whether the link at ``path`` leads to a regular file inside the workspace."""
    target = os.path.realpath(path)
    inside = target == real_root or target.startswith(real_root.rstrip("/") + "/")
    return inside and os.path.isfile(target)
