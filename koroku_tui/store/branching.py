"""The SQL of rewind and fork: rewind rows, the user turns of a line, copying a context.

Callers (``SessionManager``) hold the connection lock and, for writes, the
transaction; these functions only talk to the connection.

A fork copies rows in SQL (``INSERT ... SELECT`` over the id ranges that
``context.plan_view`` found with index seeks), so its cost is the copy
itself: no event is parsed in Python, whatever the session's length
(``bench/fork_bench.py``: ~0.6-0.8 s for 100,000 events, all copied).

The copies get no search-index rows, by measurement and by design: their
text is already found through the source's rows (the same words, and a hit
opens the source, where the message really happened); indexing them would
return every fact twice from ``search_history``; and it would add about
1.0-1.5 s to a 100,000-event fork (the bench prints the figure), more than
the copy itself. Removing a session for good deletes index rows by id, so a
fork without any goes cleanly; deleting a session that has forks (moving it
to the trash, where searches no longer see it) first indexes their copies
(``index_copies_of``), so their words stay findable, and restoring it takes
those entries out again (``unindex_copies_of``).
"""

from __future__ import annotations

import json
from typing import Any

import aiosqlite

from koroku_tui.events import RewindEvent, SessionEvent, TurnErrorEvent
from koroku_tui.events.turns import abandoned_spans, in_spans
from koroku_tui.store.context import plan_view
from koroku_tui.store.records import StoredMessage
from koroku_tui.store.rows import MESSAGE_COLUMNS, message_from_row
from koroku_tui.store.search import INDEX_INSERT_SQL, index_entries

__all__ = [
    "copy_context",
    "fetch_abandoned_spans",
    "fetch_message",
    "fetch_user_turns",
    "index_copies_of",
    "insert_rewind",
    "insert_turn_error",
    "is_user_turn",
    "unindex_copies_of",
]

_USER_TURN_BATCH = 1_000
"""Candidate rows read per step while collecting user turns, newest first."""

# Role in SQL first: model replies (half of the rows) are never parsed.
_USER_CANDIDATES_SQL = f"""
SELECT {MESSAGE_COLUMNS} FROM messages INDEXED BY messages_by_session_kind
WHERE session_id = ? AND kind = 'session' AND id < ?
  AND json_valid(event_json) AND json_extract(event_json, '$.role') = 'user'
ORDER BY id DESC LIMIT ?
"""

_REWINDS_SQL = f"""
SELECT {MESSAGE_COLUMNS} FROM messages INDEXED BY messages_by_session_kind
WHERE session_id = ? AND kind = 'rewind' ORDER BY id
"""

_COPY_ROWS_SQL = """
INSERT INTO messages(session_id, kind, event_json, created_at)
SELECT ?, kind, event_json, created_at FROM messages INDEXED BY messages_by_session
WHERE session_id = ? AND id >= ? AND id < ? AND kind NOT IN ('compaction', 'rewind', 'error')
ORDER BY id
"""

# The copied summary leads the fork, and every copy after it is kept: its
# split point (an id of the source) would mean nothing there, so it goes.
_COPY_COMPACTION_SQL = """
INSERT INTO messages(session_id, kind, event_json, created_at)
SELECT ?, kind, json_remove(event_json, '$.kept_from_id'), created_at
FROM messages WHERE id = ?
"""

_NO_UPPER_BOUND = 2**63 - 1


def is_user_turn(message: StoredMessage) -> bool:
    """True for a readable message the user typed (not tool responses, not a summary)."""
    event = message.event
    return isinstance(event, SessionEvent) and event.is_real_user_turn and bool(event.parts)


async def fetch_message(conn: aiosqlite.Connection, message_id: int) -> StoredMessage | None:
    """One row by id, of any session."""
    rows = list(
        await conn.execute_fetchall(
            f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE id = ?", (message_id,)
        )
    )
    return message_from_row(rows[0]) if rows else None


async def fetch_abandoned_spans(
    conn: aiosqlite.Connection, session_id: int
) -> list[tuple[int, int]]:
    """The inclusive id spans the session's rewinds took out of its line (one index seek)."""
    rows = await conn.execute_fetchall(_REWINDS_SQL, (session_id,))
    return abandoned_spans(message_from_row(row) for row in rows)


async def fetch_user_turns(
    conn: aiosqlite.Connection, session_id: int, limit: int
) -> list[StoredMessage]:
    """The session's user turns not abandoned by a rewind, newest first, at most ``limit``."""
    spans = await fetch_abandoned_spans(conn, session_id)
    found: list[StoredMessage] = []
    before = _NO_UPPER_BOUND
    while len(found) < limit:
        rows: list[Any] = list(
            await conn.execute_fetchall(
                _USER_CANDIDATES_SQL, (session_id, before, _USER_TURN_BATCH)
            )
        )
        for row in rows:
            if in_spans(int(row[0]), spans):
                continue
            message = message_from_row(row)
            if is_user_turn(message):
                found.append(message)
                if len(found) == limit:
                    break
        if len(rows) < _USER_TURN_BATCH:
            break
        before = int(rows[-1][0])
    return found


async def insert_rewind(
    conn: aiosqlite.Connection, session_id: int, rewind: RewindEvent, when: float
) -> int:
    """Store a rewind row (no search entry, no title). Run inside a transaction."""
    return await _insert_marker(conn, session_id, "rewind", rewind.model_dump_json(), when)


async def insert_turn_error(
    conn: aiosqlite.Connection, session_id: int, error: TurnErrorEvent, when: float
) -> int:
    """Store a turn's error row (no search entry, no title). Run inside a transaction."""
    return await _insert_marker(conn, session_id, "error", error.model_dump_json(), when)


