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
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers.agent_kit import ENV_VARIABLES
from hostile.terminal import (
    FORBIDDEN_IN_OUTPUT,
    NARROW_ENCODINGS,
    TERMINAL_ATTACKS,
    UNTERMINATED_STRINGS,
)

from koroku_tui.cli import build_parser
from koroku_tui.fake_gemini import FakeGemini, error_reply, text_reply
from koroku_tui.fake_gemini.recording import RecordedRequest
from koroku_tui.fake_gemini.script import ScriptItem, last_user_text

COMMAND = shutil.which("koroku-tui", path=str(Path(sys.executable).parent))
FORBIDDEN = set(FORBIDDEN_IN_OUTPUT)


def environment(fake: FakeGemini, home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ENV_VARIABLES}
    env.update(GOOGLE_GEMINI_BASE_URL=fake.base_url, KOROKU_HOME=str(home))
    env["GEMINI_API_KEY"] = "test-key"
    return env


def run_bytes(
    fake: FakeGemini, home: Path, *args: str, io_encoding: str | None = None
) -> subprocess.CompletedProcess[bytes]:
    """The command with stdout and stderr as pipes, read as bytes (nothing decoded away)."""
    assert COMMAND is not None, "koroku-tui is not installed in the test environment"
    env = environment(fake, home)
    if io_encoding is not None:
        env["PYTHONIOENCODING"] = io_encoding
    return subprocess.run([COMMAND, *args], env=env, capture_output=True, timeout=60, cwd=home)


def forbidden_in(output: bytes) -> set[str]:
    return set(output.decode("utf-8")) & FORBIDDEN


def run_each_attack(
    tmp_path: Path, reply: Callable[[str], ScriptItem]
) -> dict[str, subprocess.CompletedProcess[bytes]]:
    """One ``--print`` per attack, all at once (each in its own home), answered by ``reply``.

    Concurrent because each run is mostly Python starting up: one after the
    other they took minutes.
    """
    assert COMMAND is not None, "koroku-tui is not installed in the test environment"
    attacks = dict(TERMINAL_ATTACKS)

    def respond(request: RecordedRequest) -> ScriptItem:
        return reply(attacks[last_user_text(request)])

    with FakeGemini(on_empty=respond) as fake:
        running = {}
        for name in attacks:
            home = tmp_path / f"home-{len(running)}"
            home.mkdir()
            running[name] = subprocess.Popen(
                [COMMAND, "--print", name],
                env=environment(fake, home),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=home,
            )
        results = {}
        for name, process in running.items():
            out, err = process.communicate(timeout=120)
            results[name] = subprocess.CompletedProcess(process.args, process.returncode, out, err)
    return results


def test_model_text_reaches_stdout_without_escape_sequences(tmp_path: Path) -> None:
    results = run_each_attack(
        tmp_path, lambda attack: text_reply(f"before {attack}\nafter", pieces=3)
    )
    for name, result in results.items():
        assert result.returncode == 0, (name, result.stderr)
        assert b"\x1b" not in result.stdout and not forbidden_in(result.stdout), name
        assert result.stdout.startswith(b"before ") and result.stdout.endswith(b"\nafter\n"), name
        assert result.stderr == b"", name


def test_an_api_error_reaches_stderr_without_escape_sequences(tmp_path: Path) -> None:
    results = run_each_attack(
        tmp_path, lambda attack: error_reply(400, f"Bad request {attack} end.")
    )
    for name, result in results.items():
        assert result.returncode == 1, name
        assert result.stdout == b"", name
        assert b"\x1b" not in result.stderr and not forbidden_in(result.stderr), name
        assert result.stderr.startswith(b"koroku-tui: ") and b"Bad request" in result.stderr, name


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


@pytest.mark.parametrize(
    ("io_encoding", "answer", "expected"), NARROW_ENCODINGS, ids=[e for e, _, _ in NARROW_ENCODINGS]
)
@pytest.mark.parametrize("raw", [False, True], ids=["clean", "raw"])
def test_an_answer_the_output_encoding_cannot_hold_is_written_with_escapes(
    fake: FakeGemini, tmp_path: Path, io_encoding: str, answer: str, expected: bytes, raw: bool
) -> None:
    fake.add(text_reply(answer, pieces=2))
    flags = ["--raw"] if raw else []
    result = run_bytes(fake, tmp_path, *flags, "--print", "hi", io_encoding=io_encoding)
    assert (result.returncode, result.stderr) == (0, b"")
    assert result.stdout == expected


def test_an_error_the_stderr_encoding_cannot_hold_is_written_with_escapes(
    fake: FakeGemini, tmp_path: Path
) -> None:
    fake.add(error_reply(400, "Requête refusée ✗."))
    result = run_bytes(fake, tmp_path, "--print", "hi", io_encoding="ascii:strict")
    assert result.returncode == 1 and result.stdout == b""
    assert b"Requ\\xeate refus\\xe9e \\u2717" in result.stderr
