"""The SQL behind ``SessionManager``, one small async function per statement group.

Callers hold the manager's connection lock and transaction where needed; these
functions only talk to the connection and build records.
"""

from __future__ import annotations

from typing import Any

import aiosqlite

from koroku_tui.events import CompactionEvent, Event
from koroku_tui.store.records import SessionInfo, StoredMessage, SummaryRecord
from koroku_tui.store.rows import MESSAGE_COLUMNS, derive_title, message_from_row
from koroku_tui.store.search import INDEX_INSERT_SQL, index_entries

__all__ = [
    "delete_session_rows",
    "fetch_history",
    "fetch_history_after",
    "fetch_session",
    "fetch_sessions",
    "fetch_summaries",
    "fetch_tool_results",
    "fetch_trash",
    "fetch_window",
    "first_user_title",
    "insert_message",
    "insert_session",
    "insert_session_as",
    "is_trashed",
    "message_session_id",
    "most_recent_session_id",
    "next_session_id",
    "reserve_session_id",
    "return_session_id",
    "session_exists",
    "set_model",
    "set_trashed",
    "trashed_ids",
]

#: In ``SessionInfo``'s field order: a row is the record's arguments.
_SESSION_COLUMNS = (
    "id, title, created_at, updated_at, message_count, compaction_count, "
    "forked_from_session, forked_from_message, trashed_at, model"
)
_NO_UPPER_BOUND = 2**63 - 1
#: How far into a session to look for its first user message when re-deriving a title.
_TITLE_SCAN_ROWS = 200


def _session_from_row(row: Any) -> SessionInfo:
    # ``_SESSION_COLUMNS`` lists the columns in ``SessionInfo``'s field order.
    return SessionInfo(*row)


async def first_int(conn: aiosqlite.Connection, sql: str, params: tuple[Any, ...]) -> int | None:
    """The first column of the first row as an int (an id ``RETURNING``, a count), or None."""
    rows = list(await conn.execute_fetchall(sql, params))
    return int(rows[0][0]) if rows else None


async def session_exists(conn: aiosqlite.Connection, session_id: int) -> bool:
    """True when a session row with this id exists."""
    found = await first_int(conn, "SELECT 1 FROM sessions WHERE id = ?", (session_id,))
    return found is not None


async def most_recent_session_id(conn: aiosqlite.Connection) -> int | None:
    """The live session with the latest activity, or ``None`` when there is none."""
    return await first_int(
        conn,
        "SELECT id FROM sessions WHERE message_count > 0 AND trashed_at IS NULL "
        "ORDER BY updated_at DESC, id DESC LIMIT 1",
        (),
    )


async def reserve_session_id(conn: aiosqlite.Connection, now: float) -> int:
    """Take the next session id for a session not stored yet. Run inside a transaction.

    The row is inserted and deleted at once: AUTOINCREMENT never hands out an
    id twice (``sqlite_sequence`` keeps the highest), so no other process can
    get this one, while the list never shows a session without messages.
    """
    session_id = await insert_session(conn, None, now)
    await conn.execute("DELETE FROM sessions WHERE id = ?", (session_id,))
    return session_id


async def next_session_id(conn: aiosqlite.Connection) -> int:
    """The id ``reserve_session_id`` would take, without taking it (a read-only store's)."""
    seq = await first_int(conn, "SELECT seq FROM sqlite_sequence WHERE name = 'sessions'", ())
    return (seq or 0) + 1


async def return_session_id(conn: aiosqlite.Connection, session_id: int) -> None:
    """Give back a reserved id no session was stored under, if no later id was handed out.

    Run inside a transaction. Leaving without sending then costs no id: the
    next session gets it, and session numbers run on without gaps.
    """
    await conn.execute(
        "UPDATE sqlite_sequence SET seq = seq - 1 WHERE name = 'sessions' AND seq = ? "
        "AND NOT EXISTS (SELECT 1 FROM sessions WHERE id = ?)",
        (session_id, session_id),
    )


async def insert_session_as(
    conn: aiosqlite.Connection,
    session_id: int,
    title: str | None,
    now: float,
    forked_from: tuple[int | None, int | None] = (None, None),
    model: str | None = None,
) -> None:
    """Store the session ``reserve_session_id`` gave, with its first message. In a transaction.

    ``forked_from``: the source session and message of a fork that had
    nothing to copy (``branching.copy_context``); ``model``: the one it chose.
    """
    await conn.execute(
        "INSERT INTO sessions(id, title, created_at, updated_at, forked_from_session, "
        "forked_from_message, model) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (session_id, title, now, now, *forked_from, model),
    )


async def set_model(conn: aiosqlite.Connection, session_id: int, model: str | None) -> None:
    """Keep the model a session chose (``None``: the configured one). In a transaction."""
    await conn.execute("UPDATE sessions SET model = ? WHERE id = ?", (model, session_id))


async def insert_session(conn: aiosqlite.Connection, title: str | None, now: float) -> int:
    """Create an empty session; return its id."""
    found = await first_int(
        conn,
        "INSERT INTO sessions(title, created_at, updated_at) VALUES (?, ?, ?) RETURNING id",
        (title, now, now),
    )
    assert found is not None
    return found


