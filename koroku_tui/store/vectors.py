"""The SQL of ``message_vectors``: which rows still need a vector, writing them, reading them.

A vector belongs to a row of ``messages_fts`` (the same searchable text,
``search.searchable_text``) and to one embedder, named by the caller: the
store never knows the model, it takes and returns vectors as ``to_blob``
bytes (``vector_index``). Rows are embedded in the background after they
are stored, so "what still needs a vector" is a question asked of the
file, not a queue kept in memory: a process killed mid-batch loses nothing.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import aiosqlite

from koroku_tui.store.queries import first_int
from koroku_tui.store.search_forms import SEPARATOR

__all__ = [
    "coverage_past",
    "data_version",
    "embedder_id",
    "lacking_among",
    "last_indexed",
    "live_rows",
    "plain_hits",
    "texts_of",
    "trashed_rows",
    "unembedded",
    "unembedded_below",
    "vector_blobs",
    "vector_counts",
    "write_vectors",
]


async def embedder_id(
    conn: aiosqlite.Connection, name: str, dims: int, *, create: bool
) -> int | None:
    """The row id of embedder ``name`` (added when ``create``; ``None`` when unknown)."""
    found = await first_int(conn, "SELECT id FROM embedders WHERE name = ?", (name,))
    if found is not None or not create:
        return found
    return await first_int(
        conn, "INSERT INTO embedders(name, dims) VALUES (?, ?) RETURNING id", (name, dims)
    )


# Rows of messages only: a vector of a row without one is never written (``write_vectors``),
# so such a row would be asked for again and again.
_UNEMBEDDED_SQL = """
SELECT f.rowid, f.text FROM messages_fts AS f
WHERE f.rowid > ? AND NOT EXISTS (
    SELECT 1 FROM message_vectors AS v WHERE v.message_id = f.rowid AND v.embedder_id = ?)
  AND EXISTS (SELECT 1 FROM messages AS m WHERE m.id = f.rowid)
