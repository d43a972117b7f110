"""``koroku-tui --print`` with a message that is not UTF-8: the installed command, the fake."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.agent_kit import ENV_VARIABLES
from hostile.unicode import INVALID_UTF8

from koroku_tui.fake_gemini import FakeGemini, text_reply

COMMAND = shutil.which("koroku-tui", path=str(Path(sys.executable).parent))


def run_bytes(
    fake: FakeGemini, home: Path, *args: str | bytes, stdin: bytes = b""
) -> subprocess.CompletedProcess[bytes]:
    assert COMMAND is not None, "koroku-tui is not installed in the test environment"
    env = {k: v for k, v in os.environ.items() if k not in ENV_VARIABLES}
    env.update(
        GOOGLE_GEMINI_BASE_URL=fake.base_url, KOROKU_HOME=str(home), GEMINI_API_KEY="test-key"
    )
    return subprocess.run(
        [COMMAND, *args], env=env, input=stdin, capture_output=True, timeout=60, cwd=home
    )


def sent_text(fake: FakeGemini) -> str:
    (part,) = fake.generate_requests[-1].contents[-1]["parts"]
    text = part["text"]
    assert isinstance(text, str)
    return text


# A command-line argument cannot hold a NUL byte; stdin can.
CASES = [("stdin", m) for m in INVALID_UTF8] + [
    ("argument", m) for m in INVALID_UTF8 if b"\x00" not in m
]


@pytest.mark.parametrize(("where", "message"), CASES)
def test_a_message_that_is_not_utf8_is_replaced_and_said_so(
    fake: FakeGemini, tmp_path: Path, where: str, message: bytes
) -> None:
    fake.add(text_reply("Got it."))
    if where == "stdin":
        result = run_bytes(fake, tmp_path, "--print", "-", stdin=message)
    else:
        result = run_bytes(fake, tmp_path, "--print", message)
    stderr = result.stderr.decode()
    assert result.returncode == 0, stderr
    assert result.stdout == b"Got it.\n"
    assert len(stderr.splitlines()) == 1 and "not valid UTF-8" in stderr, stderr
    assert sent_text(fake) == message.decode("utf-8", errors="replace")


def test_valid_utf8_from_stdin_says_nothing(fake: FakeGemini, tmp_path: Path) -> None:
    fake.add(text_reply("Bien."))
    result = run_bytes(fake, tmp_path, "--print", "-", stdin="café \ufffd".encode())
    assert (result.returncode, result.stdout, result.stderr) == (0, b"Bien.\n", b"")
    assert sent_text(fake) == "café \ufffd"


@pytest.mark.parametrize(
    ("piped", "sent"),
    [
        (b"fix the bug\n", "fix the bug"),  # what `echo` adds is not the user's
        (b"fix the bug\r\n", "fix the bug"),
        (b"line one\nline two\n\n", "line one\nline two\n"),  # only one is taken off
    ],
)
def test_piped_stdin_loses_one_trailing_newline(
    fake: FakeGemini, tmp_path: Path, piped: bytes, sent: str
) -> None:
    fake.add(text_reply("Ok."))
    result = run_bytes(fake, tmp_path, "--print", "-", stdin=piped)
    assert result.returncode == 0, result.stderr
    assert sent_text(fake) == sent


@pytest.mark.parametrize(
    ("flags", "named"),
    [(["--yes"], "--yes applies"), (["--raw", "--yes"], "--yes and --raw apply")],
)
def test_print_only_flags_without_print_say_so_and_exit_2(
    tmp_path: Path, flags: list[str], named: str
) -> None:
    assert COMMAND is not None
    env = {k: v for k, v in os.environ.items() if k not in ENV_VARIABLES}
    result = subprocess.run(
        [COMMAND, *flags],
        env={**env, "KOROKU_HOME": str(tmp_path)},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=30,
        cwd=tmp_path,
    )
    assert result.returncode == 2
    assert result.stderr == (
        f"koroku-tui: {named} only with --print TEXT "
        "(the app always asks before a tool changes anything).\n"
    )
    assert list(tmp_path.iterdir()) == []  # nothing started: not even a log in the home
