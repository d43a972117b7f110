"""``--print --output-format stream-json``: one JSON object a line, as the turn happens.

The installed command against the fake Gemini and a real database; the
README's schema is checked against what the command writes.
"""

from __future__ import annotations

import itertools
import json
import queue
import re
import subprocess
import threading
from pathlib import Path
from typing import IO, Any

from helpers.processes import KOROKU, koroku_env
from test_headless_finish import run
from test_output_json import one_object

from koroku_tui.fake_gemini import (
    FakeGemini,
    RecordedRequest,
    ScriptItem,
    Usage,
    call_reply,
    error_reply,
    text_reply,
)
from koroku_tui.modes.command_line import OUTPUT_FORMATS
from koroku_tui.modes.json_output import EVENT_FIELDS, TOOL_CALL_FIELDS, USAGE_FIELDS

README = Path(__file__).parent.parent / "README.md"


def lines_of(stdout: str) -> list[dict[str, Any]]:
    """Every stdout line as an object whose fields are its type's, exactly."""
    assert stdout.endswith("\n"), stdout
    found = [json.loads(line) for line in stdout.splitlines()]
    for line in found:
        assert set(line) == {"type", *EVENT_FIELDS[line["type"]]}, line
    return found


def types_in_order(lines: list[dict[str, Any]]) -> list[str]:
    """The lines' types, a run of one type (the deltas of one step) counted once."""
    return [kind for kind, _ in itertools.groupby(line["type"] for line in lines)]


def test_the_turn_streams_in_order_and_ends_with_the_result(
    fake: FakeGemini, tmp_path: Path
) -> None:
    (tmp_path / "notes.txt").write_text("buy milk")
    fake.add(
        call_reply(
            ("read_file", {"path": "notes.txt"}),
            ("write_file", {"path": "out.txt", "content": "x"}),
            thought="Reading first.",
        ),
        error_reply(503),  # retried once, after the default backoff (~1 s)
        text_reply("You need milk.", pieces=3, usage=Usage(cached_tokens=12)),
    )
    result = run(fake, tmp_path, "--print", "what do I need?", "--output-format", "stream-json")
    assert result.returncode == 0, result.stderr
    lines = lines_of(result.stdout)
    assert types_in_order(lines) == [
        "session",
        "thought_delta",
        "usage",
        "tool_call_started",
        "tool_call_finished",
        "tool_call_started",
        "approval_refused",
        "tool_call_finished",
        "retry",
        "text_delta",
        "usage",
        "result",
    ]
    by_type = {kind: [line for line in lines if line["type"] == kind] for kind in EVENT_FIELDS}
    assert by_type["session"][0]["session_id"] == 1
    assert "".join(line["text"] for line in by_type["text_delta"]) == "You need milk."
    assert len(by_type["text_delta"]) == 3
    assert [line["status"] for line in by_type["tool_call_finished"]] == ["ok", "refused"]
    refused = by_type["approval_refused"][0]
    assert (refused["name"], refused["by"]) == ("write_file", "no_approval")
    assert "--yes" in refused["reason"] and not (tmp_path / "out.txt").exists()
    retry = by_type["retry"][0]
    assert (retry["attempt"], retry["max_attempts"]) == (2, 4)
    assert f"koroku-tui: {retry['message']}\n" == result.stderr  # stderr says it as before
    assert by_type["usage"][-1]["usage"]["cached_tokens"] == 12
    final = one_object(result.stdout.splitlines(keepends=True)[-1])
    assert final["answer"] == "You need milk." and final["exit_code"] == 0
    assert [call["status"] for call in final["tool_calls"]] == ["ok", "refused"]
    assert final["usage"]["cached_tokens"] == 12


def read_lines(stream: IO[bytes] | None, into: queue.Queue[bytes]) -> None:
    for line in stream or ():
        into.put(line)


def test_each_line_is_written_as_it_happens(fake: FakeGemini, tmp_path: Path) -> None:
    """The tool call's lines reach a reader while Gemini has not answered the next step."""
    (tmp_path / "notes.txt").write_text("buy milk")
    answer_now = threading.Event()

    def answer_when_told(request: RecordedRequest) -> ScriptItem:
        answer_now.wait(timeout=60)
        return text_reply("Milk.")

    fake.add(call_reply(("read_file", {"path": "notes.txt"})), answer_when_told)
    assert KOROKU is not None
    command = [KOROKU, "--print", "hi", "--output-format", "stream-json"]
    env = koroku_env(fake, tmp_path)
    env.pop("PYTHONUNBUFFERED", None)  # a pipe is block-buffered, as a script's would be
    with subprocess.Popen(command, env=env, cwd=tmp_path, stdout=subprocess.PIPE) as process:
        arrived: queue.Queue[bytes] = queue.Queue()
        reader = threading.Thread(target=read_lines, args=(process.stdout, arrived))
        reader.start()
        try:
            # Read while the next step waits: no line may wait for the process to end.
            seen = [json.loads(arrived.get(timeout=30))["type"] for _ in range(4)]
        finally:
            answer_now.set()
            process.wait(timeout=60)
            reader.join()
    assert seen == ["session", "usage", "tool_call_started", "tool_call_finished"]
    assert process.returncode == 0
    assert json.loads(list(arrived.queue)[-1])["answer"] == "Milk."


def test_a_compaction_is_told_before_the_answer(fake: FakeGemini, tmp_path: Path) -> None:
    # A first turn measured at the window's edge: the next one compacts before its request.
    fake.add(text_reply("First.", usage=Usage(prompt_tokens=1_000_000)))
    assert run(fake, tmp_path, "--print", "hi").returncode == 0
    fake.add(text_reply("The user said hi."), text_reply("Second."))
    result = run(fake, tmp_path, "--print", "again", "--output-format", "stream-json")
    assert result.returncode == 0, result.stderr
    lines = lines_of(result.stdout)
    assert types_in_order(lines) == [
        "session",
        "compaction_started",
        "compaction_finished",
        "text_delta",
        "usage",
        "result",
    ]
    assert lines[1]["reason"] == "threshold" and lines[2]["summarised"] == 2
    assert lines[-1]["answer"] == "Second."


def readme_section() -> str:
    text = README.read_text()
    start = text.index("### Output for scripts")
    return text[start : text.index("\n## ", start)]


def readme_tables() -> list[list[list[str]]]:
    """The section's tables: rows of cells, header and rule left out."""
    tables: list[list[list[str]]] = []
    rows: list[list[str]] = []
    for line in [*readme_section().splitlines(), ""]:
        if line.startswith("|"):
            rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
        elif rows:
            tables.append(rows[2:])
            rows = []
    return tables


def names(cell: str) -> list[str]:
    return re.findall(r"`([a-z_]+)`", cell)


def test_the_readme_documents_every_field_and_every_type() -> None:
    result, tool_call, usage, events = readme_tables()
    assert [names(row[0])[0] for row in result] == ["type", *EVENT_FIELDS["result"]]
    assert [names(row[0])[0] for row in tool_call] == list(TOOL_CALL_FIELDS)
    assert [names(row[0])[0] for row in usage] == list(USAGE_FIELDS)
    documented = {names(row[0])[0]: names(row[1]) for row in events}
    listed = {kind: list(fields) for kind, fields in EVENT_FIELDS.items() if kind != "result"}
    assert documented == {**listed, "result": ["result"]}  # "the result object, above"
    section = readme_section()
    assert all(f"`{name}`" in section for name in OUTPUT_FORMATS)
    assert "--output-format" in section
