"""Rewind with files, through the real agent, SDK, strict fake Gemini and SQLite.

The model writes files with ``write_file``; a rewind that restores files puts
each back to its state before the first rewound write (contents and mode), a
file that did not exist is removed, a file the user changed since is left
alone unless named, a file replaced by a link is never followed, and the
restore is itself recorded and can be undone.
"""

from __future__ import annotations

import os
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from helpers.agent_kit import function_responses, open_agent
from helpers.old_files import old_file
from helpers.rewind_kit import (
    another_window_takes_the_session,
    rewind_first_turn,
    snapshot_rows,
    writes,
)

from koroku_tui.agent import AgentError
from koroku_tui.agent.tools import ToolSettings
from koroku_tui.agent.tools.approval import ApprovalDecision, ApprovalRequest
from koroku_tui.agent.tools.builtin.file_io import MAX_KEPT_BYTES
from koroku_tui.agent.tools.file_restore import plan_rewind, plan_undo, restore_files
from koroku_tui.fake_gemini import FakeGemini
from koroku_tui.store import SessionManager


async def test_write_file_keeps_the_previous_state_deduplicated(
    fake: FakeGemini, tmp_path: Path, workspace: Path, ctx: ToolSettings
) -> None:
    (workspace / "a.txt").write_text("same")
    (workspace / "b.txt").write_text("same")
    writes(fake, ("a.txt", "A"), ("b.txt", "B"), ("new.txt", "N"))
    async with open_agent(fake, tmp_path, tool_settings=ctx) as agent:
        await agent.run_turn("edit")
    rows = snapshot_rows(tmp_path / "koroku.db")
    root = os.fsencode(workspace)
    assert [row["path"] for row in rows] == [root + b"/a.txt", root + b"/b.txt", root + b"/new.txt"]
    assert [row["before_data"] for row in rows] == [b"same", b"same", None]
    assert [row["after_data"] for row in rows] == [b"A", b"B", b"N"]
    assert rows[0]["before_hash"] == rows[1]["before_hash"]  # one content, two rows
    assert [row["call_index"] for row in rows] == [0, 1, 2]
    assert len({row["message_id"] for row in rows}) == 1


async def test_rewind_with_files_puts_back_contents_and_mode_and_removes_new_files(
    fake: FakeGemini, tmp_path: Path, workspace: Path, ctx: ToolSettings
) -> None:
    notes = workspace / "notes.txt"
    notes.write_text("old\n")
    notes.chmod(0o640)
    writes(fake, ("notes.txt", "new\n"), ("made/new.txt", "x"))
    writes(fake, ("notes.txt", "newer\n"), answer="Again.")
    async with open_agent(fake, tmp_path, tool_settings=ctx) as agent:
        await agent.run_turn("edit")
        await agent.run_turn("edit again")
        store = agent.session_manager
        assert store is not None
        notes.chmod(0o600)  # a mode change alone is no change of contents
        first = await rewind_first_turn(store)
        plan = await plan_rewind(store, workspace, first)
        assert plan.conflicts == []
        report = await restore_files(store, workspace, plan)
    assert report.refused == []
    assert sorted(report.restored) == ["made/new.txt", "notes.txt"]
    assert notes.read_text() == "old\n"
    assert notes.stat().st_mode & 0o777 == 0o640
    assert not (workspace / "made" / "new.txt").exists()


async def test_a_file_changed_by_the_user_is_left_alone_unless_named(
    fake: FakeGemini, tmp_path: Path, workspace: Path, ctx: ToolSettings
) -> None:
    (workspace / "mine.txt").write_text("v1")
    (workspace / "other.txt").write_text("o1")
    writes(fake, ("mine.txt", "v2"), ("other.txt", "o2"))
    async with open_agent(fake, tmp_path, tool_settings=ctx) as agent:
        await agent.run_turn("edit")
        store = agent.session_manager
        assert store is not None
        (workspace / "mine.txt").write_text("v3 by hand")
        first = await rewind_first_turn(store)
        plan = await plan_rewind(store, workspace, first)
        assert [item.shown for item in plan.conflicts] == ["mine.txt"]
        report = await restore_files(store, workspace, plan)
        assert report.refused == [
            "mine.txt was changed since Koroku wrote it, so it was not restored."
        ]
        assert (workspace / "mine.txt").read_text() == "v3 by hand"
        assert (workspace / "other.txt").read_text() == "o1"
        named = await plan_rewind(store, workspace, first)
        again = await restore_files(store, workspace, named, overwrite={named.files[0].path})
    assert again.restored == ["mine.txt"]
    assert (workspace / "mine.txt").read_text() == "v1"