ORDER BY f.rowid LIMIT ?
"""
_NEWEST_UNEMBEDDED_SQL = _UNEMBEDDED_SQL.replace("f.rowid > ?", "f.rowid < ?").replace(
    "ORDER BY f.rowid", "ORDER BY f.rowid DESC"
)
_NO_ROW_ABOVE = 2**63 - 1


async def unembedded(
    conn: aiosqlite.Connection, embedder: int | None, after: int, limit: int
) -> list[tuple[int, str]]:
    """Up to ``limit`` indexed rows past ``after`` with no vector of ``embedder``, oldest first.

    The text is the index's, less the separators the index form puts between
    Chinese, Japanese and Korean characters (``search_forms``): a model reads words.
    """
    rows = await conn.execute_fetchall(_UNEMBEDDED_SQL, (after, embedder or -1, limit))
    return [(int(row_id), _model_text(text)) for row_id, text in rows]


async def unembedded_below(
    conn: aiosqlite.Connection, embedder: int | None, below: int | None, limit: int
) -> list[tuple[int, str]]:
    """Like ``unembedded``, but the rows under id ``below`` (``None``: all), newest first."""
    params = (_NO_ROW_ABOVE if below is None else below, embedder or -1, limit)
    rows = await conn.execute_fetchall(_NEWEST_UNEMBEDDED_SQL, params)
    return [(int(row_id), _model_text(text)) for row_id, text in rows]


def _model_text(stored: str) -> str:
    """A row's text as a model reads it: less the separators the index form puts between
    Chinese, Japanese and Korean characters (``search_forms``)."""
    return str(stored).replace(SEPARATOR, "")


async def last_indexed(conn: aiosqlite.Connection) -> int:
    """The id of the newest row of the search index (0: none)."""
    rows = list(
        await conn.execute_fetchall("SELECT rowid FROM messages_fts ORDER BY rowid DESC LIMIT 1")
    )
    return int(rows[0][0]) if rows else 0


async def write_vectors(
    conn: aiosqlite.Connection, embedder: int, rows: Sequence[tuple[int, bytes]]
) -> int:
    """Store ``(message id, blob)`` pairs; how many rows gained a vector.

    A row that left the search index meanwhile is skipped (a message deleted, a
    fork's copy whose source was restored while its batch was embedded), and so is
    a row that has its vector already (the same model's: another window's, or a
    search's candidates), so the count is exactly the new rows of the index
    (``SessionManager`` keeps coverage by it, as ``vector_counts`` counts).
    """
    before = conn.total_changes
    await conn.executemany(
        "INSERT OR IGNORE INTO message_vectors(message_id, embedder_id, vector) "
        "SELECT ?1, ?2, ?3 WHERE EXISTS (SELECT 1 FROM messages_fts WHERE rowid = ?1)"
        " AND EXISTS (SELECT 1 FROM messages WHERE id = ?1)",
        [(message_id, embedder, blob) for message_id, blob in rows],
    )
    return conn.total_changes - before


async def data_version(conn: aiosqlite.Connection) -> int:
    """A number that changes when another connection commits to the file."""
    return await first_int(conn, "PRAGMA data_version", ()) or 0


async def vector_counts(conn: aiosqlite.Connection, embedder: int | None) -> tuple[int, int]:
    """``(rows of the search index with a vector of embedder, rows in the search index)``.

    A vector whose row left the index is not counted (a fork's copies keep theirs once
    their source leaves the trash): else coverage read "every row" while rows lacked one.
    """
    total = await _count(conn, "SELECT count(*) FROM messages_fts", ())
    if embedder is None:
        return 0, total
    sql = (
        "SELECT count(*) FROM message_vectors AS v WHERE v.embedder_id = ?"
        " AND EXISTS (SELECT 1 FROM messages_fts AS f WHERE f.rowid = v.message_id)"
    )
    return await _count(conn, sql, (embedder,)), total


async def coverage_past(
    conn: aiosqlite.Connection, embedder: int | None, after: int
) -> tuple[int, int, int]:
    """``(rows of the search index past row after, those with a vector of embedder, newest row)``.

    The rows stored since ``vector_counts`` last ran: a seek, where counting every vector
    again took ~100-150 ms at 100,000 rows (``SessionManager.has_every_row``).
    """
    rows = await conn.execute_fetchall(
        "SELECT count(*), count(v.message_id), max(f.rowid) FROM messages_fts AS f"
        " LEFT JOIN message_vectors AS v ON v.message_id = f.rowid AND v.embedder_id = ?"
        " WHERE f.rowid > ?",
        (embedder or -1, after),
    )
    total, done, newest = next(iter(rows))
    return int(total), int(done), int(newest) if newest is not None else after


async def lacking_among(
    conn: aiosqlite.Connection, embedder: int | None, ids: Sequence[int]
) -> int:
    """How many of ``ids`` are rows of the search index without a vector of ``embedder``."""
    return await _count(
        conn,
        "SELECT count(*) FROM json_each(?1) AS j"
        " WHERE EXISTS (SELECT 1 FROM messages_fts AS f WHERE f.rowid = j.value)"
        " AND NOT EXISTS (SELECT 1 FROM message_vectors AS v"
        " WHERE v.message_id = j.value AND v.embedder_id = ?2)",
        (json.dumps(list(ids)), embedder or -1),
    )


async def _count(conn: aiosqlite.Connection, sql: str, params: tuple[object, ...]) -> int:
    return await first_int(conn, sql, params) or 0  # count(*) always has its one row


async def vector_blobs(
    conn: aiosqlite.Connection, embedder: int, after: int, limit: int
) -> list[tuple[int, bytes]]:
    """A page of ``embedder``'s vectors, by message id past ``after`` (loading the index)."""
    rows = await conn.execute_fetchall(
        "SELECT message_id, vector FROM message_vectors WHERE embedder_id = ? AND message_id > ? "
        "ORDER BY message_id LIMIT ?",
        (embedder, after, limit),
    )
    return [(int(message_id), bytes(blob)) for message_id, blob in rows]


# Still in the search index too: a fork's copies leave it when their source is restored
# from the trash, and keep their vectors.
_LIVE_ROWS_SQL = """
SELECT m.id, m.created_at FROM messages AS m JOIN sessions AS s ON s.id = m.session_id
WHERE m.id IN (SELECT value FROM json_each(?)) AND s.trashed_at IS NULL
  AND EXISTS (SELECT 1 FROM messages_fts AS f WHERE f.rowid = m.id)
"""


async def live_rows(
    conn: aiosqlite.Connection, ids: Sequence[int], session_id: int | None
) -> dict[int, float]:
    """Which of ``ids`` are indexed rows of live sessions (of ``session_id`` only): id -> time."""
    sql, params = _LIVE_ROWS_SQL, [json.dumps(list(ids))]
    if session_id is not None:
        sql += " AND m.session_id = ?"
        params.append(str(session_id))
    rows = await conn.execute_fetchall(sql, params)
    return {int(row_id): float(created_at) for row_id, created_at in rows}


async def trashed_rows(conn: aiosqlite.Connection) -> frozenset[int]:
    """The ids of the rows of the sessions in the trash (none when the trash is empty)."""
    rows = await conn.execute_fetchall(
        "SELECT m.id FROM sessions AS s JOIN messages AS m ON m.session_id = s.id"
        " WHERE s.trashed_at IS NOT NULL"
    )
    return frozenset(int(row_id) for (row_id,) in rows)


_PLAIN_HITS_SQL = """
SELECT m.session_id, s.title, m.id, m.kind, f.role, m.created_at, substr(f.text, 1, ?)
FROM messages_fts AS f
JOIN messages AS m ON m.id = f.rowid
JOIN sessions AS s ON s.id = m.session_id
WHERE f.rowid IN (SELECT value FROM json_each(?))
"""


async def plain_hits(
    conn: aiosqlite.Connection, ids: Sequence[int], chars: int
) -> list[tuple[object, ...]]:
    """Hit rows for messages found by meaning alone: no word matched, the text's start."""
    rows = await conn.execute_fetchall(_PLAIN_HITS_SQL, (chars, json.dumps(list(ids))))
    return [tuple(row) for row in rows]


_TEXTS_SQL = """
SELECT f.rowid, f.text FROM messages_fts AS f
WHERE f.rowid IN (SELECT value FROM json_each(?))
  AND EXISTS (SELECT 1 FROM messages AS m WHERE m.id = f.rowid)
"""


async def texts_of(conn: aiosqlite.Connection, ids: Sequence[int]) -> list[tuple[int, str]]:
    """``(message id, text)`` of those of ``ids`` still indexed, in their order (as
    ``unembedded`` reads them: a model's vector of one is the pass's)."""
    rows = await conn.execute_fetchall(_TEXTS_SQL, (json.dumps(list(ids)),))
    texts = {int(row_id): _model_text(text) for row_id, text in rows}
    return [(row_id, texts[row_id]) for row_id in ids if row_id in texts]