async def _insert_marker(
    conn: aiosqlite.Connection, session_id: int, kind: str, event_json: str, when: float
) -> int:
    """A row readers show and the model never sees: counted, never indexed or titled."""
    cursor = await conn.execute(
        "INSERT INTO messages(session_id, kind, event_json, created_at) "
        "VALUES (?, ?, ?, ?) RETURNING id",
        (session_id, kind, event_json, when),
    )
    row = await cursor.fetchone()
    await cursor.close()
    assert row is not None
    await conn.execute(
        "UPDATE sessions SET message_count = message_count + 1, "
        "updated_at = MAX(updated_at, ?) WHERE id = ?",
        (when, session_id),
    )
    return int(row[0])


async def copy_context(
    conn: aiosqlite.Connection,
    source_id: int,
    before_message_id: int | None,
    title: str | None,
    now: float,
) -> int:
    """Create a fork of ``source_id`` holding copies of its context before the message.

    The copies keep their JSON (thought signatures and all) and timestamps;
    their ids are new. Returns the fork's id. Run inside a transaction.

    A fork with nothing to copy (before the source's first message) gets no
    row: its id is only reserved, as ``queries.reserve_session_id`` does for
    a new session, and the fork is stored with its first message
    (``session_exists`` tells the two apart).
    """
    plan = await plan_view(conn, source_id, before_message_id)
    cursor = await conn.execute(
        "INSERT INTO sessions(title, created_at, updated_at, forked_from_session, "
        "forked_from_message, model) VALUES (?, ?, ?, ?, ?, "
        "(SELECT model FROM sessions WHERE id = ?)) RETURNING id",
        (title, now, now, source_id, before_message_id, source_id),
    )
    row = await cursor.fetchone()
    await cursor.close()
    assert row is not None
    fork_id = int(row[0])
    copied = 0
    if plan.compaction is not None:
        await conn.execute(_COPY_COMPACTION_SQL, (fork_id, plan.compaction.id))
        copied += 1
    for first, end in plan.ranges:
        cursor = await conn.execute(_COPY_ROWS_SQL, (fork_id, source_id, first, end))
        copied += cursor.rowcount
        await cursor.close()
    if copied == 0:
        # Left unsent, an empty row would stay behind, unlisted, forever.
        await conn.execute("DELETE FROM sessions WHERE id = ?", (fork_id,))
        return fork_id
    await conn.execute(
        "UPDATE sessions SET message_count = ?, compaction_count = ? WHERE id = ?",
        (copied, int(plan.compaction is not None), fork_id),
    )
    return fork_id


# The forks of the source, and theirs past each fork in the trash (its words are found
# through none of its rows): their copies of the source's indexed rows only (paired by
# timestamp, as ``_COPIES_OF_SQL``), as a fork of a fork copies the first fork's copies too.
_UNINDEXED_COPIES_SQL = f"""
WITH RECURSIVE forks(id, trashed) AS (
    SELECT id, trashed_at IS NOT NULL FROM sessions WHERE forked_from_session = ?1
    UNION
    SELECT s.id, s.trashed_at IS NOT NULL FROM sessions AS s
    JOIN forks ON s.forked_from_session = forks.id WHERE forks.trashed
)
SELECT {MESSAGE_COLUMNS} FROM messages
WHERE session_id IN (SELECT id FROM forks)
  AND kind NOT IN ('rewind', 'error')
  AND NOT EXISTS (SELECT 1 FROM messages_fts WHERE messages_fts.rowid = messages.id)
  AND created_at IN (
    SELECT m.created_at FROM messages AS m JOIN messages_fts AS f ON f.rowid = m.id
    WHERE m.session_id = ?1)
"""


async def index_copies_of(conn: aiosqlite.Connection, source_id: int) -> int:
    """Index the forks' copies of ``source_id``'s rows, before the source goes; how many.

    Their words were found through the source's rows; once the source is
    deleted, the copies are the only rows left saying them. A fork of a fork
    is handled when its own source is deleted, or here when that source is in
    the trash already. Run inside the delete's transaction.
    """
    cursor = await conn.execute(_UNINDEXED_COPIES_SQL, (source_id,))
    indexed = 0
    while batch := await cursor.fetchmany(1_000):
        messages = (message_from_row(row) for row in batch)
        entries = index_entries((m.id, m.event) for m in messages)
        await conn.executemany(INDEX_INSERT_SQL, entries)
        indexed += len(entries)
    await cursor.close()
    return indexed


# A copy keeps its original's timestamp: that is how copies and originals
# pair (as in search). Both subqueries run once, whatever the lengths.
# Every fork's, a fork of a fork's too: the source's rows say them all again.
_COPIES_OF_SQL = """
WITH RECURSIVE forks(id) AS (
    SELECT id FROM sessions WHERE forked_from_session = ?1
    UNION
    SELECT s.id FROM sessions AS s JOIN forks ON s.forked_from_session = forks.id
)
SELECT id FROM messages
WHERE session_id IN (SELECT id FROM forks)
  AND created_at IN (SELECT created_at FROM messages WHERE session_id = ?1)
"""


async def unindex_copies_of(conn: aiosqlite.Connection, source_id: int) -> list[int]:
    """Take the forks' copies of ``source_id``'s rows out of the index again (restore).

    ``index_copies_of`` indexed them when the source went to the trash; back
    from it, the source's rows say those words once more, and indexing both
    would return every fact twice. Run inside the restore's transaction.
    Returns the copies' ids (their vectors in memory go too: ``VectorIndex.remove``).
    """
    copies = [int(row[0]) for row in await conn.execute_fetchall(_COPIES_OF_SQL, (source_id,))]
    await conn.execute(
        "DELETE FROM messages_fts WHERE rowid IN (SELECT value FROM json_each(?))",
        (json.dumps(copies),),
    )
    return copies
