"""The SQLite schema of Koroku's database, and ``migrate``, which brings a file to it.

The steps themselves are in ``koroku_tui.store.migrations``.

Schema version 1 (``PRAGMA user_version = 1``)::

    sessions                      one row per conversation
      id               INTEGER PRIMARY KEY AUTOINCREMENT   never reused
      title            TEXT        NULL until the first user message (its text,
                                   ~60 chars) or a rename; never overwritten
                                   by later messages
      created_at       REAL        seconds since the epoch
      updated_at       REAL        newest message (last activity)
      message_count    INTEGER     rows in messages, kept in the insert transaction
      compaction_count INTEGER     of which compactions

    messages                      every event ever stored; compaction hides
                                  nothing from here, it only adds a summary row
      id          INTEGER PRIMARY KEY AUTOINCREMENT         never reused
      session_id  INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE
      kind        TEXT NOT NULL DEFAULT 'session'           'session' | 'compaction'
      event_json  TEXT NOT NULL    the event's Pydantic JSON (koroku_tui.events)
      created_at  REAL NOT NULL

    messages_by_session       INDEX messages(session_id, id)
                              the context tail after a compaction; paging
    messages_by_session_kind  INDEX messages(session_id, kind, id)
                              the latest compaction of a session in one seek
    sessions_by_activity      INDEX sessions(updated_at DESC, id DESC)
                              the session list, newest activity first

    messages_fts              VIRTUAL TABLE fts5(text, role UNINDEXED)
                              rowid = messages.id; the visible text of session
                              events and the summary of compactions; rows are
                              added and removed in the same transaction as
                              their message

Schema version 2 adds::

    session_leases                one row per session a turn is running on
      session_id  INTEGER PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE
      holder      TEXT NOT NULL    random id of the SessionManager holding it
      pid         INTEGER NOT NULL the holder's process id
      host        TEXT NOT NULL    the holder's host name
      started     REAL             the holder process's start time (pid reuse)
      renewed_at  REAL NOT NULL    last write under the lease

Schema version 3 rebuilds ``messages_fts`` (same columns) so it finds
everything the model's ``search_history`` searches::

    messages_fts              VIRTUAL TABLE fts5(text, role UNINDEXED,
                              tokenize = 'porter unicode61 remove_diacritics 2')
                              rowid = messages.id; per session event its
                              visible text, each call's name and arguments and
                              each tool result (capped per part), per compaction
                              its summary (``search.searchable_text``); thoughts
                              are not indexed. Porter stemming: "compacted"
                              finds "compaction". Migration 3 re-indexes every
                              readable row (unreadable ones are skipped),
                              telling ``progress(done, total)`` every 1,000 rows

Schema version 4 adds rewind and fork (issue 11)::

    sessions
      forked_from_session INTEGER NULL REFERENCES sessions(id) ON DELETE SET NULL
                                   a fork: the session its first rows were
                                   copied from (NULL once that is deleted)
      forked_from_message INTEGER NULL
                                   the message M of that session the fork was
                                   made before (NULL: a fork of all of it)

    messages.kind             gains 'rewind': a row whose JSON is a
                              ``RewindEvent`` ({"event_type": "rewind",
                              "before_message_id": M}): the model's context
                              resumes from the state before message M; the
                              rows from M up to it stay, abandoned (shown,
                              marked, never sent). Not indexed for search.
                              ``message_count`` counts it (it is a row).

    messages.kind             gains 'error' (issue 12, no new version: the
                              column is free text): a ``TurnErrorEvent``
                              ({"event_type": "error", "message": ...,
                              "kind": ...}), the sentence a turn ended on.
                              Shown by readers, never sent, not indexed,
                              not copied into forks; counted like a rewind.
                              An older Koroku reads it as an unreadable row.

Schema version 5 stores a session with its first message (issue 12)::

    sessions                  every row has at least one message: a new
                              session's id is reserved (inserted and deleted
                              at once, AUTOINCREMENT never reuses it) and its
                              row written in the transaction of its first
                              message. Migration 5 deletes the sessions
                              earlier versions left without messages (every
                              launch and every "new session" made one).

Schema version 6 adds the trash (issue 22)::

    sessions
      trashed_at  REAL NULL       NULL: a live session; else when the user
                                  deleted it (moved it to the trash). Its
                                  rows and index entries stay (its forks'
                                  copies are indexed, as before a delete),
                                  but it is left out of the session list,
                                  the search (screen and ``search_history``),
                                  ``read_session``, ``--session``, ``--fork``
                                  and the choice of the latest session.
                                  Restoring sets it back to NULL; only
                                  emptying the trash removes its rows.

    sessions_in_trash         INDEX sessions(trashed_at DESC, id DESC)
                              WHERE trashed_at IS NOT NULL: the trash list

Schema version 7 adds a session's model (issue 24)::

    sessions
      model       TEXT NULL       the Gemini model the session chose in the
                                  palette ("Change model…"), used for its
                                  turns from then on, after restarts too;
                                  NULL: the configured one (``model`` in
                                  config.toml, ``KOROKU_MODEL``). ``--model``
                                  overrides it for one run without changing
                                  it. A fork starts with its source's.

Schema version 8 adds vectors for recall by meaning (issue 26)::

    embedders                     one row per embedding model that made vectors
      id          INTEGER PRIMARY KEY
      name        TEXT NOT NULL UNIQUE  the embedder's id, e.g.
                                   "wordllama-l2_supercat-256" or
                                   "gemini-embedding-001-256"; the store never
                                   reads more into it
      dims        INTEGER NOT NULL  the length of its vectors

    message_vectors               the vector of a message's searchable text
      message_id  INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE
      embedder_id INTEGER NOT NULL REFERENCES embedders(id) ON DELETE CASCADE
      vector      BLOB NOT NULL    ``dims`` float16 values, little-endian, of
                                   unit length (cosine = dot product)
      PRIMARY KEY (message_id, embedder_id)  WITHOUT ROWID

                              Exactly the rows of ``messages_fts`` get one
                              (the same text), per embedder, written in the
                              background after the message (never in its
                              insert transaction), a batch per transaction: a
                              crash loses no vector already written, and the
                              rows without one are found again on the next
                              start (``search.unembedded``). Vectors of another
                              embedder stay (switching back costs nothing);
                              a search uses the configured one's only.
                              Migration 8 creates the empty tables: the app
                              fills them after its first frame.

Schema version 9 adds the memories (issue 26)::

    memories                  facts Koroku keeps about the user, and suggested ones
      id          INTEGER PRIMARY KEY AUTOINCREMENT   never reused: "memory 7" the
                                  model was told never names another one
      text        TEXT NOT NULL   the fact, as remembered or edited (user or
                                  model text: untrusted wherever it is shown)
      state       TEXT NOT NULL DEFAULT 'memory'      'memory' | 'suggestion'
                                  a memory is in the system instruction of
                                  every request; a suggestion (proposed at a
                                  compaction) waits until the user accepts it
      session_id  INTEGER NULL    the conversation it came from (NULL: added
                                  by hand in the memory pane)
      message_id  INTEGER NULL    the message of that conversation: the user's
                                  message of the turn that called remember,
                                  or the compaction summary that suggested it
      created_at  REAL NOT NULL
      updated_at  REAL NOT NULL   last edit or acceptance

    memories_by_state         INDEX memories(state, id DESC)
                              the memories of the prompt, newest first
    memories_fts              VIRTUAL TABLE fts5(text, tokenize = 'porter
                              unicode61 remove_diacritics 2')
                              rowid = memories.id, kept in the same
                              transaction as the row: the memories most
                              related to the conversation, past the cap

    The source columns are plain integers, no foreign keys: a memory outlives
    its conversation (emptying the trash removes the rows, never a memory;
    the pane then says the source is gone), and deleting messages costs no
    look-up here. Ids are never reused, so a stale one names nothing.
    Deleting a memory (the user's choice in the pane, or the model's
    ``forget``) removes its row and index entry; the conversation stays.

Schema version 10 changes what the search index holds (issue 26), not its
columns::

    messages_fts.text         the searchable text in NFKC (``ＦＵＬＬ`` is
                              ``FULL``, ``ﬁle`` is ``file``), with a zero-width
                              space (U+200B) between each Chinese, Japanese or
                              Korean character and the letter or digit beside
                              it: each is a token, and a word of them is a
                              phrase (``search_forms.index_form``). Snippets
                              drop the zero-width spaces again. Migration 10
                              reads each row's indexed text back (no message
                              is parsed), and rewrites those whose form
                              changed, telling ``progress(done, total)``
                              every 1,000 rows: at 100,000 messages about
                              0.3 s for an English history (a handful of rows
                              change, the index keeps its 33 MB), 4 s for one
                              in Chinese, Japanese and Korean (all change; the
                              index grows from 37 to 55 MB). Done in the
                              migration rather than in the background: that
                              is a one-off few seconds, and search never sees
                              two forms at once

Schema version 11 adds file snapshots (issue 27: rewind restores files)::

    file_contents             each content once: what a file held
      hash        TEXT PRIMARY KEY    SHA-256 of the bytes, hex
      size        INTEGER NOT NULL
      data        BLOB NOT NULL
    file_restores             a restore (rewind or fork "with files", or an undo)
      id              INTEGER PRIMARY KEY AUTOINCREMENT
      session_id      INTEGER NOT NULL   the session it was done in (no foreign
                                         key: a fork's row may not exist yet)
      from_message_id INTEGER NULL       the message rewound to / forked at
      undoes          INTEGER NULL REFERENCES file_restores(id)
      created_at      REAL NOT NULL
    file_snapshots            one file before and after one write by Koroku
      id          INTEGER PRIMARY KEY AUTOINCREMENT
      session_id  INTEGER NOT NULL
      message_id  INTEGER NULL REFERENCES messages(id) ON DELETE CASCADE
                                  the model row holding the write_file call
      call_index  INTEGER NULL    the call's place among that row's calls
      restore_id  INTEGER NULL REFERENCES file_restores(id)
                                  exactly one of message_id, restore_id is set
      path        BLOB NOT NULL   the file's absolute path, as bytes (the store
                                  knows no workspace)
      before_hash TEXT NULL       the content before; NULL: it did not exist
      before_mode INTEGER NULL    its permission bits
      after_hash  TEXT NULL       what Koroku put there; NULL: it removed it
      after_mode  INTEGER NULL
      created_at  REAL NOT NULL

    file_snapshots_by_message INDEX (session_id, message_id)
    file_snapshots_by_path    INDEX (path, id): what Koroku last wrote there
    file_snapshots_by_restore INDEX (restore_id)
    file_restores_by_undoes   INDEX (undoes)

    The call's model row is committed before its calls run, so a snapshot
    is committed in its own transaction BEFORE the file is written: a crash
    between the two leaves a snapshot of a write that never happened (a
    restore finds the file as it was, or asks), never a write without its
    snapshot. A restore writes its own rows (before/after of each file it
    puts back) ahead of each file it writes, and is undone by a restore of
    those rows. Emptying the trash removes a session's snapshots and
    restores, then every content no snapshot names any more.

Connections use WAL, ``synchronous=NORMAL``, ``foreign_keys=ON`` and a busy
timeout. Each migration runs in its own ``BEGIN IMMEDIATE`` transaction that
also sets ``user_version``, so a crash leaves either the old or the new schema.

Version 0 is either an empty file or a seed-era ``agent.db``: a single
``messages`` table (with or without ``kind``) and no sessions. Migration 1
turns the latter into one session keeping every row, its id, timestamp and
JSON text (the AUTOINCREMENT counter too). A row's kind comes from its JSON's
``event_type``, else the old ``kind`` column, else (first seed version) from
the JSON's shape: no ``role`` key means a compaction. Unreadable rows are
carried over verbatim and reported when loaded.
"""

