"""``--print`` whose stdout cannot take the answer (closed: ``>&-``, full: ``/dev/full``),
and JSON runs stopped by a signal.

One sentence on stderr and exit 1, never a traceback, never a silent exit 0
a script would take for an answer it then cannot find; a stopped run still
ends its JSON with the result.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import pytest
from helpers.processes import KOROKU, kill_leftovers, koroku_env, wait_for_pid

from koroku_tui.fake_gemini import FakeGemini, call_reply, text_reply

pytestmark = pytest.mark.timeout(90)


def close_stdout() -> None:
    os.close(1)


@pytest.mark.parametrize("output_format", ["text", "json", "stream-json"])
def test_a_closed_stdout_is_one_sentence_before_anything_is_sent(
    fake: FakeGemini, tmp_path: Path, output_format: str
) -> None:
    assert KOROKU is not None
    command = [KOROKU, "--print", "hi", "--output-format", output_format]
    result = subprocess.run(
        command,
        env=koroku_env(fake, tmp_path),
        cwd=tmp_path,
        stderr=subprocess.PIPE,
        preexec_fn=close_stdout,
        timeout=60,
    )
    said = result.stderr.decode()
    assert result.returncode == 1, said
    assert said.startswith("koroku-tui: ") and said.count("\n") == 1 and "stdout" in said
    assert fake.requests == []  # nothing spent on an answer nobody could read


@pytest.mark.parametrize("output_format", ["json", "stream-json"])
def test_a_full_disk_under_stdout_is_exit_1_not_a_silent_0(
    fake: FakeGemini, tmp_path: Path, output_format: str
) -> None:
    assert KOROKU is not None
    fake.add(text_reply("Hello."))
    with open("/dev/full", "w") as full:
        result = subprocess.run(
            [KOROKU, "--print", "hi", "--output-format", output_format],
            env=koroku_env(fake, tmp_path),
            cwd=tmp_path,
            stdout=full,
            stderr=subprocess.PIPE,
            timeout=60,
        )
    said = result.stderr.decode()
    assert result.returncode == 1, said
    assert "Traceback" not in said
    assert said == "koroku-tui: could not write the JSON to stdout: No space left on device.\n"


def close_stderr() -> None:
    os.close(2)


def test_a_closed_stderr_leaves_the_json_whole(fake: FakeGemini, tmp_path: Path) -> None:
    assert KOROKU is not None
    fake.add(text_reply("Hello."))
    result = subprocess.run(
        [KOROKU, "--print", "hi", "--output-format", "json"],
        env=koroku_env(fake, tmp_path),
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        preexec_fn=close_stderr,
        timeout=60,
    )
    assert result.returncode == 0
    assert json.loads(result.stdout)["answer"] == "Hello."


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_run_stopped_mid_call_still_ends_with_the_result(
    fake: FakeGemini, tmp_path: Path, signum: signal.Signals, code: int
) -> None:
    """Every line whole JSON, the last the result with the signal's exit code and the call
    that was running, answered as not finished."""
    assert KOROKU is not None
    fake.add(call_reply(("run_command", {"command": "echo $$ > sleep.pid; exec sleep 300"})))
    command = [KOROKU, "--yes", "--print", "wait", "--output-format", "stream-json"]
    with subprocess.Popen(
        command,
        env=koroku_env(fake, tmp_path),
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as koroku:
        pids = [wait_for_pid(tmp_path / "sleep.pid")]
        try:
            koroku.send_signal(signum)
            out, err = koroku.communicate(timeout=30)
        finally:
            kill_leftovers(pids)
    assert koroku.returncode == code, err
    lines = [json.loads(line) for line in out.splitlines()]
    result = lines[-1]
    assert (result["type"], result["exit_code"]) == ("result", code)
    assert result["error"] in err.decode()
    [call] = result["tool_calls"]
    assert (call["name"], call["status"]) == ("run_command", "failed")
    assert [line["type"] for line in lines].count("tool_call_finished") == 1
