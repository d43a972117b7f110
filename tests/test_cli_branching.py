"""``--fork`` and ``--rewind`` on the command line: the real command, the fake, a real database."""

from __future__ import annotations

import asyncio
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from helpers.agent_kit import ENV_VARIABLES, wire_signature

from koroku_tui.fake_gemini import FakeGemini, call_reply, text_reply
from koroku_tui.store import SessionManager

COMMAND = shutil.which("koroku-tui", path=str(Path(sys.executable).parent))

pytestmark = pytest.mark.timeout(120)


def run(fake: FakeGemini, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    assert COMMAND is not None, "koroku-tui is not installed in the test environment"
    env = {k: v for k, v in os.environ.items() if k not in ENV_VARIABLES}
    env["GOOGLE_GEMINI_BASE_URL"] = fake.base_url
    env["KOROKU_HOME"] = str(home)
    env["GEMINI_API_KEY"] = "test-key"
    return subprocess.run(
        [COMMAND, *args], env=env, capture_output=True, text=True, timeout=60, cwd=home
    )


def dump(home: Path) -> list[tuple[object, ...]]:
    """Every session, message and search row: to prove a refusal wrote nothing."""
    with closing(sqlite3.connect(home / "koroku.db")) as conn:
        return [
            *conn.execute("SELECT * FROM sessions ORDER BY id"),
            *conn.execute("SELECT * FROM messages ORDER BY id"),
            *conn.execute("SELECT rowid, text FROM messages_fts ORDER BY rowid"),
        ]


def rows_of(home: Path, session: int) -> list[tuple[int, str, str, float]]:
    """A session's rows: id, kind, JSON and time."""
    with closing(sqlite3.connect(home / "koroku.db")) as conn:
        return list(
            conn.execute(
                "SELECT id, kind, event_json, created_at FROM messages "
                "WHERE session_id = ? ORDER BY id",
                (session,),
            )
        )


def user_ids(home: Path, session: int) -> list[int]:
    """Ids of the session's messages whose text the user typed, oldest first."""
    with closing(sqlite3.connect(home / "koroku.db")) as conn:
        rows = conn.execute(
            "SELECT id FROM messages WHERE session_id = ? AND kind = 'session' "
            "AND json_extract(event_json, '$.role') = 'user' "
            "AND instr(event_json, 'function_response') = 0 ORDER BY id",
            (session,),
        )
        return [int(row[0]) for row in rows]


@pytest.fixture(scope="module")
def shared_fake() -> Iterator[FakeGemini]:
    """One strict fake for the module: it must know the signatures the template holds."""
    with FakeGemini() as server:
        yield server


@pytest.fixture(scope="module")
def template(shared_fake: FakeGemini, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A home whose session 1 holds three turns (the second reads a file: a signed call).

    Built once (each ``koroku-tui`` run costs seconds); tests work on copies.
    """
    folder = tmp_path_factory.mktemp("template")
    (folder / "a.txt").write_text("apples\n")
    shared_fake.add(
        text_reply("One."),
        call_reply(("read_file", {"path": "a.txt"})),
        text_reply("Apples."),
        text_reply("Three."),
    )
    for text in ("first", "what is in a.txt?", "third"):
        result = run(shared_fake, folder, "--print", text)
        assert result.returncode == 0, result.stderr
    return folder


@pytest.fixture
def fake(shared_fake: FakeGemini) -> FakeGemini:
    return shared_fake


@pytest.fixture
def home(template: Path, tmp_path: Path) -> Path:
    """A copy of the template home."""
    for item in template.iterdir():
        if item.is_file():
            shutil.copy2(item, tmp_path / item.name)
    return tmp_path


def template_request(fake: FakeGemini, index: int) -> list[dict[str, Any]]:
    """The contents of the template's request ``index`` (0: "first" ... 3: "third")."""
    contents: list[dict[str, Any]] = fake.generate_requests[index].contents
    return contents


def test_fork_at_a_message_sends_the_copied_prefix(fake: FakeGemini, home: Path) -> None:
    _first, _second, third = user_ids(home, 1)
    source_rows = rows_of(home, 1)
    fake.add(text_reply("In the fork."))
    result = run(fake, home, "--fork", f"1:{third}", "--print", "and now?")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "In the fork.\n"
    assert (
        result.stderr == f"koroku-tui: session 2 is a fork of session 1 before message {third}.\n"
    )
    requests = fake.generate_requests
    # The third turn's request without its message: what came before it, signatures included.
    prefix = template_request(fake, 3)[:-1]
    assert any(wire_signature(p) for c in prefix for p in c["parts"])
    assert requests[-1].contents == [*prefix, {"role": "user", "parts": [{"text": "and now?"}]}]
    assert requests[-1].status == 200
    assert rows_of(home, 1) == source_rows  # the source is untouched
    copies = rows_of(home, 2)
    # Copies keep their JSON (signatures) and timestamps, under new ids.
    assert [row[1:] for row in copies[:-2]] == [row[1:] for row in source_rows if row[0] < third]
    assert min(row[0] for row in copies) > max(row[0] for row in source_rows)
    with closing(sqlite3.connect(home / "koroku.db")) as conn:
        assert conn.execute(
            "SELECT title, forked_from_session, forked_from_message FROM sessions WHERE id = 2"
        ).fetchone() == ("first (fork)", 1, third)


def test_fork_of_a_whole_session_then_the_next_print_continues_it(
    fake: FakeGemini, home: Path
) -> None:
    fake.add(text_reply("Forked."), text_reply("Still here."))
    assert run(fake, home, "--fork", "1", "--print", "fourth").stderr == (
        "koroku-tui: session 2 is a fork of session 1.\n"
    )
    whole = fake.generate_requests[-1].contents
    assert [c["parts"][0].get("text") for c in whole][-3:] == ["third", "Three.", "fourth"]
    # The fork is now the latest session: a plain --print continues it.
    assert run(fake, home, "--print", "fifth").stdout == "Still here.\n"
    assert fake.generate_requests[-1].contents[:-2] == whole


def test_rewind_then_print_sends_the_turns_before_the_message(fake: FakeGemini, home: Path) -> None:
    _first, second, _third = user_ids(home, 1)
    fake.add(text_reply("Rewound."))
    result = run(fake, home, "--rewind", str(second), "--print", "instead")
    assert result.returncode == 0, result.stderr
    requests = fake.generate_requests
    assert requests[-1].contents == [
        *template_request(fake, 1)[:2],  # "first", "One."
        {"role": "user", "parts": [{"text": "instead"}]},
    ]
    with closing(sqlite3.connect(home / "koroku.db")) as conn:
        kinds = [row[0] for row in conn.execute("SELECT kind FROM messages ORDER BY id")]
    assert kinds.count("rewind") == 1 and len(kinds) == 8 + 1 + 2  # nothing deleted


def test_rewind_in_a_chosen_session(fake: FakeGemini, home: Path) -> None:
    first = user_ids(home, 1)[0]
    fake.add(text_reply("Other."), text_reply("Again."))
    assert run(fake, home, "--new", "--print", "elsewhere").returncode == 0
    result = run(fake, home, "--session", "1", "--rewind", str(first), "--print", "restart")
    assert result.returncode == 0, result.stderr
    assert fake.generate_requests[-1].contents == [{"role": "user", "parts": [{"text": "restart"}]}]


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (["--fork", "9:1"], "There is no session 9"),
        (["--fork", "1:2"], "Message 2 is not a message the user typed"),
        (["--fork", "1:99"], "Message 99 is not in session 1."),
        (["--fork", "1:x"], "--fork takes SESSION or SESSION:MESSAGE (whole numbers), not '1:x'."),
        (["--fork", "one"], "--fork takes SESSION or SESSION:MESSAGE (whole numbers), not 'one'."),
        (["--fork", "1:"], "--fork takes SESSION or SESSION:MESSAGE (whole numbers), not '1:'."),
        (["--fork", "1", "--session", "1"], "--fork starts its own conversation"),
        (["--rewind", "2"], "Message 2 is not a message the user typed"),
        (["--rewind", "99"], "Message 99 is not in session 1."),
        (["--rewind", "-3"], "--rewind takes a message id (a whole number), not '-3'."),
        (["--rewind", "1", "--fork", "1"], "--rewind and --fork cannot be combined"),
        (["--rewind", "1", "--session", "7"], "There is no session 7"),
    ],
)
def test_bad_input_is_one_sentence_and_writes_nothing(
    fake: FakeGemini, home: Path, args: list[str], error: str
) -> None:
    before, sent = dump(home), len(fake.generate_requests)
    result = run(fake, home, *args, "--print", "hello")
    assert result.returncode == 1
    assert result.stderr.startswith(f"koroku-tui: {error}"), result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
    assert dump(home) == before
    assert len(fake.generate_requests) == sent


