"""Opening the database file safely: create it private, refuse what we must not touch, migrate.

The order matters. A newer Koroku's file, or a file that is not ours, is
inspected through a read-only connection and refused before anything could
write to it (switching to WAL, migrating). Every failure becomes a
``StoreOpenError`` whose message names the file and what to do.
"""

from __future__ import annotations

import errno
import logging
import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import aiosqlite

from koroku_tui.privacy.file_modes import FILE_MODE, FOLDER_MODE
from koroku_tui.store.errors import SchemaTooNewError, StoreOpenError, one_line
from koroku_tui.store.schema import (
    SCHEMA_VERSION,
    MigrationProgress,
    SchemaVersionError,
    is_seed_messages_table,
    migrate,
    table_names,
    user_version,
)
from koroku_tui.store.trouble import Trouble, advice, trouble_of

__all__ = [
    "open_connection",
    "prepare_database",
    "read_only_uri",
    "reading_uri",
    "translate_open_errors",
    "upgrade_pending",
]

logger = logging.getLogger(__name__)


def _sqlite_advice(path: Path, exc: sqlite3.Error, busy_timeout_ms: int) -> tuple[str, str]:
    trouble = trouble_of(exc)
    problem, todo = advice(trouble, path, one_line(str(exc)), open_=False)
    if trouble is Trouble.BUSY:
        problem += f" (waited {busy_timeout_ms / 1000:g} s)"
    return problem, todo


def _os_advice(exc: OSError) -> tuple[str, str]:
    reason = exc.strerror or str(exc)
    if exc.errno in (errno.EACCES, errno.EPERM):
        return (
            f"permission denied ({reason})",
            "Check the owner and permissions of the file and its folder.",
        )
    if exc.errno == errno.ENOSPC:
        return ("the disk is full", "Free some disk space and try again.")
    return (reason, "Check that the path is a file in a folder you can write.")


@contextmanager
def translate_open_errors(path: Path, busy_timeout_ms: int) -> Iterator[None]:
    """Turn sqlite3 and OS errors raised while opening into ``StoreOpenError``."""
    try:
        yield
    except StoreOpenError:
        raise
    except SchemaVersionError as exc:
        raise SchemaTooNewError(path, exc.found, SCHEMA_VERSION) from None
    except sqlite3.Error as exc:
        problem, todo = _sqlite_advice(path, exc, busy_timeout_ms)
        raise StoreOpenError(path, problem, todo) from exc
    except OSError as exc:
        problem, todo = _os_advice(exc)
        raise StoreOpenError(path, problem, todo) from exc
    except ValueError as exc:  # aiosqlite: "Connection closed"; sqlite3: NUL in path
        raise StoreOpenError(path, str(exc), "Check the path and try again.") from exc


