"""``--print --output-format json``: one JSON object on stdout, nothing else, the same exit codes.

The installed command against the fake Gemini and a real database (the
``run`` helpers of the ``--print`` tests).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hostile.terminal import TERMINAL_ATTACKS
from test_headless_finish import run
from test_headless_terminal import run_bytes

from koroku_tui.fake_gemini import FakeGemini, Usage, call_reply, error_reply, text_reply
from koroku_tui.modes.json_output import EVENT_FIELDS, TOOL_CALL_FIELDS, USAGE_FIELDS, json_line

RESULT_KEYS = {"type", *EVENT_FIELDS["result"]}
HOSTILE = "".join(attack for _, attack in TERMINAL_ATTACKS)
"""Every terminal attack of the ``--print`` tests in one answer."""


def one_object(stdout: str) -> dict[str, Any]:
    """stdout as exactly one JSON object on one line, with the result's fields."""
    assert stdout.endswith("\n") and stdout.count("\n") == 1, stdout
    found = json.loads(stdout)
    assert isinstance(found, dict) and set(found) == RESULT_KEYS, found
    assert found["type"] == "result"
    return found


def assert_ascii_only(stdout: bytes) -> None:
    """No byte a terminal acts on: printable ASCII and newlines, nothing else."""
    assert all(0x20 <= byte < 0x7F or byte == 0x0A for byte in stdout), stdout


def test_one_object_tells_the_session_answer_tool_calls_and_usage(
    fake: FakeGemini, tmp_path: Path
) -> None:
    (tmp_path / "notes.txt").write_text("buy milk")
    fake.add(
        call_reply(
            ("read_file", {"path": "notes.txt"}),
            ("read_file", {"path": "missing.txt"}),
            ("run_command", {"command": "touch RAN"}),
            usage=Usage(prompt_tokens=100, candidates_tokens=10, thoughts_tokens=5),
        ),
        text_reply("Milk.", usage=Usage(prompt_tokens=200, candidates_tokens=3, cached_tokens=64)),
    )
    result = run(fake, tmp_path, "--print", "read and run", "--output-format", "json")
    assert result.returncode == 0, result.stderr
    found = one_object(result.stdout)
    assert (found["session_id"], found["answer"], found["exit_code"]) == (1, "Milk.", 0)
    assert (found["finish_reason"], found["error"]) == ("STOP", None)
    assert found["model"]
    calls = found["tool_calls"]
    assert [set(call) for call in calls] == [set(TOOL_CALL_FIELDS)] * 3
    assert [(c["name"], c["arguments"], c["status"]) for c in calls] == [
        ("read_file", {"path": "notes.txt"}, "ok"),
        ("read_file", {"path": "missing.txt"}, "failed"),
        ("run_command", {"command": "touch RAN"}, "refused"),  # no --yes
    ]
    assert (calls[0]["output"], calls[0]["error"]) == ("buy milk", None)
    assert calls[1]["output"] is None and "missing.txt" in calls[1]["error"]
    assert "--yes" in calls[2]["error"] and not (tmp_path / "RAN").exists()
    assert all(call["id"] for call in calls)
    assert found["usage"] == {
        "prompt_tokens": 300,
        "candidates_tokens": 13,
        "cached_tokens": 64,
        "thoughts_tokens": 5,
        "total_tokens": 318,
    }
    assert set(found["usage"]) == set(USAGE_FIELDS)

    fake.add(call_reply(("run_command", {"command": "touch RAN"})), text_reply("Ran."))
    allowed = run(fake, tmp_path, "--yes", "--print", "run it", "--output-format", "json")
    assert allowed.returncode == 0, allowed.stderr
    assert [c["status"] for c in one_object(allowed.stdout)["tool_calls"]] == ["ok"]
    assert (tmp_path / "RAN").exists()


def test_a_failure_is_an_object_with_the_sentence_and_exit_1(
    fake: FakeGemini, tmp_path: Path
) -> None:
    fake.add(error_reply(400, "Request contains an invalid argument."))
    result = run(fake, tmp_path, "--print", "hello", "--output-format", "json")
    assert result.returncode == 1
    found = one_object(result.stdout)
    assert (found["exit_code"], found["session_id"], found["answer"]) == (1, 1, "")
    sentence = result.stderr.removeprefix("koroku-tui: ").rstrip("\n")
    assert found["error"] == sentence and "invalid argument" in sentence


