"""Telling, after a read, that the file read had no name but its workspace one.

A hard link inside the workspace to a file outside it cannot be told from
any other name, so ``read_file`` refuses files with more than one link. The
count can be raced: another process links an outside file in, lets the tool
open it, and unlinks the workspace name at once, so that ``fstat`` counts one
link. Nor does one look at the name after the read settle it: Linux drops an
unlinked file's count a moment *before* the name disappears from lookups, so
a name that is being unlinked can show the outside file with one link.

So, after the read, :func:`only_name` asks three things in order:

1. the opened file has one link;
2. then nothing is being linked or unlinked in the folder any more: a lookup
   of a name that does not exist waits for the folder's lock, which a link or
   unlink holds until its name is really gone;
3. then the very name the file was opened by is still there (Linux:
   ``/proc/self/fd``; a name once unlinked never comes back), and the name
   still leads to the file with one link.

If the opening name was still there after step 2, it was a whole name at
step 1, when the file had exactly one link: that name, in the workspace.
"""

from __future__ import annotations

import os
import secrets

__all__ = ["only_name"]


def only_name(fd: int, folder_fd: int, name: bytes) -> bool:
    """True when the file open as ``fd`` was known only as ``name`` in ``folder_fd``."""
    opened = os.fstat(fd)
    if opened.st_nlink != 1:
        return False
    _settle(folder_fd)
    try:
        now = os.stat(name, dir_fd=folder_fd, follow_symlinks=False)
    except FileNotFoundError:
        return False
    if (now.st_dev, now.st_ino) != (opened.st_dev, opened.st_ino) or now.st_nlink != 1:
        return False
    return _opened_name_is_linked(fd, folder_fd, name)


def _settle(folder_fd: int) -> None:
    """Wait until no link or unlink is under way in the folder.

    A name nobody has looked up is not in the kernel's cache, so looking it
    up takes the folder's lock (shared), after any unlink holding it.
    """
    missing = b".koroku-settle-" + secrets.token_hex(8).encode("ascii")
    try:
        os.stat(missing, dir_fd=folder_fd, follow_symlinks=False)
    except OSError:
        return


def _opened_name_is_linked(fd: int, folder_fd: int, name: bytes) -> bool:
    """False when the name ``fd`` was opened by has been unlinked (or moved) since."""
    try:
        opened_as = os.readlink(b"/proc/self/fd/%d" % fd)
        folder = os.readlink(b"/proc/self/fd/%d" % folder_fd)
    except OSError:
        return True  # no /proc (not Linux): steps 1 and 3's own look must do
    # An unlinked name reads "<path> (deleted)"; a moved one, its new path.
    return opened_as == folder.rstrip(b"/") + b"/" + name
