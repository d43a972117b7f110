"""``--print`` tells what a script must know: a cut answer (exit 2), each retry, a stall.

The real command, the real SDK, the fake server, a real database.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.agent_kit import ENV_VARIABLES
from hostile.finish_reasons import CUT_REASONS

from koroku_tui.fake_gemini import (
    FakeGemini,
    Hang,
    Reply,
    blocked_prompt,
    call_reply,
    error_reply,
    text_reply,
    thoughts_only,
)

COMMAND = shutil.which("koroku-tui", path=str(Path(sys.executable).parent))


def run(
    fake: FakeGemini, home: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    assert COMMAND is not None, "koroku-tui is not installed in the test environment"
    environ = {k: v for k, v in os.environ.items() if k not in ENV_VARIABLES}
    environ.update(
        GOOGLE_GEMINI_BASE_URL=fake.base_url, KOROKU_HOME=str(home), GEMINI_API_KEY="test-key"
    )
    environ.update(env or {})
    return subprocess.run(
        [COMMAND, *args], env=environ, capture_output=True, text=True, timeout=60, cwd=home
    )


@pytest.mark.parametrize(("reason", "words"), CUT_REASONS[:2])
def test_a_cut_answer_is_printed_then_told_on_stderr_with_exit_2(
    fake: FakeGemini, tmp_path: Path, reason: str, words: str
) -> None:
    fake.add(text_reply("Half of the answer", pieces=2, finish_reason=reason))
    result = run(fake, tmp_path, "--print", "explain everything")
    assert result.returncode == 2
    assert result.stdout == "Half of the answer\n"
    assert result.stderr == f"koroku-tui: The answer was cut off: {words}.\n"


@pytest.mark.parametrize(
    ("reason", "words"),
    [(r, w) for r, w in CUT_REASONS if r in ("SAFETY", "SOMETHING_NEW_IN_2027")],
)
def test_a_tool_step_gemini_stopped_runs_nothing_and_exits_2(
    fake: FakeGemini, tmp_path: Path, reason: str, words: str
) -> None:
    """Even with --yes: a command from a reply a safety filter stopped is not run."""
    fake.add(
        call_reply(("run_command", {"command": "touch RAN"}), finish_reason=reason),
        text_reply("Done."),
    )
    result = run(fake, tmp_path, "--yes", "--print", "tidy up")
    assert result.returncode == 2
    assert result.stdout == ""
    assert (
        result.stderr
        == f"koroku-tui: Gemini stopped the reply ({words}); its tool call was not run.\n"
    )
    assert not (tmp_path / "RAN").exists()
    assert len(fake.generate_requests) == 1


def test_a_reason_newer_than_koroku_is_still_one_line(fake: FakeGemini, tmp_path: Path) -> None:
    # The SDK warns about a reason it does not know; the warning holds the
    # server's text and belongs in the log, not on the user's terminal.
    fake.add(text_reply("Part", finish_reason="BRAND_NEW\x1b]0;pwned\x07"))
    result = run(fake, tmp_path, "--print", "hello")
    assert result.returncode == 2
    assert result.stderr == "koroku-tui: The answer was cut off: brand new.\n"
    assert "is not a valid FinishReason" in (tmp_path / "koroku.log").read_text()


def test_only_thoughts_is_exit_2_with_a_sentence_and_no_output(
    fake: FakeGemini, tmp_path: Path
) -> None:
    fake.add(thoughts_only("Thinking and thinking...", finish_reason="MAX_TOKENS"))
    result = run(fake, tmp_path, "--print", "a hard one")
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr == ("koroku-tui: The answer was cut off before any text: token limit.\n")


def test_a_blocked_prompt_is_exit_2_with_a_sentence(fake: FakeGemini, tmp_path: Path) -> None:
    fake.add(blocked_prompt("PROHIBITED_CONTENT"))
    result = run(fake, tmp_path, "--print", "something refused")
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr == (
        "koroku-tui: Gemini blocked your message and gave no answer (prohibited content); "
        "rephrase it and send it again.\n"
    )


def test_a_reply_with_nothing_but_a_safety_stop_is_exit_2(fake: FakeGemini, tmp_path: Path) -> None:
    fake.add(Reply(chunks=((),), finish_reason="SAFETY"))
    result = run(fake, tmp_path, "--print", "hello")
    assert result.returncode == 2
    assert "cut off before any text: safety filter" in result.stderr


def test_a_whole_answer_is_still_exit_0(fake: FakeGemini, tmp_path: Path) -> None:
    fake.add(text_reply("All of it.", finish_reason="STOP"))
    result = run(fake, tmp_path, "--print", "hello")
    assert (result.returncode, result.stdout, result.stderr) == (0, "All of it.\n", "")


def test_each_retry_is_one_line_on_stderr(fake: FakeGemini, tmp_path: Path) -> None:
    fake.add(error_reply(429), text_reply("Got there."))  # the default backoff: ~1 s
    result = run(fake, tmp_path, "--print", "hello")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Got there.\n"
    assert re.fullmatch(
        r"koroku-tui: retrying in (1|0\.[89]) s, 2/4: rate limited\n", result.stderr
    ), result.stderr


def test_a_silent_server_is_given_up_after_the_configured_stall(
    fake: FakeGemini, tmp_path: Path
) -> None:
    fake.add(Hang(), Hang(), Hang(), Hang())
    # No clock here (a loaded machine took 31 s to start and stop the command):
    # without the stall limit the 120 s request timeout would run past run()'s 60 s.
    result = run(fake, tmp_path, "--print", "hello", env={"KOROKU_STALL_TIMEOUT": "1"})
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.startswith("koroku-tui: Gemini sent nothing for 1 s; try again")
    assert len(result.stderr.splitlines()) == 1  # no retry lines: a stall is final
    assert len(fake.generate_requests) == 1


def test_a_bad_stall_setting_is_one_sentence(fake: FakeGemini, tmp_path: Path) -> None:
    result = run(fake, tmp_path, "--print", "hello", env={"KOROKU_STALL_TIMEOUT": "soon"})
    assert result.returncode == 1
    assert result.stderr.startswith("koroku-tui: KOROKU_STALL_TIMEOUT is not usable")
    assert "Traceback" not in result.stderr and len(result.stderr.splitlines()) == 1
    assert fake.requests == []


def test_help_documents_exit_codes_and_the_stall_limit() -> None:
    assert COMMAND is not None
    text = " ".join(
        subprocess.run(
            [COMMAND, "--help"], capture_output=True, text=True, timeout=60
        ).stdout.split()
    )
    assert "0 the answer is whole; 1 no answer" in text
    assert "2 Gemini ended without a whole answer" in text
    assert "KOROKU_STALL_TIMEOUT seconds (default 120)" in text
