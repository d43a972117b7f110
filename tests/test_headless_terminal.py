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


def error_groups(limit: int = 240) -> list[list[tuple[str, str]]]:
    """The attacks packed into as few API error messages as the error's length cap allows.

    An error message is cut at 300 characters, so one message cannot carry them all.
    """
    groups: list[list[tuple[str, str]]] = [[]]
    for name, attack in TERMINAL_ATTACKS:
        if sum(len(n) + len(a) + 4 for n, a in groups[-1]) + len(name) + len(attack) > limit:
            groups.append([])
        groups[-1].append((name, attack))
    return groups


def run_each(tmp_path: Path, replies: list[ScriptItem]) -> list[subprocess.CompletedProcess[bytes]]:
    """One ``--print`` per reply, all at once (each in its own home).

    Concurrent because each run is mostly Python starting up.
    """
    assert COMMAND is not None, "koroku-tui is not installed in the test environment"
    by_prompt = {f"prompt-{index}": reply for index, reply in enumerate(replies)}

    def respond(request: RecordedRequest) -> ScriptItem:
        return by_prompt[last_user_text(request)]

    with FakeGemini(on_empty=respond) as fake:
        running = []
        for prompt in by_prompt:
            home = tmp_path / f"home-{prompt}"
            home.mkdir()
            running.append(
                subprocess.Popen(
                    [COMMAND, "--print", prompt],
                    env=environment(fake, home),
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    cwd=home,
                )
            )
        results = []
        for process in running:
            out, err = process.communicate(timeout=120)
            results.append(subprocess.CompletedProcess(process.args, process.returncode, out, err))
    return results


def test_model_text_reaches_stdout_without_escape_sequences(tmp_path: Path) -> None:
    # One answer, one attack per line: the line's own words around it must survive,
    # so no attack hid the text after it, and one process proves what 17 did.
    answer = "\n".join(f"{name}: before {attack} after" for name, attack in TERMINAL_ATTACKS)
    [result] = run_each(tmp_path, [text_reply(answer, pieces=7)])
    assert result.returncode == 0, result.stderr
    assert b"\x1b" not in result.stdout and not forbidden_in(result.stdout)
    assert result.stderr == b""
    shown = result.stdout.decode()
    # Each line's own words survive around its attack: no attack hid what followed.
    # (Line-break controls in an attack become newlines, so lines are not counted.)
    starts = [shown.index(f"{name}: before ") for name, _ in TERMINAL_ATTACKS]
    assert starts == sorted(starts) and starts[0] == 0
    for start, end in zip(starts, [*starts[1:], len(shown)], strict=True):
        assert shown[start:end].endswith(" after\n"), shown[start:end]


def test_an_api_error_reaches_stderr_without_escape_sequences(tmp_path: Path) -> None:
    groups = error_groups()
    # "~~" after each attack: an attack ending in ESC takes "ESC space ~" as one sequence.
    messages = [" ".join(f"<{name}> {attack} ~~" for name, attack in group) for group in groups]
    results = run_each(tmp_path, [error_reply(400, f"Bad request {m} end.") for m in messages])
    assert len(results) < len(TERMINAL_ATTACKS) / 4  # packed, not one process each
    for group, result in zip(groups, results, strict=True):
        assert result.returncode == 1, group
        assert result.stdout == b"", group
        assert b"\x1b" not in result.stderr and not forbidden_in(result.stderr), group
        assert result.stderr.startswith(b"koroku-tui: ") and b"Bad request" in result.stderr
        assert b" end" in result.stderr, group  # nothing was cut off or hidden
        for name, _ in group:
            assert f"<{name}>".encode() in result.stderr, name


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
