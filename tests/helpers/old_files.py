"""A store file taken back to an older schema version, as that version wrote it.

Tests of a migration open a current file, drop what later versions added,
and set ``user_version``: the next open runs every migration from there.
"""

from __future__ import annotations

import sqlite3

ADDED_BY = {
    8: ("message_vectors", "embedders"),
    9: ("memories_fts", "memories"),
}
"""The tables each version added (version 10 changed the index's text, not its tables)."""


def as_version(conn: sqlite3.Connection, version: int) -> None:
    """Drop the tables of every version after ``version`` and say the file is ``version``."""
    for added_in, tables in sorted(ADDED_BY.items(), reverse=True):
        if added_in > version:
            for table in tables:
                conn.execute(f"DROP TABLE {table}")
    conn.execute(f"PRAGMA user_version = {version}")
