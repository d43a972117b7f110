"""What an SQLite failure means for the user: damage, a full disk, another window...

The store's messages must point the right way: a damaged file told as "close
other Koroku windows" sends the user after the wrong thing. Failures are
sorted by SQLite's result code (``sqlite_errorcode``), which is stable across
versions and languages; the message text is only read for errors that carry
no code (Python's own sqlite3 errors, aiosqlite's "Connection closed", or a
message handed over as text).
"""

from __future__ import annotations

import shlex
import sqlite3
from enum import Enum
from pathlib import Path

__all__ = ["Trouble", "advice", "recovery_step", "trouble_of", "trouble_of_text"]


class Trouble(Enum):
    """The families of store failure that need different advice."""

    DAMAGED = "damaged"
    """SQLITE_CORRUPT: a page, an index or the search index does not hold together."""
    NOT_A_DATABASE = "not_a_database"
    """SQLITE_NOTADB: no SQLite header; another file, or a file damaged from its start."""
    DISK_FULL = "disk_full"
    """SQLITE_FULL: no room left on the disk (or the file hit its size limit)."""
    BUSY = "busy"
    """SQLITE_BUSY / LOCKED / PROTOCOL: another connection holds the lock."""
    READ_ONLY = "read_only"
    """SQLITE_READONLY: the file or its folder cannot be written."""
    CANNOT_OPEN = "cannot_open"
    """SQLITE_CANTOPEN / PERM: the path cannot be opened at all."""
    IO_ERROR = "io_error"
    """SQLITE_IOERR: the operating system failed a read or a write."""
    CLOSED = "closed"
    """The connection was closed under the store (aiosqlite, or Python's sqlite3)."""
    OTHER = "other"


_BY_CODE = {
    sqlite3.SQLITE_CORRUPT: Trouble.DAMAGED,
    sqlite3.SQLITE_NOTADB: Trouble.NOT_A_DATABASE,
    sqlite3.SQLITE_FULL: Trouble.DISK_FULL,
    sqlite3.SQLITE_BUSY: Trouble.BUSY,
    sqlite3.SQLITE_LOCKED: Trouble.BUSY,
    sqlite3.SQLITE_PROTOCOL: Trouble.BUSY,
    sqlite3.SQLITE_READONLY: Trouble.READ_ONLY,
    sqlite3.SQLITE_CANTOPEN: Trouble.CANNOT_OPEN,
    sqlite3.SQLITE_PERM: Trouble.CANNOT_OPEN,
    sqlite3.SQLITE_IOERR: Trouble.IO_ERROR,
}

# Text fallbacks, most specific first (only for errors without a code).
_BY_TEXT = (
    ("malformed", Trouble.DAMAGED),
    ("corrupt", Trouble.DAMAGED),
    ("not a database", Trouble.NOT_A_DATABASE),
    ("file is encrypted", Trouble.NOT_A_DATABASE),
    ("disk is full", Trouble.DISK_FULL),
    ("locked", Trouble.BUSY),
    ("busy", Trouble.BUSY),
    ("readonly", Trouble.READ_ONLY),
    ("read-only", Trouble.READ_ONLY),
    ("unable to open", Trouble.CANNOT_OPEN),
    ("disk i/o error", Trouble.IO_ERROR),
    ("closed", Trouble.CLOSED),
)


def trouble_of_text(text: str) -> Trouble:
    """Sort a failure known only by its message."""
    lowered = text.lower()
    for needle, trouble in _BY_TEXT:
        if needle in lowered:
            return trouble
    return Trouble.OTHER


def trouble_of(exc: BaseException) -> Trouble:
    """Sort a failure raised by sqlite3 or aiosqlite, by its result code when it has one."""
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int):
        # Extended codes (SQLITE_CORRUPT_INDEX = 779...) keep the primary in the low byte.
        found = _BY_CODE.get(code & 0xFF)
        if found is not None:
            return found
    return trouble_of_text(str(exc))


def recovery_step(path: Path) -> str:
    """The shell step that saves what is readable of a damaged database (run in its folder)."""
    # The damaged file is kept whatever happens: a sqlite3 shell without
    # .recover (Debian 12's) prints an error and an empty script, and swapping
    # in what that builds would throw the history away.
    name = path.name
    damaged = path.stem + "-damaged" + path.suffix
    script = path.stem + "-recovered.sql"
    recovered = path.stem + "-recovered" + path.suffix
    return (
        f"in {path.parent} run `cp {shlex.quote(name)} {shlex.quote(damaged)}`, then "
        f"`sqlite3 {shlex.quote(damaged)} .recover > {shlex.quote(script)}` (`.dump` where "
        f"your sqlite3 has no .recover); only if {script} holds your messages, run "
        f"`sqlite3 {shlex.quote(recovered)} < {shlex.quote(script)}` and move {recovered} "
        f"to {name}"
    )


def advice(trouble: Trouble, path: Path, detail: str, *, open_: bool = True) -> tuple[str, str]:
    """``(what is wrong, what to do)`` for ``trouble`` on ``path``; ``detail`` is SQLite's text.

    The first part follows "Koroku could not read <path>: " (or "save to",
    "open"); the second is a sentence of its own. ``open_``: Koroku is running
    on the file, so recovering it starts with quitting.
    """
    if trouble is Trouble.DAMAGED:
        first = "Quit Koroku, then save" if open_ else "Save"
        return (
            f"the file is damaged ({detail})",
            f"{first} what is readable: {recovery_step(path)}; "
            "or move the file aside to start afresh.",
        )
    if trouble is Trouble.NOT_A_DATABASE:
        # No SQLite header left: even .recover cannot read it, so no command here.
        return (
            f"it is not an SQLite database, or its first page is damaged ({detail})",
            "If it was Koroku's, restore it from a backup or move it aside to start afresh; "
            "otherwise choose another Koroku home (--home).",
        )
    if trouble is Trouble.DISK_FULL:
        return ("the disk is full", "Free some disk space and try again.")
    if trouble is Trouble.BUSY:
        return (
            "another Koroku window or program holds a lock on it",
            "Close it or wait for it to finish, then try again.",
        )
    if trouble is Trouble.READ_ONLY:
        return (
            "the file or its folder is read-only",
            "Make them writable (chmod u+w) or choose another Koroku home (--home).",
        )
    if trouble is Trouble.CANNOT_OPEN:
        return (
            "SQLite cannot open it",
            "Check that the path is a file you can read and write, in a folder you can write.",
        )
    if trouble is Trouble.IO_ERROR:
        return (
            f"the system reported an input/output error ({detail})",
            "Check the disk (it may be failing, unplugged or a network drive that went "
            "away), then try again.",
        )
    if trouble is Trouble.CLOSED:
        return ("the database was closed while in use", "Restart Koroku and try again.")
    return (f"SQLite reported: {detail}", "Try again, and move the file aside if it persists.")
