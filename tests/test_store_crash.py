"""Crashes and bad input: SIGKILL mid-write, damaged rows, files that cannot be opened.

The user must never see a traceback, and nothing already stored may be lost.
"""

from __future__ import annotations

import importlib.util
import os
import signal
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path
from types import ModuleType

import pytest
from helpers.events import user

from koroku_tui.events import CompactionEvent, SessionEvent, StoredEventAdapter
from koroku_tui.store import (
    SessionManager,
    StoreError,
    StoreOpenError,
    StoreWriteError,
)

ROOT = Path(__file__).resolve().parent.parent
WRITER = ROOT / "tests" / "helpers" / "store_writer.py"


def load_writer() -> ModuleType:
    spec = importlib.util.spec_from_file_location("store_writer", WRITER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def texts(events: list[SessionEvent | CompactionEvent]) -> list[str]:
    return [e.summary if isinstance(e, CompactionEvent) else e.text for e in events]


def execute(path: Path, sql: str, params: tuple[object, ...] = ()) -> None:
    with closing(sqlite3.connect(path, isolation_level=None)) as conn:
        conn.execute(sql, params)


# -- SIGKILL -------------------------------------------------------------------------


def run_writer_and_kill(path: Path, label: str, lines_before_kill: int) -> list[tuple[int, str]]:
    """Start the writer, SIGKILL it after some committed ids; return every id it printed."""
    process = subprocess.Popen(
        [sys.executable, str(WRITER), str(path), label],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    printed: list[tuple[int, str]] = []
    deadline = time.monotonic() + 30
    try:
        while len(printed) < lines_before_kill:
            line = process.stdout.readline()
            if not line:
                stderr = process.stderr.read() if process.stderr else ""
                pytest.fail(f"writer exited early: {stderr}")
            assert time.monotonic() < deadline, "writer too slow"
            row_id, name = line.split()
            printed.append((int(row_id), name))
    finally:
        # Mid-loop, so most likely inside a transaction or between statements.
        os.kill(process.pid, signal.SIGKILL)
        rest, _ = process.communicate(timeout=10)
    assert process.returncode == -signal.SIGKILL
    for line in rest.splitlines(keepends=True):
        if line.endswith("\n"):  # a line cut by the kill was never confirmed
            row_id, name = line.split()
            printed.append((int(row_id), name))
    return printed


async def test_sigkill_mid_write_loses_nothing_that_was_confirmed(tmp_path: Path) -> None:
    path = tmp_path / "koroku.db"
    writer = load_writer()
    confirmed: list[tuple[int, str]] = []
    for round_number, lines in enumerate([40, 150, 90]):
        confirmed += run_writer_and_kill(path, f"r{round_number}", lines)

        with closing(sqlite3.connect(path)) as conn:
            assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
            stored = dict(conn.execute("SELECT id, event_json FROM messages").fetchall())
        for row_id, name in confirmed:
            assert row_id in stored, f"confirmed message {row_id} ({name}) is missing"
            label, n = name.rsplit("-", 1)
            expected = writer.event_for(label, int(n))
            assert StoredEventAdapter.validate_json(stored[row_id]) == expected

        # The store opens it again, continues the same session, and agrees.
        async with SessionManager(path) as store:
            assert store.skipped_rows == []
            context_ids = {m.id for m in await store.context_messages()}
            assert {row_id for row_id, _ in confirmed} <= context_ids
            info = await store.get_session(store.session_id)
            assert info.message_count == len(stored)
            assert len(await store.list_sessions()) == 1
            hits = await store.search(confirmed[-1][1])
            assert confirmed[-1][0] in {h.message_id for h in hits}


# -- rows that cannot be read -------------------------------------------------------


BAD_ROWS = {
    "truncated": '{"event_type":"session","role":"user","parts":[{"kind":"te',
    "not json": "hello, I edited this by hand",
    "unknown part kind": (
        '{"event_type":"session","role":"user","parts":[{"kind":"hologram","data":1}]}'
    ),
    "unknown event type": '{"event_type":"telepathy","parts":[]}',
    "kind mismatch": '{"event_type":"compaction","parts":[]}',  # stored with kind 'session'
    "json array": "[1, 2, 3]",
}


async def test_unreadable_rows_are_skipped_kept_and_reported(tmp_path: Path) -> None:
    path = tmp_path / "koroku.db"
    async with SessionManager(path) as store:
        sid = store.session_id
        await store.add_message(user("before"))
    for text in BAD_ROWS.values():
        execute(
            path,
            "INSERT INTO messages(session_id, kind, event_json, created_at) "
            "VALUES (?, 'session', ?, 1.0)",
            (sid, text),
        )
    async with SessionManager(path) as store:
        await store.add_message(user("after"))
        assert texts(await store.load_messages()) == ["before", "after"]
        skipped = store.skipped_rows
        assert len(skipped) == len(BAD_ROWS)
        assert all(reason and "\n" not in reason for _, reason in skipped)
        history = await store.load_all()
        assert len(history) == len(BAD_ROWS) + 2
        bad = [m for m in history if m.event is None]
        assert [m.raw_json for m in bad] == list(BAD_ROWS.values())
        assert all(m.error and not m.is_readable for m in bad)
        assert [m.id for m in bad] == [row_id for row_id, _ in skipped]
    with closing(sqlite3.connect(path)) as conn:
        kept = [r[0] for r in conn.execute("SELECT event_json FROM messages ORDER BY id")]
    assert kept[1:-1] == list(BAD_ROWS.values())  # untouched in the file


async def test_an_unreadable_latest_compaction_falls_back_to_the_previous(tmp_path: Path) -> None:
    path = tmp_path / "koroku.db"
    async with SessionManager(path) as store:
        sid = store.session_id
        await store.add_message(user("old"))
        await store.add_message(CompactionEvent.from_summary("good summary"))
        await store.add_message(user("middle"))
    execute(
        path,
        "INSERT INTO messages(session_id, kind, event_json, created_at) "
        'VALUES (?, \'compaction\', \'{"event_type":"compaction","parts":[{\', 2.0)',
        (sid,),
    )
    async with SessionManager(path) as store:
        await store.add_message(user("new"))
        # the model sees more rather than less: the good summary and all after it
        assert texts(await store.load_messages()) == ["good summary", "middle", "new"]
        assert len(store.skipped_rows) == 1
        assert [s.summary for s in await store.compaction_summaries()] == ["good summary"]


# -- files that cannot be opened --------------------------------------------------------


def assert_one_line_naming(error: StoreOpenError, path: Path) -> None:
    message = str(error)
    assert "\n" not in message
    assert str(path) in message
    assert message.endswith(".")


async def test_not_an_sqlite_file(tmp_path: Path) -> None:
    path = tmp_path / "koroku.db"
    path.write_bytes(b"This is my diary, not a database. " * 200)
    before = path.read_bytes()
    with pytest.raises(StoreOpenError, match="not an SQLite database") as caught:
        await SessionManager(path).initialize()
    assert_one_line_naming(caught.value, path)
    assert caught.value.__cause__ is not None  # the sqlite3 error is chained, not shown
    assert path.read_bytes() == before


async def test_a_folder_at_the_database_path(tmp_path: Path) -> None:
    path = tmp_path / "koroku.db"
    path.mkdir()
    with pytest.raises(StoreOpenError, match="folder") as caught:
        await SessionManager(path).initialize()
    assert_one_line_naming(caught.value, path)


async def test_a_file_where_the_parent_folder_should_be(tmp_path: Path) -> None:
    # Tests run as root, so "permission denied" is simulated by a path that
    # cannot exist: its parent is a regular file.
    blocker = tmp_path / "home"
    blocker.write_text("a file, not a folder")
    path = blocker / "koroku.db"
    with pytest.raises(StoreOpenError, match="cannot be created") as caught:
        await SessionManager(path).initialize()
    assert_one_line_naming(caught.value, path)


async def test_a_damaged_file(tmp_path: Path) -> None:
    path = tmp_path / "koroku.db"
    async with SessionManager(path) as store:
        for index in range(300):
            await store.add_message(user(f"message {index} " + "y" * 200))
    with closing(sqlite3.connect(path)) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    data = path.read_bytes()
    path.write_bytes(data[:4096] + b"\x00" * 100 + data[4196 : len(data) // 2])
    with pytest.raises(StoreOpenError) as caught:
        await SessionManager(path).initialize()
    assert_one_line_naming(caught.value, path)


async def test_a_file_locked_beyond_the_busy_timeout(tmp_path: Path) -> None:
    path = tmp_path / "koroku.db"
    execute(path, "CREATE TABLE messages (id INTEGER PRIMARY KEY, event_json TEXT, created_at)")
    with closing(sqlite3.connect(path, isolation_level=None)) as holder:
        holder.execute("BEGIN EXCLUSIVE")  # rollback-journal mode: blocks even readers
        started = time.monotonic()
        with pytest.raises(StoreOpenError, match="lock") as caught:
            await SessionManager(path, busy_timeout_ms=200).initialize()
        assert time.monotonic() - started < 5
        holder.execute("ROLLBACK")
    assert_one_line_naming(caught.value, path)
    async with SessionManager(path) as store:  # fine once the lock is gone
        assert await store.load_messages() == []


async def test_a_write_blocked_by_another_process_is_a_store_error(tmp_path: Path) -> None:
    path = tmp_path / "koroku.db"
    store = SessionManager(path, busy_timeout_ms=200)
    await store.initialize()
    try:
        await store.add_message(user("first"))
        with closing(sqlite3.connect(path, isolation_level=None)) as holder:
            holder.execute("BEGIN IMMEDIATE")  # holds the write lock
            with pytest.raises(StoreWriteError, match="could not save") as caught:
                await store.add_message(user("blocked"))
            assert "\n" not in str(caught.value)
            holder.execute("ROLLBACK")
        # nothing half-written, nothing phantom in memory; writing works again
        assert texts(await store.load_messages()) == ["first"]
        await store.add_message(user("second"))
        assert texts(await store.load_messages()) == ["first", "second"]
        assert (await store.get_session(store.session_id)).message_count == 2
    finally:
        await store.close()


async def test_every_open_failure_is_a_store_error(tmp_path: Path) -> None:
    # The class hierarchy callers rely on: one except clause shows them all.
    path = tmp_path / "koroku.db"
    path.write_text("garbage")
    with pytest.raises(StoreError):
        await SessionManager(path).initialize()
