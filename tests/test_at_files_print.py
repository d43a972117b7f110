"""``koroku-tui --print`` with ``@path``: the installed command, the strict fake (issue 27)."""

from __future__ import annotations

import os
import sqlite3
import subprocess
from pathlib import Path

from helpers.processes import KOROKU, koroku_env

from koroku_tui.fake_gemini import FakeGemini, text_reply


def run_print(
    fake: FakeGemini, workspace: Path, home: Path, text: str
) -> subprocess.CompletedProcess[str]:
    assert KOROKU is not None, "koroku-tui is not installed in the test environment"
    return subprocess.run(
        [KOROKU, "--print", text],
        env=koroku_env(fake, home),
        capture_output=True,
        text=True,
        timeout=60,
        cwd=workspace,
        stdin=subprocess.DEVNULL,
    )


def folders(tmp_path: Path) -> tuple[Path, Path]:
    workspace, home = tmp_path / "project", tmp_path / "home"
    workspace.mkdir()
    home.mkdir()
    return workspace, home


def test_print_attaches_the_file_the_text_names(fake: FakeGemini, tmp_path: Path) -> None:
    workspace, home = folders(tmp_path)
    (workspace / "notes.md").write_text("remember the milk\n")
    fake.add(text_reply("Milk."))
    result = run_print(fake, workspace, home, "what does @notes.md say? @nobody")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Milk.\n"
    assert result.stderr == "koroku-tui: no file @nobody in the workspace; sent as written.\n"
    text, attached = fake.generate_requests[-1].contents[-1]["parts"]
    assert text == {"text": "what does @notes.md say? @nobody"}
    assert attached == {
        "text": '<attached-file path="notes.md" size="18">\nremember the milk\n\n</attached-file>'
    }


def test_print_refuses_a_file_it_cannot_attach_and_sends_nothing(
    fake: FakeGemini, tmp_path: Path
) -> None:
    workspace, home = folders(tmp_path)
    (tmp_path / "secret.txt").write_text("outside")
    os.symlink(tmp_path / "secret.txt", workspace / "secret.txt")
    (workspace / "blob.bin").write_bytes(b"\x00\x01\x02")
    for name, reason in (("secret.txt", "outside the workspace"), ("blob.bin", "binary file")):
        result = run_print(fake, workspace, home, f"read @{name}")
        assert result.returncode == 1 and result.stdout == ""
        [line] = result.stderr.splitlines()
        assert line.startswith(f"koroku-tui: Cannot attach @{name}: ") and reason in line
        assert line.endswith("Nothing was sent.")
    assert fake.generate_requests == []
    database = home / "koroku.db"
    if database.exists():  # nothing stored either
        with sqlite3.connect(database) as conn:
            assert conn.execute("SELECT count(*) FROM messages").fetchone() == (0,)
