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
