"""The SQL of file snapshots: what a file held before Koroku wrote it, and what it wrote.

Contents are kept once per SHA-256 (``file_contents``); a snapshot row
(``file_snapshots``) names a path, the state before (a content, or ``NULL``:
the file did not exist; its mode) and the state Koroku put there (a content,
or ``NULL``: Koroku removed it). A row belongs either to a ``write_file`` call
(its model row and the call's index in it) or to a restore (``file_restores``,
itself a row: a restore is recorded, and undone by another restore).

Paths are opaque bytes here: the store knows nothing of the workspace. Callers
hold the manager's lock and, for writes, the transaction.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

import aiosqlite

from koroku_tui.store.file_records import FileRestoreRecord, FileState, FileWrite
from koroku_tui.store.queries import first_int

__all__ = [
    "content_hash",
    "drop_unused_contents",
    "fetch_first_writes_from",
    "fetch_restore",
    "fetch_restore_rows",
    "forget_restored",
    "forget_session",
    "insert_restore",
    "insert_snapshot",
    "latest_restore",
    "latest_write_of",
]


def content_hash(data: bytes) -> str:
    """The key a content is kept under (SHA-256, hex)."""
    return hashlib.sha256(data).hexdigest()


async def _keep_content(conn: aiosqlite.Connection, data: bytes | None) -> str | None:
    if data is None:
        return None
    digest = content_hash(data)
    await conn.execute(
        "INSERT OR IGNORE INTO file_contents(hash, size, data) VALUES (?, ?, ?)",
        (digest, len(data), data),
    )
    return digest


async def insert_snapshot(
    conn: aiosqlite.Connection,
    *,
    session_id: int,
    path: bytes,
    before: FileState,
    after: FileState,
    when: float,
    message_id: int | None = None,
    call_index: int | None = None,
    restore_id: int | None = None,
) -> int:
    """Store one snapshot row (and the contents it names, once each); return its id."""
    before_hash = await _keep_content(conn, before.data)
    after_hash = await _keep_content(conn, after.data)
    snapshot_id = await first_int(
        conn,
        "INSERT INTO file_snapshots(session_id, message_id, call_index, restore_id, path, "
        "before_hash, before_mode, after_hash, after_mode, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
        (
            session_id,
            message_id,
            call_index,
            restore_id,
            path,
            before_hash,
            before.mode,
            after_hash,
            after.mode,
            when,
        ),
    )
    assert snapshot_id is not None  # RETURNING gives the new row's id
    return snapshot_id


async def insert_restore(
    conn: aiosqlite.Connection,
    session_id: int,
    from_message_id: int | None,
    undoes: int | None,
    when: float,
) -> int:
    """Store a restore's own row; return its id."""
    restore_id = await first_int(
        conn,
        "INSERT INTO file_restores(session_id, from_message_id, undoes, created_at) "
        "VALUES (?, ?, ?, ?) RETURNING id",
        (session_id, from_message_id, undoes, when),
    )
    assert restore_id is not None  # RETURNING gives the new row's id
    return restore_id


_STATES = """
SELECT s.id, s.path, s.message_id, b.data, s.before_mode, s.before_hash IS NULL,
       a.data, s.after_mode, s.after_hash IS NULL
FROM file_snapshots AS s
LEFT JOIN file_contents AS b ON b.hash = s.before_hash
LEFT JOIN file_contents AS a ON a.hash = s.after_hash
"""


def _write_from(row: Any) -> FileWrite:
    before = FileState(None if row[5] else bytes(row[3]), row[4])
    after = FileState(None if row[8] else bytes(row[6]), row[7])
    return FileWrite(int(row[0]), bytes(row[1]), row[2], before, after)


def _writes(rows: Iterable[Any]) -> list[FileWrite]:
    return [_write_from(row) for row in rows]


async def fetch_first_writes_from(
    conn: aiosqlite.Connection, session_id: int, from_message_id: int
) -> list[FileWrite]:
    """For each path the ``write_file`` calls of a session from message ``from_message_id``
    on wrote, the first of those snapshots (oldest path first).

    Only the first is read: a file written a hundred times would otherwise bring
    every content it ever held into memory (400 MB for a 2 MB file).
    """
    rows = await conn.execute_fetchall(
        _STATES + "WHERE s.id IN (SELECT MIN(id) FROM file_snapshots "
        "WHERE session_id = ? AND message_id >= ? GROUP BY path) ORDER BY s.id",
        (session_id, from_message_id),
    )
    return _writes(rows)


