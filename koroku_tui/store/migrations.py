"""The steps that bring a Koroku database from one schema version to the next.

``MIGRATIONS[i]`` takes a file from version ``i`` to ``i + 1``; what each
version holds is documented in ``koroku_tui.store.schema``, which runs them
(``migrate``: one ``BEGIN IMMEDIATE`` transaction per step). Append only:
a released step is never edited, since files in the wild went through it.

Internal to the store: ``schema`` imports what it runs from here.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from koroku_tui.store.rows import MESSAGE_COLUMNS, derive_title, message_from_row
from koroku_tui.store.search import INDEX_INSERT_SQL, index_entries, searchable_text
from koroku_tui.store.search_forms import reform_index

Migration = Callable[[sqlite3.Connection], None]

MigrationProgress = Callable[[int, int], None]
"""Told ``(done, total)`` from the migrating thread while a long step runs (rows indexed).

An exception it raises aborts the migration: the step rolls back and the
file keeps its old version.
"""


@dataclass(frozen=True, slots=True)
class ReportingMigration:
    """A migration step that tells ``progress`` how far it got (``migrate`` passes it)."""

    run: Callable[[sqlite3.Connection, MigrationProgress], None]

    def __call__(self, conn: sqlite3.Connection, progress: MigrationProgress | None = None) -> None:
        self.run(conn, progress or _no_progress)


def _no_progress(done: int, total: int) -> None:
    del done, total


_SESSIONS_DDL = """
CREATE TABLE sessions (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    title            TEXT,
    created_at       REAL NOT NULL,
    updated_at       REAL NOT NULL,
    message_count    INTEGER NOT NULL DEFAULT 0,
    compaction_count INTEGER NOT NULL DEFAULT 0
)"""

_MESSAGES_DDL = """
CREATE TABLE messages (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    kind       TEXT NOT NULL DEFAULT 'session',
    event_json TEXT NOT NULL,
    created_at REAL NOT NULL
)"""

_INDEXES_AND_FTS = (
    "CREATE INDEX sessions_by_activity ON sessions(updated_at DESC, id DESC)",
    "CREATE INDEX messages_by_session ON messages(session_id, id)",
    "CREATE INDEX messages_by_session_kind ON messages(session_id, kind, id)",
    "CREATE VIRTUAL TABLE messages_fts USING fts5("
    "text, role UNINDEXED, tokenize = 'unicode61 remove_diacritics 2')",
)

#: The seed's messages table must have these for its rows to be carried over.
_SEED_COLUMNS = frozenset({"id", "event_json", "created_at"})


def table_names(conn: sqlite3.Connection) -> set[str]:
    """User tables of the file (SQLite's own ``sqlite_*`` tables left out)."""
    rows = conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' "
        "ESCAPE '\\'"
    ).fetchall()
    return {str(row[0]) for row in rows}


def column_names(conn: sqlite3.Connection, table: str) -> set[str]:
    """Column names of ``table`` (empty if it does not exist)."""
    return {str(row[1]) for row in conn.execute(f"PRAGMA table_info({table})")}


def is_seed_messages_table(conn: sqlite3.Connection) -> bool:
    """True when the seed's ``messages`` table exists with the columns we carry over."""
    return column_names(conn, "messages") >= _SEED_COLUMNS


def _create_tables(conn: sqlite3.Connection) -> None:
    conn.execute(_SESSIONS_DDL)
    conn.execute(_MESSAGES_DDL)


def _create_indexes_and_fts(conn: sqlite3.Connection) -> None:
    for statement in _INDEXES_AND_FTS:
        conn.execute(statement)


def _autoincrement_seq(conn: sqlite3.Connection, table: str) -> int:
    if "sqlite_sequence" not in {
        row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
    }:
        return 0
    row = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = ?", (table,)).fetchone()
    return int(row[0]) if row and row[0] is not None else 0