async def fetch_session(conn: aiosqlite.Connection, session_id: int) -> SessionInfo | None:
    """One session's row as a record."""
    rows = list(
        await conn.execute_fetchall(
            f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE id = ?", (session_id,)
        )
    )
    return _session_from_row(rows[0]) if rows else None


async def fetch_sessions(conn: aiosqlite.Connection, limit: int, offset: int) -> list[SessionInfo]:
    """A page of sessions, newest activity first (served by ``sessions_by_activity``).

    An empty session (a fork of nothing, a file from before schema 5) and
    the sessions in the trash are left out.
    """
    rows = await conn.execute_fetchall(
        f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE message_count > 0 "
        "AND trashed_at IS NULL ORDER BY updated_at DESC, id DESC LIMIT ? OFFSET ?",
        (limit, offset),
    )
    return [_session_from_row(row) for row in rows]


async def fetch_trash(conn: aiosqlite.Connection, limit: int, offset: int) -> list[SessionInfo]:
    """A page of the sessions in the trash, the latest deleted first (``sessions_in_trash``)."""
    rows = await conn.execute_fetchall(
        f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE trashed_at IS NOT NULL "
        "ORDER BY trashed_at DESC, id DESC LIMIT ? OFFSET ?",
        (limit, offset),
    )
    return [_session_from_row(row) for row in rows]


async def trashed_ids(conn: aiosqlite.Connection) -> list[int]:
    """Every session in the trash."""
    rows = await conn.execute_fetchall("SELECT id FROM sessions WHERE trashed_at IS NOT NULL")
    return [int(row[0]) for row in rows]


async def is_trashed(conn: aiosqlite.Connection, session_id: int) -> bool:
    """True when the session is in the trash (False for a live or unknown one)."""
    found = await first_int(
        conn, "SELECT 1 FROM sessions WHERE id = ? AND trashed_at IS NOT NULL", (session_id,)
    )
    return found is not None


async def set_trashed(conn: aiosqlite.Connection, session_id: int, when: float | None) -> None:
    """Move a session to the trash (``when``) or take it out (``None``). In a transaction.

    Nothing else changes: its rows, index entries and place by activity stay.
    """
    await conn.execute("UPDATE sessions SET trashed_at = ? WHERE id = ?", (when, session_id))


async def insert_message(
    conn: aiosqlite.Connection,
    session_id: int,
    event: Event,
    when: float,
) -> int:
    """Insert the row, index its text and update its session. Run inside a transaction."""
    kind = event.event_type
    message_id = await first_int(
        conn,
        "INSERT INTO messages(session_id, kind, event_json, created_at) "
        "VALUES (?, ?, ?, ?) RETURNING id",
        (session_id, kind, event.model_dump_json(), when),
    )
    assert message_id is not None
    await conn.executemany(INDEX_INSERT_SQL, index_entries([(message_id, event)]))
    # COALESCE: the first user message names the session; nothing renames it after.
    await conn.execute(
        "UPDATE sessions SET message_count = message_count + 1, "
        "compaction_count = compaction_count + ?, "
        "updated_at = MAX(updated_at, ?), title = COALESCE(title, ?) "
        "WHERE id = ?",
        (int(kind == "compaction"), when, derive_title(event), session_id),
    )
    return message_id


async def delete_session_rows(conn: aiosqlite.Connection, session_id: int) -> list[int]:
    """Delete a session, its messages and their index entries for good. In a transaction.

    Only emptying the trash calls this: deleting a session moves it there. Returns
    the messages' ids (their vectors in memory go too: ``VectorIndex.remove``).
    """
    gone = [
        int(row[0])
        for row in await conn.execute_fetchall(
            "SELECT id FROM messages WHERE session_id = ?", (session_id,)
        )
    ]
    # Explicit rather than relying on ON DELETE CASCADE alone: the index rows
    # are not linked by a foreign key.
    await conn.execute(
        "DELETE FROM messages_fts WHERE rowid IN (SELECT id FROM messages WHERE session_id = ?)",
        (session_id,),
    )
    await conn.execute("DELETE FROM messages WHERE session_id = ?", (session_id,))
    await conn.execute("DELETE FROM sessions WHERE id = ?", (session_id,))
    return gone


async def first_user_title(conn: aiosqlite.Connection, session_id: int) -> str | None:
    """The title derived from the session's first user message, if any."""
    rows = await conn.execute_fetchall(
        f"SELECT {MESSAGE_COLUMNS} FROM messages "
        "WHERE session_id = ? AND kind = 'session' ORDER BY id LIMIT ?",
        (session_id, _TITLE_SCAN_ROWS),
    )
    for row in rows:
        message = message_from_row(row)
        if message.event is not None and (title := derive_title(message.event)):
            return title
    return None


