"""The Koroku home is private: Koroku's folders are 0700 and its files 0600.

Koroku makes its files and folders with these modes (the store, the log, the
memory files, ``unsent.txt``, ``demo/``). At start-up, those of its own entries
in the home left looser (by an older Koroku, a copy, a loose umask) lose their
group and other permissions (only ever taken away, other bits kept) and the
log says what changed.

The home folder itself is never changed: it may be a folder the user already
had (``KOROKU_HOME=$HOME``, a shared folder), whose mode, sticky and setgid
bits are theirs. When other users can read or write it, :func:`home_warning`
says so in one line. Symbolic links are never followed, so nothing outside the
home is touched.
"""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

from koroku_tui.config import settings as names  # the home's own file and folder names
from koroku_tui.text.safety import escape_hidden

__all__ = ["FILE_MODE", "FOLDER_MODE", "home_warning", "tighten_home"]

logger = logging.getLogger(__name__)

FOLDER_MODE = 0o700
FILE_MODE = 0o600
_OTHERS = 0o077
"""Every group and other permission."""

_OWN_FILE_PREFIXES = (names.DATABASE_FILENAME, "koroku.log", names.UNSENT_FILENAME)
"""The database (and its -wal, -shm, -journal), the log (and its rotations), unsent.txt."""
_DAY_FILE_LENGTH = len("dd-mm-yyyy.md")


def tighten_home(home: Path) -> list[Path]:
    """Take group and other permissions off Koroku's own files and folders in ``home``.

    ``home`` itself is left as it is (see :func:`home_warning`). Returns the
    paths whose mode changed (each is also logged). Missing paths, links and
    ones that cannot be changed are skipped: this never stops Koroku.
    """
    changed: list[Path] = []
    try:
        if not home.is_dir():
            return changed
    except OSError:
        return changed
    _tighten_own(home, changed)
    demo = home / names.DEMO_DIRNAME
    # demo/ is Koroku's when it holds the demo's database (a folder of the
    # user's that happens to be called demo is not).
    if _is_regular(demo / names.DATABASE_FILENAME) and _tighten(demo, changed, folder=True):
        _tighten_own(demo, changed)
    return changed


def home_warning(home: Path) -> str | None:
    """One line when users other than its owner can read or write ``home``, else None.

    Only when they can also reach it: a folder above it that they cannot
    pass through (a 0700 parent) keeps it private whatever its own mode.
    """
    try:
        info = os.stat(home)
    except OSError:
        return None
    if not stat.S_ISDIR(info.st_mode):
        return None
    mode = stat.S_IMODE(info.st_mode)
    if not any(
        mode & read_write and _reachable(home, search)
        for read_write, search in ((0o060, 0o010), (0o006, 0o001))  # group, others
    ):
        return None
    warning = (
        f"The Koroku home {escape_hidden(str(home))} is open to other users (mode {mode:o}); "
        "Koroku leaves a folder it did not make as it is: chmod go-rwx it to keep your "
        "conversations private."
    )
    logger.warning("%s", warning)
    return warning


def _reachable(home: Path, search: int) -> bool:
    """True when every folder above ``home`` has the ``search`` (x) bit for that class."""
    for parent in Path(os.path.realpath(home)).parents:
        try:
            if not os.stat(parent).st_mode & search:
                return False
        except OSError:
            return True
    return True


def _tighten_own(folder: Path, changed: list[Path]) -> None:
    """Koroku's files in ``folder`` (a home), and its ``memory/`` with its day files."""
    for entry in _entries(folder):
        if entry.name.startswith(_OWN_FILE_PREFIXES):
            _tighten(entry, changed, folder=False)
    memory = folder / names.MEMORY_DIRNAME
    if _tighten(memory, changed, folder=True):
        for entry in _entries(memory):
            if entry.name.endswith(".md") and len(entry.name) == _DAY_FILE_LENGTH:
                _tighten(entry, changed, folder=False)


def _entries(folder: Path) -> list[Path]:
    try:
        return list(folder.iterdir())
    except OSError:
        return []


def _is_regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(path.lstat().st_mode)
    except OSError:
        return False


def _tighten(path: Path, changed: list[Path], *, folder: bool) -> bool:
    """Clear the group and other bits of ``path``; True if it is a folder (or file) of ours.

    Opened without following a link (and without blocking on a FIFO), then
    changed through the descriptor: a link swapped in meanwhile is never
    followed.
    """
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(path, flags | (os.O_DIRECTORY if folder else 0))
    except OSError:
        return False  # missing, a link, not a folder, or not readable by us
    try:
        info = os.fstat(fd)
        if not (stat.S_ISDIR if folder else stat.S_ISREG)(info.st_mode):
            return False
        current = stat.S_IMODE(info.st_mode)
        wanted = current & ~_OTHERS
        if wanted != current:
            try:
                os.fchmod(fd, wanted)
            except OSError as exc:
                logger.warning("could not tighten %s (mode %o): %s", path, current, exc)
                return True
            logger.warning(
                "tightened %s from mode %o to %o: the Koroku home is private", path, current, wanted
            )
            changed.append(path)
        return True
    finally:
        os.close(fd)
