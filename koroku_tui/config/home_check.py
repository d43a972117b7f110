"""What the chosen home folder is, before anything is opened in it.

Two things a user can point ``KOROKU_HOME`` (or ``--home``) at that are not
a usable home deserve their own sentence rather than SQLite's: a file (or a
path through one), and a folder Koroku cannot write to. The first is
refused; the second is opened for reading only (the history can be browsed
and searched, nothing sent or changed), as a read-only database file is.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

__all__ = ["not_a_folder", "read_only_home"]


def not_a_folder(home: Path) -> str | None:
    """Why ``home`` cannot be a folder ("X is a file, not a folder"), or None.

    The nearest part of the path that exists decides: a file there means the
    home can be neither opened nor created. Anything else unreadable is left
    to the opening, which says what it met.
    """
    for path in (home, *home.parents):
        try:
            info = path.stat()
        except (FileNotFoundError, NotADirectoryError):  # not there, or under a file
            continue
        except (OSError, ValueError):
            return None
        if stat.S_ISDIR(info.st_mode):
            return None
        if path == home:
            return f"{home} is a file, not a folder"
        return f"{home} cannot be a folder: {path} is a file, not a folder"
    return None


def read_only_home(home: Path) -> bool:
    """True when ``home`` is an existing folder Koroku cannot write in.

    ``os.access`` asks the kernel, so a read-only mount counts even for root,
    and so do modes, ACLs and the effective user.
    """
    try:
        return home.is_dir() and not os.access(home, os.W_OK)
    except (OSError, ValueError):
        return False
