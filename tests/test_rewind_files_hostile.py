"""Rewind with files against hostile files: huge ones, links in the path, many files.

Each case is something a user (or a command the model ran) can do to the
workspace between a write and its restore; the restore must refuse it with a
sentence or handle it, never follow a link, never freeze the app.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from helpers.agent_kit import open_agent
from helpers.rewind_kit import (
    after_a_turn_writing,
    another_window_takes_the_session,
    rewind_first_turn,
    snapshot_rows,
    writes,
)

from koroku_tui.agent.tools import ToolSettings
from koroku_tui.agent.tools.change_preview import MAX_LINE_CHARS, MAX_PREVIEW_BYTES
from koroku_tui.agent.tools.file_restore import (
    FileToRestore,
    plan_rewind,
    plan_undo,
    restore_diff,
    restore_files,
)
from koroku_tui.fake_gemini import FakeGemini
from koroku_tui.store import SessionBusyError
from koroku_tui.store.file_records import FileState


def changed_file(now: bytes, restored: bytes) -> FileToRestore:
    """A file Koroku wrote, changed since to ``now``, to be put back as ``restored``."""
    return FileToRestore(
        b"/ws/big.js",
        "big.js",
        target=FileState(restored, 0o644),
        last_written=FileState(b"koroku's", 0o644),
        found=FileState(now, 0o644),
    )


def test_the_diff_of_a_file_too_large_to_compare_is_not_computed() -> None:
    """A near-20 MB file took minutes in difflib: the dialog says why no diff is shown."""
    change = restore_diff(changed_file(b"x" * (MAX_PREVIEW_BYTES + 1), b"small"))
    assert change.lines == []
    assert (
        change.unreadable
        == f"{MAX_PREVIEW_BYTES + 1:,} bytes: too large to compare, so no diff is shown."
    )


def test_a_diff_line_of_a_minified_file_is_cut() -> None:
    change = restore_diff(changed_file(b"a" * 100_000, b"b" * 100_000))
    assert change.unreadable is None
    assert max(len(line) for line in change.lines) < MAX_LINE_CHARS + 40
    assert change.lines[-2:] == [
        f"-{'a' * (MAX_LINE_CHARS - 1)} … {100_001 - MAX_LINE_CHARS:,} more characters",
        f"+{'b' * (MAX_LINE_CHARS - 1)} … {100_001 - MAX_LINE_CHARS:,} more characters",
    ]


async def test_a_folder_replaced_by_a_link_is_not_followed(
    fake: FakeGemini, tmp_path: Path, workspace: Path, ctx: ToolSettings
) -> None:
    """``sub/`` became a link to ``other/`` holding a file like the one Koroku wrote: the
    restore must not write through the link (the plan would name ``sub/f.txt``)."""
    (workspace / "sub").mkdir()
    (workspace / "sub" / "f.txt").write_text("s1")
    async with after_a_turn_writing(fake, tmp_path, ctx, ("sub/f.txt", "s2")) as store:
        (workspace / "sub").rename(workspace / "other")
        (workspace / "sub").symlink_to("other")
        first = await rewind_first_turn(store)
        report = await restore_files(store, workspace, await plan_rewind(store, workspace, first))
    assert report.refused == [
        "A folder on the way to sub/f.txt is now a symbolic link; a restore follows no link, "
        "so it was left as it is."
    ]
    assert (workspace / "other" / "f.txt").read_text() == "s2"


async def test_undo_takes_back_only_this_sessions_restore(
    fake: FakeGemini, tmp_path: Path, workspace: Path, ctx: ToolSettings
) -> None:
    """Another window's restore (another session) is not what this window's undo takes
    back; a fork's restore belongs to the fork, where its undo is offered."""
    (workspace / "a.txt").write_text("a1")
    async with after_a_turn_writing(fake, tmp_path, ctx, ("a.txt", "a2")) as store:
        source = store.session_id
        first = (await store.user_turns())[-1].id
        fork = await store.fork(source, first)
        await store.switch_session(fork.id)
        done = await restore_files(
            store, workspace, await plan_rewind(store, workspace, first, source)
        )
        assert (workspace / "a.txt").read_text() == "a1"
        latest = await store.latest_file_restore()
        assert latest is not None and latest.id == done.restore_id
        await store.switch_session(source)
        assert await store.latest_file_restore() is None


