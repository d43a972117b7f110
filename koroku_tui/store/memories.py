"""The memories table: remembered facts, suggested ones, and which of them a request carries.

SQL only, over the connection ``SessionManager`` holds (its ``MemoriesMixin``
decides locking and errors). The table and its full-text index
(``memories_fts``, rowid = ``memories.id``) change in one transaction.

Which memories a request's system instruction holds is decided here
(``prompt_memories``): all of them while they fit the cap; past it, the
memories most related to the conversation (``related_memories``: the
full-text index today, the one function to switch to hybrid search) take up
to half of it and the newest fill the rest.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import aiosqlite

from koroku_tui.store.queries import first_int
from koroku_tui.store.records import (
    MAX_MEMORY_CHARS,
    MEMORY,
    SUGGESTION,
    MemoryRecord,
    PromptMemories,
)
from koroku_tui.store.search import build_match_query
from koroku_tui.text.safety import without_lone_surrogates

__all__ = [
    "MAX_MEMORY_CHARS",
    "accept",
    "clean_memory_text",
    "delete",
    "fetch",
    "fetch_page",
    "find_same",
    "folded",
    "insert",
    "known_texts",
    "prompt_memories",
    "related_memories",
    "update_text",
]

RELATED_SHARE = 0.5
"""Past the cap, the share of it the memories most related to the conversation may take."""
RELATED_CANDIDATES = 20
"""Related memories considered per request (best first)."""
NEWEST_SCANNED = 512
"""Newest memories read per request at most (a page of ``NEWEST_PAGE`` at a time, until
their text passes the cap)."""
NEWEST_PAGE = 64
_WHOLE = 2**31 - 1
"""``substr`` length that keeps a text whole."""

_COLUMNS = """
m.id, substr(m.text, 1, ?), m.state, m.session_id, m.message_id, m.created_at, m.updated_at,
s.title,
CASE WHEN m.session_id IS NULL THEN 'none' WHEN s.id IS NULL THEN 'gone'
     WHEN s.trashed_at IS NOT NULL THEN 'trash' ELSE 'live' END
