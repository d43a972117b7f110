"""What the store raises. Every message is one sentence a user can act on.

Callers catch ``StoreError`` to show ``str(exc)``; no sqlite3 exception ever
escapes the store's public methods.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from koroku_tui.config.settings import COMMAND
from koroku_tui.store.trouble import Trouble, trouble_of, trouble_of_text
from koroku_tui.store.trouble import advice as advice_for

__all__ = [
    "BusyWatcher",
    "MemoryNotFoundError",
    "SchemaTooNewError",
    "SessionBusyError",
    "SessionInTrashError",
    "SessionNotFoundError",
    "StoreError",
    "StoreNotInitializedError",
    "StoreOpenError",
    "StoreReadError",
    "StoreWriteError",
    "said_for",
]
"""What the store raises (re-exported by ``koroku_tui.store``); ``translate_errors``
below is for the store's own modules."""


def one_line(text: str) -> str:
    """Collapse whitespace so a message never spans lines (SQLite's sometimes do)."""
    return " ".join(text.split())


class StoreError(Exception):
    """Base class of every error the session store raises."""


class StoreOpenError(StoreError):
    """The database file cannot be opened; ``str()`` names the file and what to do."""

    def __init__(self, path: Path, problem: str, advice: str) -> None:
        self.path = path
        self.problem = one_line(problem)
        self.advice = one_line(advice)
        super().__init__(f"Cannot open the Koroku database {path}: {self.problem}. {self.advice}")


class SchemaTooNewError(StoreOpenError):
    """The file was written by a newer Koroku; it is left exactly as it was."""

    def __init__(self, path: Path, found: int, supported: int) -> None:
        self.found = found
        self.supported = supported
        super().__init__(
            path,
            f"it uses schema version {found}, but this Koroku knows only up to version {supported}",
            "Upgrade Koroku to open it; the file was not changed.",
        )


class StoreNotInitializedError(StoreError, RuntimeError):
    """A method needing the database was called before ``initialize()`` (or after ``close()``)."""

    def __init__(self) -> None:
        super().__init__("The session store is not open: await SessionManager.initialize() first.")


class SessionNotFoundError(StoreError, LookupError):
    """No session with the requested id exists (deleted, or never created)."""

    def __init__(self, path: Path, session_id: int) -> None:
        self.path = path
        self.session_id = session_id
        super().__init__(self.advice())

    def advice(self, command: str = COMMAND) -> str:
        """The message, naming ``command`` as the user starts Koroku (``uv run koroku-tui``)."""
        return (
            f"There is no session {self.session_id} in {self.path} (it may have been deleted); "
            f"`{command} --list` lists the sessions there."
        )


class MemoryNotFoundError(StoreError, LookupError):
    """No memory (or suggestion) with the requested id: deleted, or never made."""

    def __init__(self, memory_id: int) -> None:
        self.memory_id = memory_id
        super().__init__(f"There is no memory {memory_id} (it may have been deleted).")


def said_for(exc: StoreError, command: str) -> str:
    """``str(exc)``, with the command a user types named as ``command`` where it names one."""
    return exc.advice(command) if isinstance(exc, SessionNotFoundError) else str(exc)


class SessionInTrashError(SessionNotFoundError):
    """The session was deleted (it is in the trash): it must be restored to be used again.

    A ``SessionNotFoundError``: whoever only reads or continues live sessions
    (the recall tools, ``--session``) treats it as gone.
    """

    def advice(self, command: str = COMMAND) -> str:
        """The message: where to restore it (the same whichever way Koroku was started)."""
        return (
            f"Session {self.session_id} is in the trash: restore it in the history "
            "(ctrl+r, then ctrl+t shows the trash and Enter restores) to use it again."
        )


class SessionBusyError(StoreError):
    """Another Koroku process is running a turn on this session; nothing was written."""

    def __init__(self, session_id: int, pid: int) -> None:
        self.session_id = session_id
        self.pid = pid
        super().__init__(
            f"This conversation is busy in another Koroku window (process {pid}); "
            "start a new conversation (--new, or ctrl+l in the app) or try again "
            "when that turn ends."
        )


BusyWatcher = Callable[[SessionBusyError], Awaitable[None]]
"""Told of each attempt to take a session that found it busy, before the next (or giving up)."""


class StoreWriteError(StoreError):
    """Saving failed; the message says why (damaged file, full disk, another window...)."""

    def __init__(self, path: Path, problem: str, trouble: Trouble | None = None) -> None:
        self.trouble = trouble or trouble_of_text(problem)
        what, todo = advice_for(self.trouble, path, one_line(problem))
        super().__init__(
            f"Koroku could not save to {path}: {what}. Nothing was half-written. {todo}"
        )


class StoreReadError(StoreError):
    """Reading failed; the message says why (damaged file, another window...)."""

    def __init__(self, path: Path, problem: str, trouble: Trouble | None = None) -> None:
        self.trouble = trouble or trouble_of_text(problem)
        what, todo = advice_for(self.trouble, path, one_line(problem))
        super().__init__(f"Koroku could not read {path}: {what}. {todo}")


@contextmanager
def translate_errors(path: Path, error: type[StoreWriteError | StoreReadError]) -> Iterator[None]:
    """Re-raise sqlite3 errors (and aiosqlite's "Connection closed") as ``error``."""
    try:
        yield
    except sqlite3.Error as exc:
        raise error(path, str(exc), trouble_of(exc)) from exc
    except ValueError as exc:
        # aiosqlite raises a bare ValueError for a connection closed under it.
        if "closed" not in str(exc).lower():
            raise
        raise error(path, str(exc), Trouble.CLOSED) from exc
