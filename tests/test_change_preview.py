"""What write_file would change, computed before the user is asked (core, real files)."""

from __future__ import annotations

import os
from pathlib import Path

from koroku_tui.agent.tools import default_registry
from koroku_tui.agent.tools.change_preview import (
    MAX_DIFF_LINES,
    NEW_FILE_LINES,
    preview_file_write,
    preview_write,
)


def test_an_existing_file_gets_a_unified_diff(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("one\ntwo\nthree\n")
    change = preview_write(tmp_path, "notes.txt", "one\nTWO\nthree\n")
    assert change.exists and change.unreadable is None and not change.more_lines
    assert change.lines[:2] == ["--- a/notes.txt", "+++ b/notes.txt"]
    assert "-two" in change.lines and "+TWO" in change.lines and " one" in change.lines


def test_a_new_file_shows_its_first_lines_and_counts_the_rest(tmp_path: Path) -> None:
    content = "\n".join(f"line {n}" for n in range(NEW_FILE_LINES + 10))
    change = preview_write(tmp_path, "sub/new.py", content)
    assert not change.exists and change.unreadable is None
    assert change.lines[0] == "+line 0" and len(change.lines) == NEW_FILE_LINES
    assert change.more_lines == 10
    assert not (tmp_path / "sub").exists()  # looking makes no folder


def test_a_huge_diff_is_capped_and_counted(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("\n".join(map(str, range(1000))))
    change = preview_write(tmp_path, "big.txt", "\n".join(f"x{n}" for n in range(1000)))
    assert len(change.lines) == MAX_DIFF_LINES
    assert change.more_lines == 2003 - MAX_DIFF_LINES  # 2 headers, 1 hunk, 1000 -, 1000 +


def test_the_same_content_is_no_change(tmp_path: Path) -> None:
    (tmp_path / "same.txt").write_text("a\n")
    change = preview_write(tmp_path, "same.txt", "a\n")
    assert change.unchanged and not change.lines


def test_lines_split_only_at_newlines_so_hidden_breaks_stay_in_their_line(tmp_path: Path) -> None:
    change = preview_write(tmp_path, "x.txt", "safe\u2028rm -rf ~\x0cmore")
    assert change.lines == ["+safe\u2028rm -rf ~\x0cmore"]


def test_a_link_out_of_the_workspace_is_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("SECRET\n")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "link.txt").symlink_to(outside)
    change = preview_write(workspace, "link.txt", "new\n")
    assert change.unreadable is not None and "outside the workspace" in change.unreadable
    assert not any("SECRET" in line for line in change.lines)


def test_a_fifo_is_not_opened(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    change = preview_write(tmp_path, "pipe", "x")  # would block forever if opened to read
    assert change.exists and change.unreadable is not None
    assert "not a regular file" in change.unreadable


def test_a_binary_file_or_a_folder_is_named_not_diffed(tmp_path: Path) -> None:
    (tmp_path / "image.png").write_bytes(b"\x89PNG\x00\x00data")
    (tmp_path / "folder").mkdir()
    binary = preview_write(tmp_path, "image.png", "text")
    folder = preview_write(tmp_path, "folder", "text")
    assert binary.unreadable is not None and "binary file (10 bytes)" in binary.unreadable
    assert folder.unreadable is not None and "is a folder" in folder.unreadable
    assert not binary.lines and not folder.lines


def test_only_write_file_has_a_preview(tmp_path: Path) -> None:
    previews = {spec.name: spec.preview for spec in default_registry()}
    assert previews.pop("write_file") is preview_file_write
    assert set(previews.values()) == {None}
    change = preview_file_write({"path": "a.txt", "content": "hi"}, tmp_path)
    assert change is not None and change.lines == ["+hi"]
    assert preview_file_write({"path": "a.txt", "content": 3}, tmp_path) is None