def _index_and_title_seed_rows(conn: sqlite3.Connection, session_id: int) -> None:
    """Fill the search index from the carried-over rows and name the session."""
    title: str | None = None
    index_rows: list[tuple[int, str, str | None]] = []
    cursor = conn.execute(f"SELECT {MESSAGE_COLUMNS} FROM messages ORDER BY id")
    while batch := cursor.fetchmany(1000):
        for row in batch:
            message = message_from_row(row)
            if message.event is None:
                continue  # kept verbatim, just not searchable
            if title is None:
                title = derive_title(message.event)
            text = searchable_text(message.event)
            if text:
                index_rows.append((message.id, text, message.role))
        conn.executemany("INSERT INTO messages_fts(rowid, text, role) VALUES (?, ?, ?)", index_rows)
        index_rows.clear()
    conn.execute("UPDATE sessions SET title = ? WHERE id = ?", (title, session_id))


def _migrate_seed(conn: sqlite3.Connection) -> None:
    """Rebuild the seed's ``messages`` as one session, keeping ids and timestamps."""
    old_columns = column_names(conn, "messages")
    old_seq = _autoincrement_seq(conn, "messages")
    conn.execute("ALTER TABLE messages RENAME TO seed_messages")
    _create_tables(conn)
    now = time.time()
    session_id = conn.execute(
        "INSERT INTO sessions(title, created_at, updated_at) VALUES (NULL, ?, ?) RETURNING id",
        (now, now),
    ).fetchone()[0]
    # The JSON's event_type wins. Rows without one take the kind column (the
    # second seed version); in the first version, which had no kind column,
    # a JSON object without a "role" key can only be a compaction (session
    # events always carry role, even as null). json_valid guards json_extract,
    # so malformed JSON cannot abort the migration; COALESCEs keep
    # hand-damaged rows instead of failing NOT NULL.
    if "kind" in old_columns:
        fallback_kind = "COALESCE(kind, 'session')"
    else:
        fallback_kind = (
            "CASE WHEN json_valid(event_json) AND json_type(event_json) = 'object' "
            "AND json_type(event_json, '$.role') IS NULL THEN 'compaction' ELSE 'session' END"
        )
    conn.execute(
        f"""
        INSERT INTO messages(id, session_id, kind, event_json, created_at)
        SELECT id, ?,
               CASE WHEN json_valid(event_json)
                         AND json_extract(event_json, '$.event_type') IN ('session', 'compaction')
                    THEN json_extract(event_json, '$.event_type')
                    ELSE {fallback_kind} END,
               COALESCE(event_json, ''), COALESCE(created_at, 0.0)
        FROM seed_messages ORDER BY id
        """,
        (session_id,),
    )
    # Dropped before our indexes exist, so a seed index name cannot collide.
    conn.execute("DROP TABLE seed_messages")
    _create_indexes_and_fts(conn)
    # A seed "clear" emptied the table without resetting AUTOINCREMENT; keep
    # the counter so no id the seed ever handed out is reused.
    if old_seq > _autoincrement_seq(conn, "messages"):
        updated = conn.execute(
            "UPDATE sqlite_sequence SET seq = ? WHERE name = 'messages'", (old_seq,)
        ).rowcount
        if not updated:
            conn.execute(
                "INSERT INTO sqlite_sequence(name, seq) VALUES ('messages', ?)", (old_seq,)
            )
    conn.execute(
        """
        UPDATE sessions SET
            created_at = COALESCE((SELECT MIN(created_at) FROM messages), created_at),
            updated_at = COALESCE((SELECT MAX(created_at) FROM messages), updated_at),
            message_count = (SELECT COUNT(*) FROM messages),
            compaction_count = (SELECT COUNT(*) FROM messages WHERE kind = 'compaction')
        WHERE id = ?
        """,
        (session_id,),
    )
    _index_and_title_seed_rows(conn, session_id)