def _create_private_file(path: Path) -> None:
    """Create ``path`` empty with mode 0600 unless it exists; parent folders too."""
    if path.is_dir():
        raise StoreOpenError(
            path,
            "it is a folder, not a database file",
            "Give the path of a file (or remove the folder).",
        )
    parent = path.parent
    try:
        # A folder we create holds private conversations too (only the last
        # component gets the mode; existing folders are left as they are).
        parent.mkdir(mode=FOLDER_MODE, parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreOpenError(
            path,
            f"its folder {parent} cannot be created ({exc.strerror or exc})",
            "Check that no file stands where a folder of the path should be.",
        ) from exc
    try:
        # Created here, before SQLite sees it, so it is never world-readable
        # even for an instant (SQLite gives its -wal/-shm files the same mode).
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    except FileExistsError:
        return
    os.close(fd)


def _read_only_uri(path: Path) -> str:
    return path.resolve().as_uri() + "?mode=ro"


def _check_file(path: Path, busy_timeout_ms: int, uri: str | None = None) -> int:
    """Return the file's schema version after checking we may write to it.

    Uses a read-only connection (``uri``, default ``mode=ro``): a refused file
    must stay byte-for-byte as it was, and even a plain close can checkpoint
    a leftover WAL into it.
    """
    uri = uri or _read_only_uri(path)
    conn = sqlite3.connect(uri, uri=True, timeout=busy_timeout_ms / 1000)
    try:
        version = user_version(conn)  # also the first read: "not a database" shows here
        if version > SCHEMA_VERSION:
            raise SchemaTooNewError(path, version, SCHEMA_VERSION)
        if version == 0:
            tables = table_names(conn)
            if tables and not ("messages" in tables and is_seed_messages_table(conn)):
                raise StoreOpenError(
                    path,
                    f"it is an SQLite database of another program (tables: "
                    f"{', '.join(sorted(tables)[:5])})",
                    "Choose another Koroku home (--home); the file was not changed.",
                )
        return version
    finally:
        conn.close()


def _apply_pragmas(conn: sqlite3.Connection, busy_timeout_ms: int) -> None:
    conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
    mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
    if str(mode).lower() != "wal":
        logger.warning("SQLite kept journal mode %r instead of WAL", mode)
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA foreign_keys = ON")


def prepare_database(
    path: Path, busy_timeout_ms: int, progress: MigrationProgress | None = None
) -> None:
    """Create, check and migrate the file (blocking; run it in a thread)."""
    with translate_open_errors(path, busy_timeout_ms):
        _create_private_file(path)
        _check_file(path, busy_timeout_ms)
        conn = sqlite3.connect(path, timeout=busy_timeout_ms / 1000, isolation_level=None)
        try:
            _apply_pragmas(conn, busy_timeout_ms)
            found = migrate(conn, progress)
            if found < SCHEMA_VERSION:
                logger.info("Migrated %s from schema %d to %d", path, found, SCHEMA_VERSION)
        finally:
            conn.close()


def read_only_uri(path: Path, busy_timeout_ms: int) -> str:
    """How to open ``path`` in a read-only home, checked as ``prepare_database`` checks it.

    Nothing is created, switched or migrated: a file that needs an update
    (or does not exist) is refused in one sentence. SQLite reads a WAL file
    through its ``-shm`` index, which it cannot create in a read-only folder
    once Koroku closed the file cleanly (the index goes with the close); the
    file is then read as ``immutable``, which needs no index.
    """
    with translate_open_errors(path, busy_timeout_ms):
        if not path.is_file():
            raise StoreOpenError(
                path,
                "Koroku's home is read-only and holds no conversations yet",
                "Make the folder writable, or choose another home (--home).",
            )
        uri = _read_only_uri(path)
        try:
            version = _check_file(path, busy_timeout_ms, uri)
        except sqlite3.OperationalError as exc:
            if trouble_of(exc) is not Trouble.CANNOT_OPEN:
                raise
            uri += "&immutable=1"
            version = _check_file(path, busy_timeout_ms, uri)
        if version < SCHEMA_VERSION:
            raise StoreOpenError(
                path,
                f"this Koroku must update it (schema version {version} to {SCHEMA_VERSION}) "
                "and its folder is read-only",
                "Make the folder writable once so Koroku can update the file, or choose "
                "another home (--home); the file was not changed.",
            )
        return uri


def reading_uri(path: Path) -> str:
    """How a second, read-only connection opens the file the store has open (WAL lets it)."""
    return _read_only_uri(path)


def upgrade_pending(path: Path) -> bool:
    """True when an existing database file has an older schema (opening will migrate it).

    Cheap (reads the header only), so a UI can decide before opening whether
    to show migration progress. Any problem reading the file says ``False``:
    opening it reports the problem properly.
    """
    try:
        if not path.is_file() or path.stat().st_size == 0:
            return False
        conn = sqlite3.connect(_read_only_uri(path), uri=True)
        try:
            return 0 < user_version(conn) < SCHEMA_VERSION or (
                user_version(conn) == 0 and is_seed_messages_table(conn)
            )
        finally:
            conn.close()
    except (OSError, sqlite3.Error):
        return False


def _lenient_text(raw: bytes) -> str:
    return raw.decode("utf-8", errors="replace")


async def open_connection(
    path: Path, busy_timeout_ms: int, read_only: str | None = None
) -> aiosqlite.Connection:
    """The long-lived connection, in autocommit mode: the store issues its own BEGINs.

    ``read_only``: the URI ``read_only_uri`` chose; the journal is left as it is.
    """
    with translate_open_errors(path, busy_timeout_ms):
        conn = await aiosqlite.connect(
            read_only or path,
            timeout=busy_timeout_ms / 1000,
            isolation_level=None,
            uri=read_only is not None,
        )
        # A row of invalid UTF-8 (another program's, a damaged disk's) reads with
        # replacement characters: as str, it failed the whole query it was in (a
        # search's hits, the meaning pass's batch, a ``--print`` search's candidates).
        conn.text_factory = _lenient_text
        try:
            rows = list(await conn.execute_fetchall("PRAGMA user_version"))
            version = int(rows[0][0])
            # Another process could have changed the file since the check.
            if version > SCHEMA_VERSION:
                raise SchemaVersionError(version)
            if version < SCHEMA_VERSION:
                raise StoreOpenError(
                    path,
                    f"its schema went back to version {version} while opening",
                    "Close other programs using the file and try again.",
                )
            await conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
            if read_only is None:
                await conn.execute("PRAGMA journal_mode = WAL")
                await conn.execute("PRAGMA synchronous = NORMAL")
            await conn.execute("PRAGMA foreign_keys = ON")
        except BaseException:
            await conn.close()
            raise
        return conn