async def fetch_history(
    conn: aiosqlite.Connection, session_id: int, before_id: int | None, limit: int | None
) -> list[StoredMessage]:
    """Rows of a session in id order: all of them, or the newest ``limit`` before ``before_id``."""
    upper = _NO_UPPER_BOUND if before_id is None else before_id
    if limit is None:
        rows = list(
            await conn.execute_fetchall(
                f"SELECT {MESSAGE_COLUMNS} FROM messages "
                "WHERE session_id = ? AND id < ? ORDER BY id",
                (session_id, upper),
            )
        )
    else:
        rows = list(
            await conn.execute_fetchall(
                f"SELECT {MESSAGE_COLUMNS} FROM messages "
                "WHERE session_id = ? AND id < ? ORDER BY id DESC LIMIT ?",
                (session_id, upper, limit),
            )
        )
        rows.reverse()
    return [message_from_row(row) for row in rows]


async def fetch_history_after(
    conn: aiosqlite.Connection, session_id: int, after_id: int, limit: int
) -> list[StoredMessage]:
    """The oldest ``limit`` rows of a session newer than ``after_id``, in id order."""
    rows = await conn.execute_fetchall(
        f"SELECT {MESSAGE_COLUMNS} FROM messages "
        "WHERE session_id = ? AND id > ? ORDER BY id LIMIT ?",
        (session_id, after_id, limit),
    )
    return [message_from_row(row) for row in rows]


async def fetch_tool_results(
    conn: aiosqlite.Connection, session_id: int, before_id: int | None
) -> list[StoredMessage]:
    """The session's rows that hold tool results, in id order, before ``before_id``.

    ``instr`` skips the other rows inside SQLite, unparsed; a row it lets
    through by accident (the words quoted in a message) is harmless: its
    event simply has no function responses.
    """
    upper = _NO_UPPER_BOUND if before_id is None else before_id
    rows = await conn.execute_fetchall(
        f"SELECT {MESSAGE_COLUMNS} FROM messages "
        "WHERE session_id = ? AND id < ? AND kind = 'session' "
        "AND instr(event_json, '\"function_response\"') > 0 ORDER BY id",
        (session_id, upper),
    )
    return [message_from_row(row) for row in rows]


async def fetch_summaries(conn: aiosqlite.Connection, session_id: int) -> list[SummaryRecord]:
    """Readable compactions of a session, oldest first (unreadable ones are skipped)."""
    rows = await conn.execute_fetchall(
        f"SELECT {MESSAGE_COLUMNS} FROM messages "
        "WHERE session_id = ? AND kind = 'compaction' ORDER BY id",
        (session_id,),
    )
    summaries: list[SummaryRecord] = []
    for row in rows:
        message = message_from_row(row)
        if isinstance(message.event, CompactionEvent):
            summaries.append(
                SummaryRecord(
                    message_id=message.id,
                    session_id=message.session_id,
                    created_at=message.created_at,
                    summary=message.event.summary,
                    kept_from_id=message.event.kept_from_id,
                )
            )
    return summaries


async def message_session_id(conn: aiosqlite.Connection, message_id: int) -> int | None:
    """The session a row belongs to, or ``None`` when there is no such row."""
    return await first_int(conn, "SELECT session_id FROM messages WHERE id = ?", (message_id,))


# Served by messages_by_session: a range seek each way, never the whole session.
_OLDER_IDS_SQL = (
    "SELECT id FROM messages INDEXED BY messages_by_session "
    "WHERE session_id = ? AND id < ? ORDER BY id DESC LIMIT ?"
)
_NEWER_IDS_SQL = (
    "SELECT id FROM messages INDEXED BY messages_by_session "
    "WHERE session_id = ? AND id >= ? ORDER BY id LIMIT ?"
)


async def fetch_window(
    conn: aiosqlite.Connection, session_id: int, around_id: int | None, limit: int
) -> tuple[list[StoredMessage], bool, bool]:
    """Up to ``limit`` rows of a session centred on ``around_id`` (the newest without one).

    Returns the rows oldest first and whether rows lie before and after
    them. Only ids are read for the look around; events for the chosen rows.
    """
    start = _NO_UPPER_BOUND if around_id is None else around_id
    older = [
        int(row[0])
        for row in await conn.execute_fetchall(_OLDER_IDS_SQL, (session_id, start, limit + 1))
    ]
    newer: list[int] = []
    if around_id is not None:
        newer = [
            int(row[0])
            for row in await conn.execute_fetchall(
                _NEWER_IDS_SQL, (session_id, around_id, limit + 1)
            )
        ]
    # The message first, then as evenly as the rows allow: what one side
    # lacks the other gives.
    take_newer = min(len(newer), limit - min(len(older), (limit - 1) // 2))
    take_older = min(len(older), limit - take_newer)
    ids = sorted(older[:take_older]) + newer[:take_newer]
    if not ids:
        return [], False, False
    rows = await conn.execute_fetchall(
        f"SELECT {MESSAGE_COLUMNS} FROM messages INDEXED BY messages_by_session "
        "WHERE session_id = ? AND id BETWEEN ? AND ? ORDER BY id",
        (session_id, ids[0], ids[-1]),
    )
    return [message_from_row(row) for row in rows], len(older) > take_older, len(newer) > take_newer