from __future__ import annotations

import sqlite3

from koroku_tui.store.migrations import (
    MIGRATIONS,
    Migration,
    MigrationProgress,
    ReportingMigration,
    column_names,
    is_seed_messages_table,
    table_names,
)

__all__ = [
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "Migration",
    "MigrationProgress",
    "ReportingMigration",
    "column_names",
    "is_seed_messages_table",
    "migrate",
    "table_names",
    "user_version",
]


def user_version(conn: sqlite3.Connection) -> int:
    """The schema version stored in the file header."""
    row = conn.execute("PRAGMA user_version").fetchone()
    return int(row[0])


SCHEMA_VERSION = len(MIGRATIONS)


class SchemaVersionError(Exception):
    """Internal: the file's version is newer than ``SCHEMA_VERSION``."""

    def __init__(self, found: int) -> None:
        super().__init__(found)
        self.found = found


def migrate(conn: sqlite3.Connection, progress: MigrationProgress | None = None) -> int:
    """Bring the file to ``SCHEMA_VERSION``; return the version it had.

    ``conn`` must be in autocommit mode (``isolation_level=None``). Each step
    re-reads the version inside its write transaction, so two Koroku
    processes opening an old file at once migrate it once.
    """
    found = user_version(conn)
    if found > SCHEMA_VERSION:
        raise SchemaVersionError(found)
    for target in range(found + 1, SCHEMA_VERSION + 1):
        conn.execute("BEGIN IMMEDIATE")
        try:
            current = user_version(conn)
            if current > SCHEMA_VERSION:
                raise SchemaVersionError(current)
            if current < target:
                step = MIGRATIONS[target - 1]
                if isinstance(step, ReportingMigration):
                    step(conn, progress)
                else:
                    step(conn)
                # PRAGMA takes no parameters; target is an int we computed.
                conn.execute(f"PRAGMA user_version = {int(target)}")
            conn.execute("COMMIT")
        except BaseException:
            # Some failures (disk full) end the transaction by themselves.
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
    return found