def test_a_session_in_the_trash_is_refused_and_the_latest_live_one_continues(
    fake: FakeGemini, home: Path
) -> None:
    """Deleted in the history screen (moved to the trash): --session and --fork refuse it."""

    async def trash_session_1() -> None:
        async with SessionManager(home / "koroku.db", session_id=1) as store:
            await store.delete_session(1)

    asyncio.run(trash_session_1())
    before, sent = dump(home), len(fake.generate_requests)
    for args in (["--session", "1", "--print", "hi"], ["--fork", "1", "--print", "hi"]):
        result = run(fake, home, *args)
        assert result.returncode == 1
        assert result.stderr == (
            "koroku-tui: Session 1 is in the trash: restore it in the history "
            "(ctrl+r, then ctrl+t shows the trash and Enter restores) to use it again.\n"
        )
    assert dump(home) == before and len(fake.generate_requests) == sent
    fake.add(text_reply("Fresh."))
    result = run(fake, home, "--print", "hello")  # the latest session is in the trash
    assert result.returncode == 0, result.stderr
    assert fake.generate_requests[-1].contents == [{"role": "user", "parts": [{"text": "hello"}]}]


def test_rewind_without_print_and_a_bad_fork_for_the_app_are_refused(
    fake: FakeGemini, home: Path
) -> None:
    before = dump(home)
    for args, error in (
        (["--rewind", "1"], "--rewind needs --print TEXT"),
        (["--fork", "1:2"], "Message 2 is not a message the user typed"),
        (["--fork", "5"], "There is no session 5"),
    ):
        result = run(fake, home, *args)
        assert result.returncode == 1
        assert result.stderr.startswith(f"koroku-tui: {error}"), result.stderr
        assert len(result.stderr.strip().splitlines()) == 1
    assert dump(home) == before


