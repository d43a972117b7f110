"""``koroku-tui --print``: the real command, the real SDK, the fake server, a real database."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from helpers.agent_kit import ENV_VARIABLES

from koroku_tui.fake_gemini import FakeGemini, call_reply, error_reply, text_reply

COMMAND = shutil.which("koroku-tui", path=str(Path(sys.executable).parent))


def run(
    fake: FakeGemini,
    home: Path,
    *args: str,
    key: str | None = "test-key",
    cwd: Path | None = None,
    uv: str | None = "",
) -> subprocess.CompletedProcess[str]:
    """``uv``: what UV is set to (the path uv sets it to under `uv run`); None unsets it."""
    assert COMMAND is not None, "koroku-tui is not installed in the test environment"
    env = {k: v for k, v in os.environ.items() if k not in ENV_VARIABLES}
    if uv is None:
        env.pop("UV", None)
    elif uv:
        env["UV"] = uv
    env["GOOGLE_GEMINI_BASE_URL"] = fake.base_url
    env["KOROKU_HOME"] = str(home)
    if key is not None:
        env["GEMINI_API_KEY"] = key
    return subprocess.run(
        [COMMAND, *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd or home,
    )


def user_texts(request_contents: list[dict[str, object]]) -> list[str]:
    texts = []
    for content in request_contents:
        if content.get("role") != "user":
            continue
        for part in content.get("parts", []):  # type: ignore[attr-defined]
            if "text" in part:
                texts.append(part["text"])
    return texts


def test_print_answers_on_stdout_and_the_next_call_continues_the_session(
    fake: FakeGemini, tmp_path: Path
) -> None:
    fake.add(text_reply("Hello! I am Koroku.", pieces=3, signature_chunk=True))
    first = run(fake, tmp_path, "--print", "hi there")
    assert first.returncode == 0, first.stderr
    assert first.stdout == "Hello! I am Koroku.\n"

    fake.add(text_reply("You said hi."))
    second = run(fake, tmp_path, "-p", "what did I say?")  # -p is --print, as in other CLIs
    assert second.stdout == "You said hi.\n"
    assert user_texts(fake.generate_requests[-1].contents) == ["hi there", "what did I say?"]
    assert (tmp_path / "koroku.db").stat().st_mode & 0o777 == 0o600

    fake.add(text_reply("Fresh start."))
    third = run(fake, tmp_path, "--new", "--print", "new topic")
    assert third.returncode == 0
    assert user_texts(fake.generate_requests[-1].contents) == ["new topic"]


def test_a_tool_turn_and_approval_needing_yes(fake: FakeGemini, tmp_path: Path) -> None:
    workspace = tmp_path / "work"
    workspace.mkdir()
    (workspace / "notes.txt").write_text("buy milk")
    fake.add(
        call_reply(("read_file", {"path": "notes.txt"})),
        call_reply(("run_command", {"command": "echo ran > proof.txt"})),
        text_reply("Done."),
    )
    result = run(fake, tmp_path, "--print", "read and run", cwd=workspace)
    assert result.returncode == 0, result.stderr
    assert not (workspace / "proof.txt").exists()  # denied without --yes
    responses = [
        part["functionResponse"]
        for req in fake.generate_requests[1:]
        for part in req.contents[-1]["parts"]
        if "functionResponse" in part
    ]
    assert responses[0]["response"] == {"output": "buy milk"}
    assert "--yes" in responses[1]["response"]["error"]

    fake.add(call_reply(("run_command", {"command": "echo ran > proof.txt"})), text_reply("Ok."))
    allowed = run(fake, tmp_path, "--yes", "--print", "now run it", cwd=workspace)
    assert allowed.returncode == 0, allowed.stderr
    assert (workspace / "proof.txt").read_text() == "ran\n"


def test_an_api_error_is_one_sentence_on_stderr(fake: FakeGemini, tmp_path: Path) -> None:
    fake.add(error_reply(400, "Request contains an invalid argument."))
    result = run(fake, tmp_path, "--print", "hello")
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.startswith("koroku-tui: ")
    assert len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.stderr


def test_no_key_says_how_to_get_one(fake: FakeGemini, tmp_path: Path) -> None:
    result = run(fake, tmp_path, "--print", "hello", key=None, uv=None)
    assert result.returncode == 1
    assert "GEMINI_API_KEY" in result.stderr and "`koroku-tui --demo`" in result.stderr
    assert "uv run" not in result.stderr
    assert fake.requests == []


def test_under_uv_run_the_advice_says_uv_run(fake: FakeGemini, tmp_path: Path) -> None:
    """The README's set-up leaves koroku-tui off PATH: `uv run koroku-tui` is what works."""
    result = run(fake, tmp_path, "--print", "hello", key=None, uv="/usr/local/bin/uv")
    assert result.returncode == 1
    assert "try Koroku offline with `uv run koroku-tui --demo`." in result.stderr


def test_an_unopenable_database_is_one_line(fake: FakeGemini, tmp_path: Path) -> None:
    (tmp_path / "koroku.db").write_bytes(b"this is not sqlite" * 100)
    result = run(fake, tmp_path, "--print", "hello")
    assert result.returncode == 1
    assert "koroku.db" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.stderr


def test_unknown_session_is_reported(fake: FakeGemini, tmp_path: Path) -> None:
    result = run(fake, tmp_path, "--session", "999", "--print", "hello")
    assert result.returncode == 1
    assert "999" in result.stderr and "Traceback" not in result.stderr


def test_diagnostics_go_to_a_private_log_file_not_the_terminal(
    fake: FakeGemini, tmp_path: Path
) -> None:
    fake.add(error_reply(400, "Bad thing 4711."))
    result = run(fake, tmp_path, "--print", "hello")
    assert result.returncode == 1
    assert len(result.stderr.strip().splitlines()) == 1
    log = tmp_path / "koroku.log"
    assert log.stat().st_mode & 0o777 == 0o600
    assert "Bad thing 4711" in log.read_text()