"""
_FROM = "FROM memories AS m LEFT JOIN sessions AS s ON s.id = m.session_id"


def clean_memory_text(text: str) -> str:
    """``text`` as a memory is stored: trimmed, storable; ``ValueError`` (a sentence) if unfit.

    Lone surrogates (which SQLite cannot encode) become U+FFFD and NUL
    characters (which cut SQLite's text functions short) go; every other
    character is kept as given and made safe where it is shown.
    """
    clean = without_lone_surrogates(text).replace("\x00", "").strip()
    if not clean:
        raise ValueError("A memory needs some text: say the fact to keep.")
    if len(clean) > MAX_MEMORY_CHARS:
        raise ValueError(
            f"A memory is at most {MAX_MEMORY_CHARS:,} characters and this one has "
            f"{len(clean):,}: keep the lasting fact in a sentence or two."
        )
    return clean


def _record(row: Sequence[Any]) -> MemoryRecord:
    return MemoryRecord(*row)


async def _records(
    conn: aiosqlite.Connection, where: str, params: Iterable[Any], chars: int = _WHOLE
) -> list[MemoryRecord]:
    sql = f"SELECT {_COLUMNS} {_FROM} {where}"
    return [_record(row) for row in await conn.execute_fetchall(sql, (chars, *params))]


async def insert(
    conn: aiosqlite.Connection,
    text: str,
    state: str,
    session_id: int | None,
    message_id: int | None,
    now: float,
) -> int:
    """Store one memory (``text`` already clean) and index it; returns its id."""
    assert state in (MEMORY, SUGGESTION)
    memory_id = await first_int(
        conn,
        "INSERT INTO memories(text, state, session_id, message_id, created_at, updated_at) "
        "VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
        (text, state, session_id, message_id, now, now),
    )
    assert memory_id is not None
    await conn.execute("INSERT INTO memories_fts(rowid, text) VALUES (?, ?)", (memory_id, text))
    return memory_id


def folded(text: str) -> str:
    """``text`` as memories are compared: case-blind, its spaces one (as the prompt shows it)."""
    return " ".join(text.split()).casefold()


async def find_same(conn: aiosqlite.Connection, text: str) -> tuple[int, str] | None:
    """``(id, state)`` of the memory saying ``text`` (``folded``), else of such a suggestion."""
    key = folded(text)
    matching = [
        (int(str(row_id)), str(state))
        for row_id, state, known in await _texts(conn)
        if folded(str(known)) == key
    ]
    # A kept memory first, then the newest.
    return min(matching, key=lambda found: (found[1] != MEMORY, -found[0]), default=None)


async def known_texts(conn: aiosqlite.Connection) -> set[str]:
    """Every memory's and suggestion's text, ``folded`` (to keep a suggestion from
    repeating one). Compared in Python: SQLite's ``lower`` folds ASCII only."""
    return {folded(str(text)) for _, _, text in await _texts(conn)}


async def _texts(conn: aiosqlite.Connection) -> list[tuple[object, ...]]:
    rows = await conn.execute_fetchall(
        "SELECT id, state, text FROM memories WHERE length(text) <= ?", (MAX_MEMORY_CHARS,)
    )
    return [tuple(row) for row in rows]


async def fetch(conn: aiosqlite.Connection, memory_id: int) -> MemoryRecord | None:
    """One memory or suggestion, with its source's title and state."""
    found = await _records(conn, "WHERE m.id = ?", (memory_id,))
    return found[0] if found else None


async def fetch_page(conn: aiosqlite.Connection, limit: int, offset: int) -> list[MemoryRecord]:
    """Memories and suggestions, newest first (``limit`` -1: all of them)."""
    return await _records(conn, "ORDER BY m.id DESC LIMIT ? OFFSET ?", (limit, offset))


async def delete(conn: aiosqlite.Connection, memory_id: int) -> bool:
    """Remove a memory and its index entry; False when there was none."""
    cursor = await conn.execute("DELETE FROM memories WHERE id = ?", (memory_id,))
    removed = cursor.rowcount > 0
    await cursor.close()
    await conn.execute("DELETE FROM memories_fts WHERE rowid = ?", (memory_id,))
    return removed


async def update_text(conn: aiosqlite.Connection, memory_id: int, text: str, now: float) -> bool:
    """Replace a memory's text (``text`` already clean) and its index entry."""
    cursor = await conn.execute(
        "UPDATE memories SET text = ?, updated_at = ? WHERE id = ?", (text, now, memory_id)
    )
    changed = cursor.rowcount > 0
    await cursor.close()
    if changed:
        await conn.execute("DELETE FROM memories_fts WHERE rowid = ?", (memory_id,))
        await conn.execute("INSERT INTO memories_fts(rowid, text) VALUES (?, ?)", (memory_id, text))
    return changed


async def accept(conn: aiosqlite.Connection, memory_id: int, now: float) -> bool:
    """Make a suggestion a memory (a memory stays one); False when there is no such row."""
    cursor = await conn.execute(
        "UPDATE memories SET state = ?, updated_at = CASE WHEN state = ? THEN ? "
        "ELSE updated_at END WHERE id = ?",
        (MEMORY, SUGGESTION, now, memory_id),
    )
    found = cursor.rowcount > 0
    await cursor.close()
    return found


async def related_memories(conn: aiosqlite.Connection, query: str, limit: int) -> list[int]:
    """The ids of the kept memories most related to ``query``, best first.

    The full-text index today (the history search's query builder and bm25);
    the one place to switch to hybrid search.
    """
    match = build_match_query(query)
    if match is None or limit <= 0:
        return []
    rows = await conn.execute_fetchall(
        "SELECT f.rowid FROM memories_fts AS f JOIN memories AS m ON m.id = f.rowid "
        "WHERE memories_fts MATCH ? AND m.state = ? ORDER BY f.rank LIMIT ?",
        (match, MEMORY, limit),
    )
    return [int(row[0]) for row in rows]


async def prompt_memories(
    conn: aiosqlite.Connection, query: str, budget: int, each: int = MAX_MEMORY_CHARS
) -> PromptMemories:
    """The kept memories a request carries: at most ``budget`` characters of text.

    Each counts its text, cut at ``each`` characters. All of them while they
    fit, newest first; past the cap, the memories most related to ``query``
    (the user's latest message) take up to ``RELATED_SHARE`` of it, the
    newest fill the rest, and more related ones any room left. Returned
    newest first.
    """
    newest: list[MemoryRecord] = []
    text = 0
    while len(newest) < NEWEST_SCANNED:  # a page at a time: the cap fills within the first
        page = await _records(
            conn,
            "WHERE m.state = ? ORDER BY m.id DESC LIMIT ? OFFSET ?",
            (MEMORY, NEWEST_PAGE, len(newest)),
            each,
        )
        newest += page
        text += sum(len(memory.text) for memory in page)
        if len(page) < NEWEST_PAGE:
            if text <= budget:
                return PromptMemories(newest)  # every one fits
            break
        if text > budget:
            break
    count_rows = list(
        await conn.execute_fetchall("SELECT count(*) FROM memories WHERE state = ?", (MEMORY,))
    )
    count = int(count_rows[0][0])
    related_ids = await related_memories(conn, query, RELATED_CANDIDATES)
    marks = ", ".join("?" * len(related_ids))
    related = await _records(conn, f"WHERE m.id IN ({marks})", related_ids, each)
    by_id = {memory.id: memory for memory in related}
    ranked = [by_id[i] for i in related_ids if i in by_id]
    chosen: dict[int, MemoryRecord] = {}
    used = 0

    def take(candidates: Iterable[MemoryRecord], room: float) -> None:
        nonlocal used
        for memory in candidates:
            if memory.id not in chosen and used + len(memory.text) <= room:
                chosen[memory.id] = memory
                used += len(memory.text)

    take(ranked, budget * RELATED_SHARE)
    take(newest, budget)
    take(ranked, budget)
    shown = sorted(chosen.values(), key=lambda memory: memory.id, reverse=True)
    return PromptMemories(shown, left_out=count - len(shown))