async def test_a_restore_is_refused_while_another_window_holds_the_session(
    fake: FakeGemini, tmp_path: Path, workspace: Path, ctx: ToolSettings
) -> None:
    (workspace / "a.txt").write_text("a1")
    async with after_a_turn_writing(fake, tmp_path, ctx, ("a.txt", "a2")) as store:
        first = await rewind_first_turn(store)
        plan = await plan_rewind(store, workspace, first)
        another_window_takes_the_session(tmp_path / "koroku.db")
        with pytest.raises(SessionBusyError):
            await restore_files(store, workspace, plan)
    assert (workspace / "a.txt").read_text() == "a2"


async def test_a_file_written_many_times_is_read_once_to_plan(
    fake: FakeGemini, tmp_path: Path, workspace: Path, ctx: ToolSettings
) -> None:
    """Planning reads only each path's first snapshot: every later content of a file
    written a hundred times would otherwise all come into memory."""
    (workspace / "a.txt").write_text("a0")
    for step in range(1, 4):
        writes(fake, ("a.txt", f"a{step}"), ("b.txt", f"b{step}"), answer=f"Step {step}.")
    async with open_agent(fake, tmp_path, tool_settings=ctx) as agent:
        for step in range(1, 4):
            await agent.run_turn(f"step {step}")
        store = agent.session_manager
        assert store is not None
        first = await rewind_first_turn(store)
        kept = await store.first_file_writes_from(first)
    assert [(write.path.rsplit(b"/", 1)[-1], write.before.data) for write in kept] == [
        (b"a.txt", b"a0"),
        (b"b.txt", None),
    ]


async def test_emptying_the_trash_removes_what_its_files_held(
    fake: FakeGemini, tmp_path: Path, workspace: Path, ctx: ToolSettings
) -> None:
    """The trash removes a session for good: the contents its writes and restores kept go
    too, those another session still needs stay."""
    (workspace / "shared.txt").write_text("kept by both")
    (workspace / "secret.txt").write_text("password=hunter2")
    writes(fake, ("secret.txt", "redacted"), ("shared.txt", "one"))
    writes(fake, ("shared.txt", "two"), answer="Again.")
    db = tmp_path / "koroku.db"
    async with open_agent(fake, tmp_path, tool_settings=ctx) as agent:
        await agent.run_turn("edit")
        store = agent.session_manager
        assert store is not None
        doomed = store.session_id
        first = await rewind_first_turn(store)
        await restore_files(store, workspace, await plan_rewind(store, workspace, first))
        (workspace / "shared.txt").write_text("kept by both")
        await store.new_session()
        await agent.refresh()
        await agent.run_turn("edit again")
        await store.delete_session(doomed)
        assert await store.empty_trash() == 1
    kept = {row["before_data"] for row in snapshot_rows(db)}
    assert kept == {b"kept by both"}
    with closing(sqlite3.connect(db)) as conn:
        contents = {row[0] for row in conn.execute("SELECT data FROM file_contents")}
        assert conn.execute("SELECT COUNT(*) FROM file_restores").fetchone() == (0,)
    assert contents == {b"kept by both", b"two"}


async def test_a_file_changed_during_the_restore_leaves_no_record_of_it(
    fake: FakeGemini, tmp_path: Path, workspace: Path, ctx: ToolSettings
) -> None:
    """Changed while the user was asked about another: it is left as it is, and no record
    claims it was put back (an undo that did nothing would hide the restore it undid)."""
    (workspace / "a.txt").write_text("a1")
    async with after_a_turn_writing(fake, tmp_path, ctx, ("a.txt", "a2")) as store:
        first = await rewind_first_turn(store)
        plan = await plan_rewind(store, workspace, first)
        (workspace / "a.txt").write_text("typed meanwhile")
        late = await restore_files(store, workspace, plan)
        assert late.refused == ["a.txt changed while it was being restored; it was left as it is."]
        assert late.restore_id is None and await store.latest_file_restore() is None
        (workspace / "a.txt").write_text("a2")
        done = await restore_files(store, workspace, await plan_rewind(store, workspace, first))
        assert done.restored == ["a.txt"]
        undo = await plan_undo(store, workspace, done.restore_id or 0)
        (workspace / "a.txt").write_text("typed meanwhile")
        await restore_files(store, workspace, undo)
        latest = await store.latest_file_restore()
    assert latest is not None and latest.id == done.restore_id  # still there to undo
