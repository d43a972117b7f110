"""The Koroku home is private: folders 0700, files 0600, tightened at start-up if looser.

New files and folders are created with these modes (the store, the log, the
memory files). A home made by an older Koroku, copied in, or created by hand
under a loose umask may be readable by others: at start-up every mode that is
looser is tightened (permissions are only ever taken away) and the log says
what changed. Symbolic links inside the home are left alone, so nothing
outside it is touched.
"""

from __future__ import annotations

import logging
import stat
from pathlib import Path

from koroku_tui.config.settings import DATABASE_FILENAME, MEMORY_DIRNAME

__all__ = ["FILE_MODE", "FOLDER_MODE", "tighten_home"]

logger = logging.getLogger(__name__)

FOLDER_MODE = 0o700
FILE_MODE = 0o600

_PRIVATE_FILE_PREFIXES = (DATABASE_FILENAME, "koroku.log")
"""The database (and its -wal, -shm, -journal) and the log (and its rotations)."""


def tighten_home(home: Path) -> list[Path]:
    """Take group and other permissions off the home's private files and folders.

    Returns the paths whose mode changed (each is also logged). Missing paths
    and ones that cannot be changed are skipped: this never stops Koroku.
    """
    changed: list[Path] = []
    if not home.is_dir():
        return changed
    _tighten(home, FOLDER_MODE, changed, follow=True)  # the home the user chose, link or not
    for entry in _entries(home):
        if entry.name.startswith(_PRIVATE_FILE_PREFIXES):
            _tighten(entry, FILE_MODE, changed)
    memory = home / MEMORY_DIRNAME
    if _tighten(memory, FOLDER_MODE, changed):
        for entry in _entries(memory):
            _tighten(entry, FILE_MODE, changed)
    return changed


def _entries(folder: Path) -> list[Path]:
    try:
        return list(folder.iterdir())
    except OSError:
        return []


def _tighten(path: Path, mode: int, changed: list[Path], *, follow: bool = False) -> bool:
    """Clear the bits beyond ``mode``; True if ``path`` is (now) a folder or file we own."""
    try:
        info = path.stat() if follow else path.lstat()
    except OSError:
        return False
    if stat.S_ISLNK(info.st_mode):
        return False
    kind_ok = stat.S_ISDIR(info.st_mode) if mode == FOLDER_MODE else stat.S_ISREG(info.st_mode)
    if not kind_ok:
        return False
    current = stat.S_IMODE(info.st_mode)
    wanted = current & mode
    if wanted != current:
        try:
            path.chmod(wanted)
        except OSError as exc:
            logger.warning("could not tighten %s (mode %o): %s", path, current, exc)
            return True
        logger.warning(
            "tightened %s from mode %o to %o: the Koroku home is private", path, current, wanted
        )
        changed.append(path)
    return True
