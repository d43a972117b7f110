"""``koroku-tui --list``: every conversation on one line, and the errors that point to it."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from google.genai import types
from helpers.agent_kit import ENV_VARIABLES

from koroku_tui.events import SessionEvent
from koroku_tui.modes.session_list import format_sessions
from koroku_tui.store import SessionInfo, SessionManager

COMMAND = str(Path(sys.executable).parent / "koroku-tui")


def run(home: Path, *args: str, uv: str | None = None) -> subprocess.CompletedProcess[str]:
    """The command on ``home``; ``uv``: UV as `uv run` sets it (None: unset).

    Its key is never used: nothing here gets as far as asking Gemini (port 9 is discard).
    """
    env = {k: v for k, v in os.environ.items() if k not in ENV_VARIABLES and k != "UV"}
    env |= {"KOROKU_HOME": str(home), "GEMINI_API_KEY": "unused"}
    env["GOOGLE_GEMINI_BASE_URL"] = "http://127.0.0.1:9"
    if uv is not None:
        env["UV"] = uv
    return subprocess.run(
        [COMMAND, *args], env=env, capture_output=True, text=True, timeout=60, cwd=home
    )


async def seed(home: Path, *conversations: tuple[str, int]) -> list[int]:
    """One session per ``(first message, messages)``, in order; their ids."""
    ids = []
    async with SessionManager(home / "koroku.db") as store:
        for first, count in conversations:
            await store.new_session()
            for n in range(count):
                text = first if n == 0 else f"message {n}"
                role = "user" if n % 2 == 0 else "model"
                content = types.Content(role=role, parts=[types.Part(text=text)])
                await store.add_message(SessionEvent.from_content(content))
            ids.append(store.session_id)
    return ids


async def test_list_shows_every_conversation_newest_first(tmp_path: Path) -> None:
    ids = await seed(
        tmp_path, ("Plan the deploy", 4), ("\x1b[2Jclear the screen", 1), ("Backup script", 12)
    )
    done = run(tmp_path, "--list")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["ID", "MESSAGES", "LAST", "ACTIVITY", "TITLE"]
    rows = [line.split(None, 4) for line in lines[1:4]]
    assert [(int(r[0]), int(r[1]), r[4]) for r in rows] == [
        (ids[2], 12, "Backup script"),
        (ids[1], 1, "\\u001b[2Jclear the screen"),  # shown, never obeyed
        (ids[0], 4, "Plan the deploy"),
    ]
    today = time.strftime("%Y-%m-%d")
    assert all(r[2] == today for r in rows)
    assert lines[4:] == ["", "3 conversations; continue one with `koroku-tui --session ID`."]
    assert "\x1b" not in done.stdout


def test_list_of_a_home_without_a_database_creates_nothing(tmp_path: Path) -> None:
    done = run(tmp_path, "--list")
    assert (done.returncode, done.stdout) == (0, f"No conversations yet in {tmp_path}.\n")
    assert not (tmp_path / "koroku.db").exists()


def test_the_columns_line_up_for_any_width_of_id_and_count() -> None:
    sessions = [
        SessionInfo(7, "a", 0.0, 0.0, 3, 0),
        SessionInfo(12_345, "b", 0.0, 0.0, 1_234_567, 0),
    ]
    header, first, second = format_sessions(sessions)
    assert header.index("MESSAGES") + len("MESSAGES") == first.index("3") + 1
    assert first.index("3") == second.index("1,234,567") + len("1,234,567") - 1
    assert first.rindex("a") == second.rindex("b") == header.index("TITLE")


@pytest.mark.parametrize(
    ("uv", "told"),
    [(None, "`koroku-tui --list`"), ("/usr/bin/uv", "`uv run koroku-tui --list`")],
    ids=["installed", "uv run"],
)
@pytest.mark.parametrize("mode", [[], ["--print", "hello"]], ids=["app", "print"])
async def test_a_missing_session_names_the_command_that_lists_them(
    tmp_path: Path, uv: str | None, told: str, mode: list[str]
) -> None:
    await seed(tmp_path, ("hello", 2))
    done = run(tmp_path, "--session", "999", *mode, uv=uv)
    assert done.returncode == 1
    assert done.stderr == (
        f"koroku-tui: There is no session 999 in {tmp_path / 'koroku.db'} (it may have been "
        f"deleted); {told} lists the sessions there.\n"
    )


def test_list_takes_no_other_action(tmp_path: Path) -> None:
    done = run(tmp_path, "--list", "--print", "hi")
    assert (done.returncode, done.stderr) == (
        2,
        "koroku-tui: --list only lists: leave out --print.\n",
    )
    assert list(tmp_path.iterdir()) == []
