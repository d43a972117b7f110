"""``--print --rewind N --restore-files`` and ``--fork S:N --restore-files``: the real command.

The fake Gemini scripts ``write_file`` calls; the command runs in a workspace
folder, on a real database. A file the user changed since is refused, one
stderr line, and the rest is still restored (exit 0: the turn ran). A kill in
the middle of a turn leaves every write with its snapshot.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from helpers.rewind_kit import koroku, snapshot_rows, writes

from koroku_tui.fake_gemini import FakeGemini, call_reply, text_reply

pytestmark = pytest.mark.timeout(120)


def first_user_message(tmp_path: Path) -> int:
    with closing(sqlite3.connect(tmp_path / "home" / "koroku.db")) as conn:
        row = conn.execute(
            "SELECT id FROM messages WHERE json_extract(event_json, '$.role') = 'user' "
            "AND event_json NOT LIKE '%functionResponse%' AND event_json NOT LIKE "
            "'%function_response%' ORDER BY id LIMIT 1"
        ).fetchone()
    return int(row[0])


@pytest.fixture
def edited(fake: FakeGemini, tmp_path: Path) -> Path:
    """A workspace where a --print turn replaced keep.txt and mine.txt and made new.txt."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "keep.txt").write_text("k1")
    (ws / "mine.txt").write_text("m1")
    writes(fake, ("keep.txt", "k2"), ("mine.txt", "m2"), ("new.txt", "n"))
    done = koroku(fake, tmp_path, "--yes", "--print", "edit")
    assert done.returncode == 0, done.stderr
    assert (ws / "keep.txt").read_text() == "k2"
    return ws


def test_rewind_restore_files_refuses_a_changed_file_and_restores_the_rest(
    fake: FakeGemini, tmp_path: Path, edited: Path
) -> None:
    (edited / "mine.txt").write_text("changed by hand")
    fake.add(text_reply("Again."))
    first = str(first_user_message(tmp_path))
    result = koroku(fake, tmp_path, "--rewind", first, "--restore-files", "--print", "again")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Again.\n"
    lines = result.stderr.splitlines()
    assert "koroku-tui: mine.txt was changed since Koroku wrote it, so it was not restored." in (
        lines
    )
    assert "koroku-tui: files: 2 files put back; 1 left as it is." in lines
    assert (edited / "keep.txt").read_text() == "k1"
    assert not (edited / "new.txt").exists()
    assert (edited / "mine.txt").read_text() == "changed by hand"


def test_fork_with_restore_files_starts_with_the_files_of_the_fork_point(
    fake: FakeGemini, tmp_path: Path, edited: Path
) -> None:
    fake.add(text_reply("Forked."))
    first = first_user_message(tmp_path)
    result = koroku(fake, tmp_path, "--fork", f"1:{first}", "--restore-files", "--print", "go")
    assert result.returncode == 0, result.stderr
    assert "koroku-tui: files: 3 files put back." in result.stderr.splitlines()
    assert (edited / "keep.txt").read_text() == "k1"
    assert (edited / "mine.txt").read_text() == "m1"
    assert not (edited / "new.txt").exists()


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--restore-files", "--print", "x"], "--restore-files goes with --rewind MESSAGE"),
        (["--fork", "1", "--restore-files", "--print", "x"], "--restore-files goes with"),
        (["--rewind", "1", "--restore-files"], "--rewind needs --print TEXT"),
        (["--fork", "1:2", "--restore-files"], "--restore-files needs --print TEXT"),
    ],
)
def test_restore_files_without_a_point_to_go_back_to_is_one_sentence(
    fake: FakeGemini, tmp_path: Path, args: list[str], said: str
) -> None:
    (tmp_path / "ws").mkdir()
    result = koroku(fake, tmp_path, *args)
    assert result.returncode == 1
    assert result.stderr.startswith(f"koroku-tui: {said}")
    assert len(result.stderr.splitlines()) == 1
    assert "Traceback" not in result.stderr


def test_killed_after_a_write_the_write_has_its_snapshot(fake: FakeGemini, tmp_path: Path) -> None:
    """SIGKILL right after write_file, before the step's answers are stored."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("before")
    fake.add(
        call_reply(
            ("write_file", {"path": "a.txt", "content": "after"}),
            ("run_command", {"command": "kill -KILL $PPID"}),
        )
    )
    result = koroku(fake, tmp_path, "--yes", "--print", "edit then die")
    assert result.returncode == -9
    assert (ws / "a.txt").read_text() == "after"
    rows = snapshot_rows(tmp_path / "home" / "koroku.db")
    assert [(row["before_data"], row["after_data"]) for row in rows] == [(b"before", b"after")]