def _migration_1_sessions_and_search(conn: sqlite3.Connection) -> None:
    """Sessions, session-scoped messages, indexes, full-text search; adopts a seed file."""
    if "messages" in table_names(conn):
        _migrate_seed(conn)
    else:
        _create_tables(conn)
        _create_indexes_and_fts(conn)


_LEASES_DDL = """
CREATE TABLE session_leases (
    session_id INTEGER PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
    holder     TEXT NOT NULL,
    pid        INTEGER NOT NULL,
    host       TEXT NOT NULL,
    started    REAL,
    renewed_at REAL NOT NULL
)"""


def _migration_2_session_leases(conn: sqlite3.Connection) -> None:
    """One writer per session: the lease a process holds while a turn runs."""
    conn.execute(_LEASES_DDL)


#: The index of schema 3: stems words, folds diacritics.
_FTS_V3_DDL = (
    "CREATE VIRTUAL TABLE messages_fts USING fts5("
    "text, role UNINDEXED, tokenize = 'porter unicode61 remove_diacritics 2')"
)
#: Rows read, indexed and reported per batch while re-indexing.
INDEX_BATCH = 1_000


def _migration_3_total_recall_index(conn: sqlite3.Connection, progress: MigrationProgress) -> None:
    """Rebuild the search index: stemmed, and covering calls, results and summaries."""
    conn.execute("DROP TABLE messages_fts")
    conn.execute(_FTS_V3_DDL)
    total = int(conn.execute("SELECT count(*) FROM messages").fetchone()[0])
    if total == 0:
        return
    progress(0, total)
    done = 0
    cursor = conn.execute(f"SELECT {MESSAGE_COLUMNS} FROM messages ORDER BY id")
    while batch := cursor.fetchmany(INDEX_BATCH):
        # Unreadable rows are kept verbatim, just not searchable.
        messages = (message_from_row(row) for row in batch)
        conn.executemany(INDEX_INSERT_SQL, index_entries((m.id, m.event) for m in messages))
        done += len(batch)
        progress(min(done, total), total)


def _migration_4_rewind_and_fork(conn: sqlite3.Connection) -> None:
    """Where a fork came from; rewind rows need no change (``kind`` is free text)."""
    conn.execute(
        "ALTER TABLE sessions ADD COLUMN forked_from_session INTEGER "
        "REFERENCES sessions(id) ON DELETE SET NULL"
    )
    conn.execute("ALTER TABLE sessions ADD COLUMN forked_from_message INTEGER")


def _migration_5_no_empty_sessions(conn: sqlite3.Connection) -> None:
    """Delete the sessions without messages earlier versions made on every launch and clear."""
    # By their rows, not message_count: a count a hand edit got wrong must
    # not cost a conversation. A fork of one keeps its rows (SET NULL).
    conn.execute(
        "DELETE FROM sessions WHERE NOT EXISTS "
        "(SELECT 1 FROM messages WHERE messages.session_id = sessions.id)"
    )


def _migration_6_trash(conn: sqlite3.Connection) -> None:
    """Deleting a session moves it to the trash; only emptying the trash removes it."""
    conn.execute("ALTER TABLE sessions ADD COLUMN trashed_at REAL")
    conn.execute(
        "CREATE INDEX sessions_in_trash ON sessions(trashed_at DESC, id DESC) "
        "WHERE trashed_at IS NOT NULL"
    )


def _migration_7_session_model(conn: sqlite3.Connection) -> None:
    """The model a session chose (the palette's "Change model…"), kept across restarts."""
    conn.execute("ALTER TABLE sessions ADD COLUMN model TEXT")


_EMBEDDERS_DDL = """
CREATE TABLE embedders (
    id   INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    dims INTEGER NOT NULL
)"""

_MESSAGE_VECTORS_DDL = """
CREATE TABLE message_vectors (
    message_id  INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
    embedder_id INTEGER NOT NULL REFERENCES embedders(id) ON DELETE CASCADE,
    vector      BLOB NOT NULL,
    PRIMARY KEY (message_id, embedder_id)
) WITHOUT ROWID"""