async def latest_write_of(conn: aiosqlite.Connection, path: bytes) -> FileWrite | None:
    """The newest snapshot of ``path``, whoever wrote it (a call or a restore)."""
    rows = list(
        await conn.execute_fetchall(
            _STATES + "WHERE s.path = ? ORDER BY s.id DESC LIMIT 1", (path,)
        )
    )
    return _write_from(rows[0]) if rows else None


async def fetch_restore_rows(conn: aiosqlite.Connection, restore_id: int) -> list[FileWrite]:
    """What restore ``restore_id`` wrote, file by file, in order."""
    rows = await conn.execute_fetchall(
        _STATES + "WHERE s.restore_id = ? ORDER BY s.id", (restore_id,)
    )
    return _writes(rows)


_RESTORE_COLUMNS = """
SELECT r.id, r.session_id, r.from_message_id, r.undoes, r.created_at,
       (SELECT u.id FROM file_restores AS u WHERE u.undoes = r.id ORDER BY u.id LIMIT 1),
       (SELECT COUNT(*) FROM file_snapshots AS s WHERE s.restore_id = r.id)
FROM file_restores AS r
"""


def _restore_from(row: Any) -> FileRestoreRecord:
    return FileRestoreRecord(
        id=int(row[0]),
        session_id=int(row[1]),
        from_message_id=row[2],
        undoes=row[3],
        created_at=float(row[4]),
        undone_by=row[5],
        files=int(row[6]),
    )


async def fetch_restore(conn: aiosqlite.Connection, restore_id: int) -> FileRestoreRecord | None:
    """One restore's row, or ``None``."""
    rows = list(await conn.execute_fetchall(_RESTORE_COLUMNS + "WHERE r.id = ?", (restore_id,)))
    return _restore_from(rows[0]) if rows else None


async def latest_restore(conn: aiosqlite.Connection, session_id: int) -> FileRestoreRecord | None:
    """A session's newest restore that wrote a file and is not undone (an undo counts too)."""
    rows = list(
        await conn.execute_fetchall(
            _RESTORE_COLUMNS + "WHERE r.session_id = ? "
            "AND NOT EXISTS (SELECT 1 FROM file_restores AS u WHERE u.undoes = r.id) "
            "AND EXISTS (SELECT 1 FROM file_snapshots AS s WHERE s.restore_id = r.id) "
            "ORDER BY r.id DESC LIMIT 1",
            (session_id,),
        )
    )
    return _restore_from(rows[0]) if rows else None


async def forget_session(conn: aiosqlite.Connection, session_id: int) -> None:
    """Delete a session's snapshots and restores (emptying the trash; in its transaction).

    Its restores can no longer be undone (undo offers the current session's
    only), and what its files held must go with it: the trash removes a
    session for good. An undo elsewhere of one of them keeps its own rows.
    """
    await conn.execute("DELETE FROM file_snapshots WHERE session_id = ?", (session_id,))
    await conn.execute(
        "UPDATE file_restores SET undoes = NULL WHERE undoes IN "
        "(SELECT id FROM file_restores WHERE session_id = ?)",
        (session_id,),
    )
    await conn.execute("DELETE FROM file_restores WHERE session_id = ?", (session_id,))


async def drop_unused_contents(conn: aiosqlite.Connection) -> None:
    """Delete each content no snapshot names any more (after ``forget_session``)."""
    await conn.execute(
        "DELETE FROM file_contents WHERE hash NOT IN ("
        "SELECT before_hash FROM file_snapshots WHERE before_hash IS NOT NULL "
        "UNION SELECT after_hash FROM file_snapshots WHERE after_hash IS NOT NULL)"
    )


async def forget_restored(conn: aiosqlite.Connection, restore_id: int, snapshot_id: int) -> None:
    """Delete a restore's record of a file it did not write after all, and the restore's
    row once it holds no file (it did nothing: it neither can nor should be undone)."""
    await conn.execute(
        "DELETE FROM file_snapshots WHERE id = ? AND restore_id = ?", (snapshot_id, restore_id)
    )
    await conn.execute(
        "DELETE FROM file_restores WHERE id = ? AND NOT EXISTS "
        "(SELECT 1 FROM file_snapshots WHERE restore_id = ?)",
        (restore_id, restore_id),
    )
