"""``--print`` never hands the terminal an escape sequence from the model or the server.

The installed command runs as a subprocess against the fake; the hostile
strings are data in ``tests/hostile/terminal.py``.
"""

from __future__ import annotations

import os
import pty
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.agent_kit import ENV_VARIABLES
from hostile.terminal import FORBIDDEN_IN_OUTPUT, TERMINAL_ATTACKS, UNTERMINATED_STRINGS

from koroku_tui.cli import build_parser
from koroku_tui.fake_gemini import FakeGemini, error_reply, text_reply

COMMAND = shutil.which("koroku-tui", path=str(Path(sys.executable).parent))
FORBIDDEN = set(FORBIDDEN_IN_OUTPUT)
ATTACK_IDS = [name for name, _ in TERMINAL_ATTACKS]


def environment(fake: FakeGemini, home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ENV_VARIABLES}
    env.update(GOOGLE_GEMINI_BASE_URL=fake.base_url, KOROKU_HOME=str(home))
    env["GEMINI_API_KEY"] = "test-key"
    return env


def run_bytes(fake: FakeGemini, home: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    """The command with stdout and stderr as pipes, read as bytes (nothing decoded away)."""
    assert COMMAND is not None, "koroku-tui is not installed in the test environment"
    return subprocess.run(
        [COMMAND, *args], env=environment(fake, home), capture_output=True, timeout=60, cwd=home
    )


def forbidden_in(output: bytes) -> set[str]:
    return set(output.decode("utf-8")) & FORBIDDEN


@pytest.mark.parametrize("attack", [text for _, text in TERMINAL_ATTACKS], ids=ATTACK_IDS)
def test_model_text_reaches_stdout_without_escape_sequences(
    fake: FakeGemini, tmp_path: Path, attack: str
) -> None:
    fake.add(text_reply(f"before {attack}\nafter", pieces=3))
    result = run_bytes(fake, tmp_path, "--print", "hi")
    assert result.returncode == 0, result.stderr
    assert b"\x1b" not in result.stdout and not forbidden_in(result.stdout)
    assert result.stdout.startswith(b"before ") and result.stdout.endswith(b"\nafter\n")
    assert result.stderr == b""


@pytest.mark.parametrize("attack", [text for _, text in TERMINAL_ATTACKS], ids=ATTACK_IDS)
def test_an_api_error_reaches_stderr_without_escape_sequences(
    fake: FakeGemini, tmp_path: Path, attack: str
) -> None:
    fake.add(error_reply(400, f"Bad request {attack} end."))
    result = run_bytes(fake, tmp_path, "--print", "hi")
    assert result.returncode == 1
    assert result.stdout == b""
    assert b"\x1b" not in result.stderr and not forbidden_in(result.stderr)
    assert result.stderr.startswith(b"koroku-tui: ") and b"Bad request" in result.stderr


def test_an_unterminated_introducer_hides_no_text_on_stdout_or_stderr(
    fake: FakeGemini, tmp_path: Path
) -> None:
    """A lone U+009D once swallowed the rest of its line: the warning after it never showed."""
    fake.add(text_reply("\n".join(text for _, text, _ in UNTERMINATED_STRINGS), pieces=3))
    fake.add(error_reply(400, "Quota ok.\x9d Your key was revoked; rotate it."))
    answer = run_bytes(fake, tmp_path, "--print", "hi")
    assert answer.returncode == 0, answer.stderr
    assert not forbidden_in(answer.stdout)
    for name, _, kept in UNTERMINATED_STRINGS:
        assert kept.encode() in answer.stdout, name
    error = run_bytes(fake, tmp_path, "--new", "--print", "hi")
    assert error.returncode == 1 and not forbidden_in(error.stderr)
    assert b"Quota ok. Your key was revoked; rotate it" in error.stderr


def test_raw_keeps_a_piped_answer_byte_for_byte_but_still_cleans_stderr(
    fake: FakeGemini, tmp_path: Path
) -> None:
    answer = "".join(text for _, text in TERMINAL_ATTACKS)
    fake.add(text_reply(answer + "\n"))
    piped = run_bytes(fake, tmp_path, "--raw", "--print", "hi")
    assert piped.returncode == 0, piped.stderr
    assert piped.stdout == (answer + "\n").encode()

    fake.add(error_reply(400, "Bad \x1b]52;c;cm0gLXJmIH4K\x07 request."))
    failed = run_bytes(fake, tmp_path, "--raw", "--print", "hi")
    assert failed.returncode == 1
    assert b"\x1b" not in failed.stderr and b"Bad" in failed.stderr


def test_raw_is_ignored_when_stdout_is_a_terminal(fake: FakeGemini, tmp_path: Path) -> None:
    fake.add(text_reply("before \x1b]52;c;cm0gLXJmIH4K\x07\x1b[2J after"))
    leader, follower = pty.openpty()
    try:
        process = subprocess.Popen(
            [str(COMMAND), "--raw", "--print", "hi"],
            env=environment(fake, tmp_path),
            stdout=follower,
            stderr=subprocess.PIPE,
            cwd=tmp_path,
        )
        os.close(follower)
        screen = b""
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # EIO: the last writer closed the terminal
                break
            if not chunk:
                break
            screen += chunk
        assert process.wait(timeout=60) == 0
    finally:
        os.close(leader)
    assert process.stderr is not None and process.stderr.read() == b""
    assert b"\x1b" not in screen
    assert screen.replace(b"\r\n", b"\n") == b"before  after\n"


def test_raw_is_documented_in_help() -> None:
    help_text = " ".join(build_parser().format_help().split())
    assert "--raw with --print, when stdout is not a terminal" in help_text