def _migration_8_message_vectors(conn: sqlite3.Connection) -> None:
    """A vector per indexed message and embedder, for recall by meaning (filled later)."""
    conn.execute(_EMBEDDERS_DDL)
    conn.execute(_MESSAGE_VECTORS_DDL)


_MEMORIES_DDL = """
CREATE TABLE memories (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    text       TEXT NOT NULL,
    state      TEXT NOT NULL DEFAULT 'memory' CHECK (state IN ('memory', 'suggestion')),
    session_id INTEGER,
    message_id INTEGER,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL
)"""

#: The memories' own full-text index, tokenized as ``messages_fts``.
_MEMORIES_FTS_DDL = (
    "CREATE VIRTUAL TABLE memories_fts USING fts5("
    "text, tokenize = 'porter unicode61 remove_diacritics 2')"
)


def _migration_9_memories(conn: sqlite3.Connection) -> None:
    """Remembered facts and suggested ones: what every later session's instruction holds."""
    conn.execute(_MEMORIES_DDL)
    conn.execute("CREATE INDEX memories_by_state ON memories(state, id DESC)")
    conn.execute(_MEMORIES_FTS_DDL)


def _migration_10_index_forms(conn: sqlite3.Connection, progress: MigrationProgress) -> None:
    """NFKC and one token per Chinese, Japanese or Korean character in the search index."""
    reform_index(conn, progress)


_FILE_CONTENTS_DDL = """
CREATE TABLE file_contents (
    hash TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    data BLOB NOT NULL
)"""

_FILE_RESTORES_DDL = """
CREATE TABLE file_restores (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id      INTEGER NOT NULL,
    from_message_id INTEGER,
    undoes          INTEGER REFERENCES file_restores(id),
    created_at      REAL NOT NULL
)"""

_FILE_SNAPSHOTS_DDL = """
CREATE TABLE file_snapshots (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id  INTEGER NOT NULL,
    message_id  INTEGER REFERENCES messages(id) ON DELETE CASCADE,
    call_index  INTEGER,
    restore_id  INTEGER REFERENCES file_restores(id),
    path        BLOB NOT NULL,
    before_hash TEXT REFERENCES file_contents(hash),
    before_mode INTEGER,
    after_hash  TEXT REFERENCES file_contents(hash),
    after_mode  INTEGER,
    created_at  REAL NOT NULL,
    CHECK ((message_id IS NULL) <> (restore_id IS NULL))
)"""


def _migration_11_file_snapshots(conn: sqlite3.Connection) -> None:
    """What each file held before Koroku wrote it, deduplicated by content (rewind restores)."""
    conn.execute(_FILE_CONTENTS_DDL)
    conn.execute(_FILE_RESTORES_DDL)
    conn.execute(_FILE_SNAPSHOTS_DDL)
    conn.execute("CREATE INDEX file_snapshots_by_message ON file_snapshots(session_id, message_id)")
    conn.execute("CREATE INDEX file_snapshots_by_path ON file_snapshots(path, id)")
    conn.execute("CREATE INDEX file_snapshots_by_restore ON file_snapshots(restore_id)")
    conn.execute("CREATE INDEX file_restores_by_undoes ON file_restores(undoes)")


#: Ordered: ``MIGRATIONS[i]`` takes the file from version ``i`` to ``i + 1``.
#: Append only; never edit a released migration.
MIGRATIONS: Sequence[Migration | ReportingMigration] = (
    _migration_1_sessions_and_search,
    _migration_2_session_leases,
    ReportingMigration(_migration_3_total_recall_index),
    _migration_4_rewind_and_fork,
    _migration_5_no_empty_sessions,
    _migration_6_trash,
    _migration_7_session_model,
    _migration_8_message_vectors,
    _migration_9_memories,
    ReportingMigration(_migration_10_index_forms),
    _migration_11_file_snapshots,
)