async def test_a_file_replaced_by_a_link_is_not_followed(
    fake: FakeGemini, tmp_path: Path, workspace: Path, outside: Path, ctx: ToolSettings
) -> None:
    (workspace / "target.txt").write_text("t1")
    writes(fake, ("target.txt", "t2"))
    async with open_agent(fake, tmp_path, tool_settings=ctx) as agent:
        await agent.run_turn("edit")
        store = agent.session_manager
        assert store is not None
        (workspace / "target.txt").unlink()
        (workspace / "target.txt").symlink_to(outside / "secret.txt")
        first = await rewind_first_turn(store)
        report = await restore_files(store, workspace, await plan_rewind(store, workspace, first))
    assert report.refused == [
        "target.txt is now a symbolic link; a restore follows no link, so it was left as it is."
    ]
    assert (workspace / "target.txt").is_symlink()
    assert (outside / "secret.txt").read_text() == "top secret"


async def test_a_restore_is_recorded_and_undone(
    fake: FakeGemini, tmp_path: Path, workspace: Path, ctx: ToolSettings
) -> None:
    (workspace / "a.txt").write_text("before")
    writes(fake, ("a.txt", "after"), ("b.txt", "made"))
    async with open_agent(fake, tmp_path, tool_settings=ctx) as agent:
        await agent.run_turn("edit")
        store = agent.session_manager
        assert store is not None
        first = await rewind_first_turn(store)
        done = await restore_files(store, workspace, await plan_rewind(store, workspace, first))
        assert (workspace / "a.txt").read_text() == "before"
        latest = await store.latest_file_restore()
        assert latest is not None and latest.id == done.restore_id and latest.files == 2
        undo = await restore_files(store, workspace, await plan_undo(store, workspace, latest.id))
        assert sorted(undo.restored) == ["a.txt", "b.txt"]
        record = await store.file_restore(latest.id)
        assert record is not None and record.undone_by == undo.restore_id
    assert (workspace / "a.txt").read_text() == "after"
    assert (workspace / "b.txt").read_text() == "made"


async def test_a_version_10_file_gains_the_snapshot_tables(tmp_path: Path) -> None:
    path = tmp_path / "koroku.db"
    await old_file(path, 10)
    async with SessionManager(path) as store:
        assert [s.title for s in await store.list_sessions()] == ["before the upgrade"]
        assert await store.latest_file_restore() is None
    with closing(sqlite3.connect(path)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 11


async def test_a_file_too_large_to_keep_is_not_replaced(
    fake: FakeGemini, tmp_path: Path, workspace: Path, ctx: ToolSettings
) -> None:
    big = workspace / "big.log"
    with big.open("wb") as sparse:
        sparse.truncate(MAX_KEPT_BYTES + 1)
    writes(fake, ("big.log", "small"))
    async with open_agent(fake, tmp_path, tool_settings=ctx) as agent:
        await agent.run_turn("shrink it")
    answer = function_responses(fake, 1)[0]["response"]["error"]
    assert answer.startswith(f"'big.log' is {MAX_KEPT_BYTES + 1:,} bytes; Koroku keeps what")
    assert big.stat().st_size == MAX_KEPT_BYTES + 1
    assert snapshot_rows(tmp_path / "koroku.db") == []


async def test_what_cannot_be_kept_is_not_written(
    fake: FakeGemini, tmp_path: Path, workspace: Path
) -> None:
    """The snapshot is committed before the file is written: when the store refuses it
    (another window took the session while the user was asked), the file stays as it was."""
    (workspace / "a.txt").write_text("mine")
    db = tmp_path / "koroku.db"

    async def another_window_takes_it(request: ApprovalRequest) -> ApprovalDecision:
        another_window_takes_the_session(db)
        return ApprovalDecision.ALLOW_ONCE

    settings = ToolSettings(workspace=workspace, approval_callback=another_window_takes_it)
    writes(fake, ("a.txt", "theirs"))
    async with open_agent(fake, tmp_path, tool_settings=settings) as agent:
        with pytest.raises(AgentError):
            await agent.run_turn("edit")
    assert (workspace / "a.txt").read_text() == "mine"
    assert snapshot_rows(db) == []


async def test_a_write_that_never_landed_is_no_change_by_someone_else(
    fake: FakeGemini, tmp_path: Path, workspace: Path, ctx: ToolSettings
) -> None:
    """Koroku killed between keeping a write's snapshot and writing leaves the file as the
    write before it made it: a later restore puts it back without asking."""
    notes = workspace / "notes.txt"
    notes.write_text("v1")
    writes(fake, ("notes.txt", "v2"))
    writes(fake, ("notes.txt", "v3"), answer="Again.")
    async with open_agent(fake, tmp_path, tool_settings=ctx) as agent:
        await agent.run_turn("edit")
        await agent.run_turn("edit again")
        store = agent.session_manager
        assert store is not None
        notes.write_text("v2")  # as if the second write had been killed before it landed
        plan = await plan_rewind(store, workspace, await rewind_first_turn(store))
        assert plan.conflicts == []
        report = await restore_files(store, workspace, plan)
    assert report.refused == []
    assert notes.read_text() == "v1"
