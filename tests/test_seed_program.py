"""The seed design's own terminal program runs on Koroku unchanged (imports aside).

``helpers/seed_program.py`` is run as a user would run it, three times on the
same home: a turn with a tool call; a restart that replays it (the call's name
and arguments from FCMetadata, with a check) and continues, then "clear"; and
a last start that replays nothing. Like the seed, it never closes the agent:
the process must still end at once after "quit", every row kept.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest
from helpers.processes import koroku_env

from koroku_tui.fake_gemini import FakeGemini, call_reply, text_reply

pytestmark = pytest.mark.timeout(120)

PROGRAM = Path(__file__).parent / "helpers" / "seed_program.py"


def run_seed(fake: FakeGemini, home: Path, workspace: Path, *lines: str) -> list[str]:
    """Run the program with ``lines`` typed in; returns its stdout, line by line."""
    env = koroku_env(fake, home)
    env["PYTHONIOENCODING"] = "utf-8"
    result = subprocess.run(
        [sys.executable, str(PROGRAM)],
        input="".join(f"{line}\n" for line in lines),
        env=env,
        cwd=workspace,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


def test_the_seed_program_remembers_replays_and_clears(fake: FakeGemini, tmp_path: Path) -> None:
    home, workspace = tmp_path / "home", tmp_path / "work"
    workspace.mkdir()
    (workspace / "notes.txt").write_text("buy milk")
    fake.add(
        call_reply(("read_file", {"path": "notes.txt"})),
        text_reply("Your notes say: buy milk."),
    )

    first = run_seed(fake, home, workspace, "What is in notes.txt?", "exit")
    assert first == [
        "✓ read_file {'path': 'notes.txt'}",  # on_tool_result(result=, call_name=, call_args=)
        "Koroku: Your notes say: buy milk.",  # on_model_response(message=)
    ]
    assert (home / "koroku.db").exists()  # Agent() kept it in the Koroku home

    fake.add(text_reply("You asked about your notes."))
    second = run_seed(fake, home, workspace, "What did I ask?", "clear", "quit")
    assert second == [
        # The replay: user and model text with labels, the call skipped, the
        # response with a check and the call's name and args from FCMetadata.
        "You: What is in notes.txt?",
        "✓ read_file {'path': 'notes.txt'}",
        "Koroku: Your notes say: buy milk.",
        "Koroku: You asked about your notes.",
        "History cleared.",
    ]
    # The restarted program sent the whole stored turn, signed call included,
    # and the fake (which checks signatures) accepted it.
    resent = fake.generate_requests[-1]
    assert resent.status == 200
    assert [c["role"] for c in resent.contents] == ["user", "model", "user", "model", "user"]
    assert "thoughtSignature" in resent.contents[1]["parts"][0]

    fake.add(text_reply("Hello again."))
    third = run_seed(fake, home, workspace, "hi", "exit")
    assert third == ["Koroku: Hello again."]  # nothing replayed: the history was cleared
    assert [c["role"] for c in fake.generate_requests[-1].contents] == ["user"]


def test_the_seed_program_exits_at_once_after_quit_with_every_row_kept(
    fake: FakeGemini, tmp_path: Path
) -> None:
    # The seed's main() returns without closing the agent: Koroku must still
    # let the process end (aiosqlite's worker thread is not a daemon).
    home, workspace = tmp_path / "home", tmp_path / "work"
    workspace.mkdir()
    (workspace / "notes.txt").write_text("buy milk")
    fake.add(
        call_reply(("read_file", {"path": "notes.txt"})),
        text_reply("Your notes say: buy milk."),
    )
    env = koroku_env(fake, home)
    env["PYTHONIOENCODING"] = "utf-8"
    env["PYTHONUNBUFFERED"] = "1"  # each line as it is printed, through the pipe
    with subprocess.Popen(
        [sys.executable, str(PROGRAM)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=workspace,
        text=True,
        encoding="utf-8",
    ) as program:
        assert program.stdin is not None and program.stdout is not None
        program.stdin.write("What is in notes.txt?\n")
        program.stdin.flush()
        assert program.stdout.readline() == "✓ read_file {'path': 'notes.txt'}\n"
        # Printed by on_model_response, after the answer was stored: the turn's
        # four rows are all acknowledged.
        assert program.stdout.readline() == "Koroku: Your notes say: buy milk.\n"
        program.stdin.write("quit\n")
        program.stdin.flush()
        try:
            returncode = program.wait(timeout=2)
        except subprocess.TimeoutExpired:
            program.kill()
            pytest.fail("the seed program was still running 2 s after 'quit'")
        assert program.stderr is not None
        stderr = program.stderr.read()
    assert returncode == 0, stderr
    assert stderr == ""

    database = home / "koroku.db"
    with closing(sqlite3.connect(database)) as db:
        rows = [json.loads(text) for (text,) in db.execute("SELECT event_json FROM messages")]
        leases = db.execute("SELECT COUNT(*) FROM session_leases").fetchone()[0]
    assert [row["role"] for row in rows] == ["user", "model", "user", "model"]
    assert rows[0]["parts"][0]["text"] == "What is in notes.txt?"
    assert rows[3]["parts"][0]["text"] == "Your notes say: buy milk."
    assert leases == 0  # the turn's lease was given back
    # Closed, not abandoned: the last connection's close folds the WAL back
    # into the file and removes it.
    assert not database.with_name("koroku.db-wal").exists()
