"""``--print`` whose stdout cannot take the answer: closed (``>&-``) or full (``/dev/full``).

One sentence on stderr and exit 1, never a traceback, never a silent exit 0
a script would take for an answer it then cannot find.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from helpers.processes import KOROKU, koroku_env

from koroku_tui.fake_gemini import FakeGemini, text_reply


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