def app_env(fake: FakeGemini, home: Path) -> dict[str, str]:
    """The environment of the full-screen app in a tmux terminal."""
    return {
        "KOROKU_HOME": str(home),
        "GEMINI_API_KEY": "test-key",
        "GOOGLE_GEMINI_BASE_URL": fake.base_url,
        "TERM": "xterm-256color",
        "PATH": os.environ.get("PATH", ""),
        "HOME": os.environ.get("HOME", str(home)),
    }


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_fork_without_print_opens_the_fork_in_the_app(fake: FakeGemini, home: Path) -> None:
    from test_e2e_tmux import Terminal

    assert COMMAND is not None
    third = user_ids(home, 1)[2]
    terminal = Terminal()
    try:
        terminal.start([COMMAND, "--fork", f"1:{third}"], app_env(fake, home), home)
        screen = terminal.wait_for(lambda s: "Apples." in s, "the fork's copied turns")
        assert "first (fork)" in screen
        assert "Three." not in screen  # the turn forked before is not in the fork
        terminal.send("C-q")
        terminal.wait_until_closed()
    finally:
        terminal.kill()
    with closing(sqlite3.connect(home / "koroku.db")) as conn:
        assert conn.execute(
            "SELECT forked_from_session, forked_from_message FROM sessions WHERE id = 2"
        ).fetchone() == (1, third)


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_fork_before_the_first_message_is_stored_with_its_first_message(
    fake: FakeGemini, home: Path
) -> None:
    from test_e2e_tmux import Terminal

    assert COMMAND is not None
    first = user_ids(home, 1)[0]
    before = dump(home)
    terminal = Terminal()
    try:
        terminal.start([COMMAND, "--fork", f"1:{first}"], app_env(fake, home), home)
        screen = terminal.wait_for(lambda s: "first (fork)" in s, "the fork opening in the app")
        assert "One." not in screen  # nothing came before the first message
        terminal.send("C-q")
        terminal.wait_until_closed()
    finally:
        terminal.kill()
    assert dump(home) == before  # left without a message: no empty session stays behind
    fake.add(text_reply("Again."))
    result = run(fake, home, "--fork", f"1:{first}", "--print", "first, again")
    assert result.stderr == (
        f"koroku-tui: session 2 is a fork of session 1 before message {first}.\n"
    )
    assert fake.generate_requests[-1].contents == [
        {"role": "user", "parts": [{"text": "first, again"}]}
    ]
    with closing(sqlite3.connect(home / "koroku.db")) as conn:
        assert conn.execute(
            "SELECT title, forked_from_session, forked_from_message, message_count "
            "FROM sessions WHERE id = 2"
        ).fetchone() == ("first (fork)", 1, first, 2)
