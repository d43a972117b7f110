"""A store file taken back to an older schema version, as that version wrote it.

Tests of a migration open a current file, drop what later versions added,
and set ``user_version``: the next open runs every migration from there.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

from google.genai import types

from koroku_tui.events import SessionEvent
from koroku_tui.store import SessionManager

ADDED_BY = {
    8: ("message_vectors", "embedders"),
    9: ("memories_fts", "memories"),
    11: ("file_snapshots", "file_restores", "file_contents"),
}
"""The tables each version added (version 10 changed the index's text, not its tables)."""


def as_version(conn: sqlite3.Connection, version: int) -> None:
    """Drop the tables of every version after ``version`` and say the file is ``version``."""
    for added_in, tables in sorted(ADDED_BY.items(), reverse=True):
        if added_in > version:
            for table in tables:
                conn.execute(f"DROP TABLE {table}")
    conn.execute(f"PRAGMA user_version = {version}")


async def old_file(path: Path, version: int, first: str = "before the upgrade") -> None:
    """A database at ``path`` holding one session (its message ``first``), at ``version``."""
    async with SessionManager(path) as store:
        content = types.Content(role="user", parts=[types.Part(text=first)])
        await store.add_message(SessionEvent.from_content(content))
    with closing(sqlite3.connect(path, isolation_level=None)) as conn:
        as_version(conn, version)
