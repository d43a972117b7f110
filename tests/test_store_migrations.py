"""Schema versions: fresh files, seed-era ``agent.db`` files, and files from the future.

Seed files are built with plain sqlite3 exactly as the seed wrote them.
"""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Sequence
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from koroku_tui.events import CompactionEvent, SessionEvent
from koroku_tui.store import (
    SCHEMA_VERSION,
    SchemaTooNewError,
    SessionManager,
    StoreOpenError,
)
from koroku_tui.store import schema as schema_module

Row = tuple[int, str | None, str, float]  # id, kind (None: no kind column), json, created_at


def seed_json(role: str, text: str, *, event_type: str | None = "session") -> str:
    data: dict[str, Any] = {
        "role": role,
        "parts": [{"kind": "text", "text": text, "thought": False, "thought_signature_b64": None}],
    }
    if event_type is not None:
        data = {"event_type": event_type, **data}
    return json.dumps(data, separators=(",", ":"))


def seed_summary_json(text: str, *, with_event_type: bool = True) -> str:
    data: dict[str, Any] = {
        "parts": [{"kind": "text", "text": text, "thought": False, "thought_signature_b64": None}]
    }
    if with_event_type:
        data = {"event_type": "compaction", **data}
    return json.dumps(data, separators=(",", ":"))


def build_seed(path: Path, rows: Sequence[Row], *, with_kind: bool, seq: int | None = None) -> None:
    """An agent.db as the seed wrote it: one messages table, user_version 0."""
    conn = sqlite3.connect(path)
    kind_column = "kind TEXT NOT NULL DEFAULT 'session', " if with_kind else ""
    conn.execute(
        "CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, "
        f"{kind_column}event_json TEXT NOT NULL, created_at REAL NOT NULL)"
    )
    for row_id, kind, event_json, created_at in rows:
        if with_kind:
            conn.execute(
                "INSERT INTO messages(id, kind, event_json, created_at) VALUES (?, ?, ?, ?)",
                (row_id, kind or "session", event_json, created_at),
            )
        else:
            conn.execute(
                "INSERT INTO messages(id, event_json, created_at) VALUES (?, ?, ?)",
                (row_id, event_json, created_at),
            )
    if seq is not None:
        conn.execute("UPDATE sqlite_sequence SET seq = ? WHERE name = 'messages'", (seq,))
        if conn.execute("SELECT changes()").fetchone()[0] == 0:
            conn.execute("INSERT INTO sqlite_sequence(name, seq) VALUES ('messages', ?)", (seq,))
    conn.commit()
    conn.close()


def raw_rows(path: Path) -> list[tuple[int, str, float]]:
    with closing(sqlite3.connect(path, isolation_level=None)) as conn:
        return conn.execute(
            "SELECT id, event_json, created_at FROM messages ORDER BY id"
        ).fetchall()


def texts(events: Sequence[SessionEvent | CompactionEvent]) -> list[str]:
    return [e.summary if isinstance(e, CompactionEvent) else e.text for e in events]


# -- fresh ------------------------------------------------------------------------


def test_migrations_are_an_ordered_list_matching_the_version() -> None:
    assert SCHEMA_VERSION == len(schema_module.MIGRATIONS) >= 1
    assert all(callable(step) for step in schema_module.MIGRATIONS)