def test_without_a_key_the_object_says_so_and_names_no_session(
    fake: FakeGemini, tmp_path: Path
) -> None:
    result = run(
        fake, tmp_path, "--print", "hi", "--output-format", "json", env={"GEMINI_API_KEY": ""}
    )
    assert result.returncode == 1
    found = one_object(result.stdout)
    assert found["session_id"] is None and "GEMINI_API_KEY" in found["error"]
    assert fake.requests == []


def test_a_cut_answer_is_exit_2_with_what_arrived(fake: FakeGemini, tmp_path: Path) -> None:
    fake.add(text_reply("Half of it", pieces=2, finish_reason="MAX_TOKENS"))
    result = run(fake, tmp_path, "--print", "explain", "--output-format", "json")
    assert result.returncode == 2
    found = one_object(result.stdout)
    assert (found["answer"], found["finish_reason"], found["exit_code"]) == (
        "Half of it",
        "MAX_TOKENS",
        2,
    )
    assert found["error"] == "The answer was cut off: token limit."
    assert result.stderr == "koroku-tui: The answer was cut off: token limit.\n"


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--output-format", "json"], "--output-format applies only with --print"),
        (["--output-format", "stream-json"], "--output-format applies only with --print"),
        (["--raw", "--print", "hi", "--output-format", "json"], "--raw applies only to the text"),
        (["--print", "hi", "--output-format", "xml"], "invalid choice: 'xml'"),
        # Each prints something else and exits: a script asking for JSON would read TOML.
        (["--print", "hi", "--output-format", "json", "--show-config"], "leave out --print"),
        (["--print", "hi", "--output-format", "json", "--config-schema"], "leave out --print"),
    ],
)
def test_a_format_that_cannot_apply_is_one_sentence_and_exit_2(
    fake: FakeGemini, tmp_path: Path, args: list[str], said: str
) -> None:
    result = run(fake, tmp_path, *args)
    assert result.returncode == 2
    assert result.stdout == ""
    assert said in result.stderr and "Traceback" not in result.stderr
    assert fake.requests == []


@pytest.mark.parametrize("output_format", ["json", "stream-json"])
def test_a_hostile_answer_is_escaped_as_json_does_and_comes_back_exactly(
    fake: FakeGemini, tmp_path: Path, output_format: str
) -> None:
    fake.add(
        call_reply(("read_file", {"path": "\x1b]0;pwned\x07\u202e.txt"})),
        text_reply(HOSTILE, pieces=3),
    )
    result = run_bytes(fake, tmp_path, "--print", "hi", "--output-format", output_format)
    assert result.returncode == 0, result.stderr
    assert_ascii_only(result.stdout)
    for escaped in (rb"\u001b]52;c;", rb"\u0007", rb"\u202e", rb"\r", rb"\u009b", rb"\u007f"):
        assert escaped in result.stdout
    found = json.loads(result.stdout.splitlines()[-1])
    assert found["answer"] == HOSTILE  # escaped, not removed: a parser gets the text back
    assert found["tool_calls"][0]["arguments"] == {"path": "\x1b]0;pwned\x07\u202e.txt"}
    assert b"\x1b" not in result.stderr  # stderr stays cleaned as with the text output


def test_a_hostile_error_message_stays_valid_json(fake: FakeGemini, tmp_path: Path) -> None:
    fake.add(error_reply(400, "bad\x1b]52;c;cm0gLXJmIH4K\x07 \u202eargument\r"))
    result = run_bytes(fake, tmp_path, "--print", "hi", "--output-format", "json")
    assert result.returncode == 1
    assert_ascii_only(result.stdout)
    found = json.loads(result.stdout)
    assert found["exit_code"] == 1 and "bad" in found["error"]


def test_text_no_strict_parser_reads_becomes_what_every_parser_reads() -> None:
    """A lone surrogate (a tool's undecodable byte) and a float JSON has no word for."""
    line = json_line({"output": "a\ud800b", "arguments": {"n": float("nan"), "\ud83d": [1e999]}})
    assert "\\ud8" not in line and "NaN" not in line and "Infinity" not in line
    assert json.loads(line) == {"output": "a\ufffdb", "arguments": {"n": None, "\ufffd": [None]}}