async def test_fresh_file_gets_the_current_schema(tmp_path: Path) -> None:
    path = tmp_path / "koroku.db"
    async with SessionManager(path):
        pass
    with closing(sqlite3.connect(path, isolation_level=None)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        names = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
        columns = [row[1] for row in conn.execute("PRAGMA table_info(messages)")]
        fks = conn.execute("PRAGMA foreign_key_list(messages)").fetchall()
    assert {"sessions", "messages", "messages_fts", "messages_by_session"} <= names
    assert {"messages_by_session_kind", "sessions_by_activity"} <= names
    assert columns == ["id", "session_id", "kind", "event_json", "created_at"]
    assert [(fk[2], fk[3], fk[4], fk[6]) for fk in fks] == [
        ("sessions", "session_id", "id", "CASCADE")
    ]


async def test_hot_queries_use_their_indexes(tmp_path: Path) -> None:
    path = tmp_path / "koroku.db"
    async with SessionManager(path):
        pass
    with closing(sqlite3.connect(path, isolation_level=None)) as conn:
        latest = conn.execute(
            "EXPLAIN QUERY PLAN SELECT id FROM messages WHERE session_id = 1 "
            "AND kind = 'compaction' AND id < 99 ORDER BY id DESC LIMIT 1"
        ).fetchall()
        sessions = conn.execute(
            "EXPLAIN QUERY PLAN SELECT id FROM sessions ORDER BY updated_at DESC, id DESC LIMIT 5"
        ).fetchall()
    assert "messages_by_session_kind" in latest[0][3]
    assert "sessions_by_activity" in sessions[0][3]


async def test_reopening_a_current_file_does_not_migrate_again(tmp_path: Path) -> None:
    path = tmp_path / "koroku.db"
    async with SessionManager(path) as store:
        await store.add_message(SessionEvent(role="user", parts=[]))
    before = raw_rows(path)
    for _ in range(2):
        async with SessionManager(path) as store:
            assert len(await store.load_all()) == 1
    assert raw_rows(path) == before


# -- seed-era files -----------------------------------------------------------------


SEED_WITH_KIND: list[Row] = [
    (1, "session", seed_json("user", "Plan my   Kyoto trip"), 100.0),
    (2, "session", seed_json("model", "Sure, here is a plan."), 101.0),
    (3, "compaction", seed_summary_json("Planned a Kyoto trip."), 102.0),
    (4, "session", seed_json("user", "Add a day in Nara"), 103.0),
    (5, "compaction", seed_summary_json("Kyoto plus Nara.", with_event_type=False), 104.0),
    (6, "session", seed_json("model", "Added Nara.", event_type=None), 105.0),
]


async def test_seed_with_kind_column_becomes_one_session_with_every_row(tmp_path: Path) -> None:
    path = tmp_path / "agent.db"
    build_seed(path, SEED_WITH_KIND, with_kind=True)
    before = raw_rows(path)
    async with SessionManager(path) as store:
        sessions = await store.list_sessions()
        assert len(sessions) == 1
        info = sessions[0]
        assert info.id == store.session_id
        assert (info.message_count, info.compaction_count) == (6, 2)
        assert (info.created_at, info.updated_at) == (100.0, 105.0)
        assert info.title == "Plan my Kyoto trip"
        # the latest compaction (row 5, whose JSON lacks event_type) starts the context
        assert texts(await store.load_messages()) == ["Kyoto plus Nara.", "Added Nara."]
        assert store.skipped_rows == []
        history = await store.load_all()
        assert [m.id for m in history] == [1, 2, 3, 4, 5, 6]
        assert [m.kind for m in history] == ["session"] * 2 + ["compaction"] + ["session"] + [
            "compaction",
            "session",
        ]
        assert [s.summary for s in await store.compaction_summaries()] == [
            "Planned a Kyoto trip.",
            "Kyoto plus Nara.",
        ]
        assert {h.message_id for h in await store.search("kyoto")} == {1, 3, 5}
        assert await store.add_message(SessionEvent(role="user", parts=[])) == 7
    # ids, timestamps and the JSON text itself are exactly the seed's
    assert raw_rows(path)[:6] == before
    with closing(sqlite3.connect(path, isolation_level=None)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


async def test_seed_without_kind_column_derives_kind_from_json(tmp_path: Path) -> None:
    path = tmp_path / "agent.db"
    rows: list[Row] = [
        (1, None, seed_json("user", "hello there", event_type=None), 10.0),
        (2, None, seed_json("model", "hi", event_type=None), 11.0),
        (3, None, seed_summary_json("greeted"), 12.0),
        (4, None, seed_json("user", "after summary", event_type=None), 13.0),
        # no event_type and no role: only a compaction looks like this
        (5, None, seed_summary_json("summed up", with_event_type=False), 14.0),
        (6, None, seed_json("model", "latest", event_type=None), 15.0),
    ]
    build_seed(path, rows, with_kind=False)
    before = raw_rows(path)
    async with SessionManager(path) as store:
        assert texts(await store.load_messages()) == ["summed up", "latest"]
        assert store.skipped_rows == []
        assert [m.kind for m in await store.load_all()] == [
            "session",
            "session",
            "compaction",
            "session",
            "compaction",
            "session",
        ]
        info = await store.get_session(store.session_id)
        assert (info.message_count, info.compaction_count, info.title) == (6, 2, "hello there")
    assert raw_rows(path) == before


async def test_seed_bad_rows_are_carried_over_untouched_and_reported(tmp_path: Path) -> None:
    path = tmp_path / "agent.db"
    rows: list[Row] = [
        (1, None, seed_json("user", "fine"), 1.0),
        (2, None, '{"event_type": "session", "role": "us', 2.0),  # truncated
        (3, None, "not json at all", 3.0),
        (4, None, seed_json("model", "also fine"), 4.0),
    ]
    build_seed(path, rows, with_kind=False)
    async with SessionManager(path) as store:
        assert texts(await store.load_messages()) == ["fine", "also fine"]
        assert [row_id for row_id, _ in store.skipped_rows] == [2, 3]
        history = await store.load_all()
        assert [m.id for m in history] == [1, 2, 3, 4]
        assert history[1].event is None and history[1].raw_json == rows[1][2]
        assert history[2].error is not None and "JSON" in history[2].error
    assert [r[1] for r in raw_rows(path)] == [r[2] for r in rows]


async def test_seed_autoincrement_counter_survives_an_emptied_table(tmp_path: Path) -> None:
    path = tmp_path / "agent.db"
    build_seed(path, [], with_kind=True, seq=41)  # the seed's "clear" left the counter at 41
    async with SessionManager(path) as store:
        assert await store.load_messages() == []
        assert await store.list_sessions() == []  # no messages: stored with the first
        new_id = await store.add_message(SessionEvent(role="user", parts=[]))
        assert len(await store.list_sessions()) == 1
    assert new_id == 42


async def test_a_failed_migration_leaves_the_seed_file_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "agent.db"
    build_seed(path, SEED_WITH_KIND, with_kind=True)
    before = raw_rows(path)
    real_step = schema_module.MIGRATIONS[0]

    def failing_step(conn: sqlite3.Connection) -> None:
        real_step(conn)  # does all the work, then fails before committing
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(schema_module, "MIGRATIONS", (failing_step,))
    with pytest.raises(StoreOpenError, match=r"agent\.db"):
        await SessionManager(path).initialize()
    with closing(sqlite3.connect(path, isolation_level=None)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 0
        names = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
    assert "sessions" not in names and "seed_messages" not in names
    assert raw_rows(path) == before
    monkeypatch.undo()
    async with SessionManager(path) as store:  # and it migrates fine afterwards
        assert len(await store.load_all()) == 6


# -- files we must not touch -----------------------------------------------------------


def file_state(path: Path) -> tuple[bytes, int, list[str]]:
    return path.read_bytes(), path.stat().st_mtime_ns, sorted(p.name for p in path.parent.iterdir())


async def test_a_newer_schema_is_refused_without_writing(tmp_path: Path) -> None:
    path = tmp_path / "koroku.db"
    async with SessionManager(path) as store:
        await store.add_message(SessionEvent(role="user", parts=[]))
    with closing(sqlite3.connect(path, isolation_level=None)) as conn:
        conn.execute("PRAGMA journal_mode = DELETE")
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 5}")
    before = file_state(path)
    store = SessionManager(path)
    with pytest.raises(SchemaTooNewError) as caught:
        await store.initialize()
    message = str(caught.value)
    assert "\n" not in message
    assert str(path) in message and f"version {SCHEMA_VERSION + 5}" in message
    assert "Upgrade Koroku" in message
    assert caught.value.found == SCHEMA_VERSION + 5
    assert file_state(path) == before  # bytes, mtime, and no -wal/-shm created


async def test_a_newer_schema_in_wal_mode_is_refused_without_writing(tmp_path: Path) -> None:
    path = tmp_path / "koroku.db"
    async with SessionManager(path):
        pass
    with closing(sqlite3.connect(path, isolation_level=None)) as conn:
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    main_before = path.read_bytes(), path.stat().st_mtime_ns
    with pytest.raises(SchemaTooNewError):
        await SessionManager(path).initialize()
    assert (path.read_bytes(), path.stat().st_mtime_ns) == main_before


async def test_another_programs_database_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    with closing(sqlite3.connect(path, isolation_level=None)) as conn:
        conn.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
    before = file_state(path)
    with pytest.raises(StoreOpenError, match="another program") as caught:
        await SessionManager(path).initialize()
    assert "invoices" in str(caught.value)
    assert file_state(path) == before


# -- version 2 files: the total recall index (migration 3) ------------------------------


def build_v2(path: Path, rows: Sequence[tuple[str, str]]) -> None:
    """A version-2 file as Koroku wrote it: one session, ``(kind, event_json)`` rows, old index."""
    with closing(sqlite3.connect(path, isolation_level=None)) as conn:
        for step in schema_module.MIGRATIONS[:2]:
            step(conn)
        conn.execute("PRAGMA user_version = 2")
        conn.execute("BEGIN")
        conn.execute(
            "INSERT INTO sessions(id, title, created_at, updated_at) VALUES (1, 'v2', 0, 0)"
        )
        for row_id, (kind, event_json) in enumerate(rows, start=1):
            conn.execute(
                "INSERT INTO messages(id, session_id, kind, event_json, created_at) "
                "VALUES (?, 1, ?, ?, ?)",
                (row_id, kind, event_json, float(row_id)),
            )
            # What version 2 indexed: the visible text only, unstemmed.
            try:
                data = json.loads(event_json)
            except json.JSONDecodeError:
                data = {}
            text = "".join(p.get("text", "") for p in data.get("parts", []) if "text" in p)
            if text:
                conn.execute(
                    "INSERT INTO messages_fts(rowid, text, role) VALUES (?, ?, ?)",
                    (row_id, text, data.get("role")),
                )
        conn.execute(
            "UPDATE sessions SET message_count = ?, updated_at = ? WHERE id = 1",
            (len(rows), float(len(rows))),
        )
        conn.execute("COMMIT")


def tool_result_json(name: str, output: str) -> str:
    part = {
        "kind": "function_response",
        "function_response": {"name": name, "response": {"output": output}},
        "fc_metadata": {"name": name, "args": {}},
    }
    return json.dumps({"event_type": "session", "role": "user", "parts": [part]})


V2_ROWS: list[tuple[str, str]] = [
    ("session", seed_json("user", "the compaction of the nightly backups")),
    ("session", tool_result_json("run_command", "restic snapshot saved to zanzibar")),
    ("session", "{not json"),  # unreadable: skipped, never fatal
    ("compaction", seed_summary_json("We migrated the wiki to Postgres.")),
    *[("session", seed_json("model", f"filler answer {n}")) for n in range(2_496)],
]


def fts_tokenizer(path: Path) -> str:
    with closing(sqlite3.connect(path, isolation_level=None)) as conn:
        sql = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'messages_fts'").fetchone()
    return str(sql[0])


async def test_a_v2_file_is_reindexed_with_stems_calls_and_results(tmp_path: Path) -> None:
    path = tmp_path / "koroku.db"
    build_v2(path, V2_ROWS)
    calls: list[tuple[int, int]] = []
    store = SessionManager(path)
    await store.initialize(progress=lambda done, total: calls.append((done, total)))
    try:
        await store.new_session()  # the old session is now a past one
        assert [h.message_id for h in (await store.search_history("compacted")).hits] == [1]
        assert [h.message_id for h in (await store.search_history("backup")).hits] == [1]
        assert [h.message_id for h in (await store.search_history("zanzibar")).hits] == [2]
        assert [h.message_id for h in (await store.search_history("migrating wiki")).hits] == [4]
        assert (await store.search_history("filler")).total == 2_496
        assert len(await store.load_all(1)) == 2_500  # the unreadable row is still there
    finally:
        await store.close()
    reindexed = [(0, 2_500), (1_000, 2_500), (2_000, 2_500), (2_500, 2_500)]
    reformed = [(0, 2_499), (1_000, 2_499), (2_000, 2_499), (2_499, 2_499)]  # migration 8
    assert calls == reindexed + reformed
    assert "porter unicode61 remove_diacritics 2" in fts_tokenizer(path)
    with closing(sqlite3.connect(path, isolation_level=None)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


async def test_a_crash_while_reindexing_leaves_the_v2_file_intact(tmp_path: Path) -> None:
    path = tmp_path / "koroku.db"
    build_v2(path, V2_ROWS)
    old_index = fts_tokenizer(path)

    def power_cut(done: int, total: int) -> None:
        if done >= 1_000:  # half way through the rows
            raise sqlite3.OperationalError("disk I/O error")

    with pytest.raises(StoreOpenError, match=r"koroku\.db"):
        await SessionManager(path).initialize(progress=power_cut)
    with closing(sqlite3.connect(path, isolation_level=None)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 2
        assert conn.execute("SELECT count(*) FROM messages_fts").fetchone()[0] == 2_498
        hits = conn.execute(
            "SELECT rowid FROM messages_fts WHERE messages_fts MATCH 'nightly'"
        ).fetchall()
    assert fts_tokenizer(path) == old_index and hits == [(1,)]
    async with SessionManager(path) as store:  # and the next start migrates it
        await store.new_session()
        assert (await store.search_history("zanzibar")).total == 1


# -- version 4: empty sessions ------------------------------------------------------


def build_v4(path: Path, sessions: Sequence[tuple[int, int]]) -> None:
    """A version-4 file: ``(session id, messages)``; version 4 made a row on every launch."""
    with closing(sqlite3.connect(path, isolation_level=None)) as conn:
        for step in schema_module.MIGRATIONS[:4]:
            step(conn)
        conn.execute("PRAGMA user_version = 4")
        for session_id, count in sessions:
            conn.execute(
                "INSERT INTO sessions(id, created_at, updated_at, message_count) "
                "VALUES (?, ?, ?, ?)",
                (session_id, float(session_id), float(session_id), count),
            )
            for n in range(count):
                conn.execute(
                    "INSERT INTO messages(session_id, event_json, created_at) VALUES (?, ?, ?)",
                    (session_id, seed_json("user", f"message {n} of {session_id}"), 0.0),
                )


async def test_migration_5_removes_empty_sessions_and_keeps_the_rest(tmp_path: Path) -> None:
    path = tmp_path / "koroku.db"
    build_v4(path, [(1, 2), (2, 0), (3, 0), (4, 1), (5, 0)])
    before = raw_rows(path)
    async with SessionManager(path) as store:
        assert [s.id for s in await store.list_sessions()] == [4, 1]
        assert store.session_id == 4  # the most recent one with messages
        await store.new_session()
        assert store.session_id > 5  # the removed sessions' ids are never reused
    assert raw_rows(path) == before
    with closing(sqlite3.connect(path, isolation_level=None)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert conn.execute("SELECT id FROM sessions ORDER BY id").fetchall() == [(1,), (4,)]


# -- an upgrade killed part way -----------------------------------------------------

KILLED_UPGRADE = """
import asyncio, os, signal, sys
from pathlib import Path
from koroku_tui.store import SessionManager, schema

path, target, when = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
steps = list(schema.MIGRATIONS)
step = steps[target - 1]

def killed(conn, progress):
    if when == "after":  # every write of the step done, its commit not
        step(conn, progress) if isinstance(step, schema.ReportingMigration) else step(conn)
    os.kill(os.getpid(), signal.SIGKILL)

steps[target - 1] = schema.ReportingMigration(killed)
schema.MIGRATIONS = tuple(steps)
asyncio.run(SessionManager(path).initialize())
"""


def file_version(path: Path) -> int:
    with closing(sqlite3.connect(path, isolation_level=None)) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        return int(conn.execute("PRAGMA user_version").fetchone()[0])


@pytest.mark.parametrize("when", ["before", "after"])
@pytest.mark.parametrize("target", range(1, SCHEMA_VERSION + 1))
async def test_a_kill_during_an_upgrade_leaves_a_file_the_next_start_finishes(
    tmp_path: Path, target: int, when: str
) -> None:
    """SIGKILL before step ``target`` starts, or once its writes are done but not committed.

    The README says what happens: the file stays consistent at the last
    version the upgrade finished (the one it had, or one on the way), and
    the next start goes on from there, every row kept.
    """
    path = tmp_path / "agent.db"
    build_seed(path, SEED_WITH_KIND, with_kind=True)
    before = raw_rows(path)
    script = tmp_path / "killed_upgrade.py"
    script.write_text(KILLED_UPGRADE, encoding="utf-8")
    done = subprocess.run(  # noqa: ASYNC221 (the test waits for nothing else)
        [sys.executable, str(script), str(path), str(target), when],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == -signal.SIGKILL, done.stderr
    assert file_version(path) == target - 1  # consistent, at the last step that committed
    async with SessionManager(path) as store:  # the next start
        [info] = await store.list_sessions()
        assert (info.message_count, info.title) == (6, "Plan my Kyoto trip")
        assert {h.message_id for h in await store.search("kyoto")} == {1, 3, 5}
    assert file_version(path) == SCHEMA_VERSION
    assert raw_rows(path) == before


def test_the_readme_says_what_an_interrupted_upgrade_does() -> None:
    """It said the file stays "as it was"; a kill between steps leaves a version on the way."""
    readme = " ".join((Path(__file__).parents[1] / "README.md").read_text().split())
    assert "An interrupted upgrade leaves the file as it was" not in readme
    assert (
        "an interrupted one (a crash, a kill, a power cut) loses nothing and leaves the file "
        "consistent at the last version it finished (the one it had, or one on the way), and "
        "the next start goes on from there."
    ) in readme
