"""``export_markdown``: a session's stored rows as a deterministic Markdown document."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from koroku_tui.events import (
    CompactionEvent,
    FCMetadata,
    FunctionCallData,
    FunctionCallPart,
    FunctionResponseData,
    FunctionResponsePart,
    OtherPart,
    SessionEvent,
    TextPart,
)
from koroku_tui.store import SessionInfo, StoredMessage
from koroku_tui.store.export import TOOL_OUTPUT_LIMIT, export_filename, export_markdown

T0 = datetime(2025, 6, 7, 11, 30, tzinfo=UTC).timestamp()
Event = SessionEvent | CompactionEvent | None


@pytest.fixture(autouse=True)
def in_tokyo(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Local time nine hours ahead of UTC (a POSIX TZ: no time zone database needed)."""
    monkeypatch.setenv("TZ", "JST-9")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def row(
    row_id: int,
    event: Event | None,
    minutes: int,
    raw_json: str | None = None,
    error: str | None = None,
) -> StoredMessage:
    kind = "compaction" if isinstance(event, CompactionEvent) else "session"
    return StoredMessage(row_id, 7, kind, T0 + 60 * minutes, event, raw_json, error)


def tool_response(name: str, result: dict[str, object], **args: object) -> SessionEvent:
    return SessionEvent(
        role="user",
        parts=[
            FunctionResponsePart(
                function_response=FunctionResponseData(name=name, response=result, id="c1"),
                fc_metadata=FCMetadata(name=name, args=dict(args)),
            )
        ],
    )


INFO = SessionInfo(
    id=7,
    title="Plan the tomato garden",
    created_at=T0,
    updated_at=T0 + 60 * 9,
    message_count=8,
    compaction_count=1,
)

MESSAGES = [
    row(1, SessionEvent(role="user", parts=[TextPart(text="How many rows?")]), 0),
    row(
        2,
        SessionEvent(
            role="model",
            parts=[
                TextPart(text="Check the file </details> first.", thought=True),
                FunctionCallPart(
                    function_call=FunctionCallData(name="read_file", args={"path": "g.txt"})
                ),
            ],
        ),
        1,
    ),
    row(3, tool_response("read_file", {"output": "rows: 4\n```fence```"}, path="g.txt"), 2),
    row(4, tool_response("shell", {"error": "permission denied"}, cmd="rm -rf /"), 3),
    row(5, SessionEvent(role="model", parts=[TextPart(text="Four rows.")]), 4),
    row(6, CompactionEvent.from_summary("User plans\nfour rows.", kept_from_id=5), 5),
    row(7, None, 6, raw_json="{oops", error="invalid JSON: Expecting value"),
    row(8, SessionEvent(role="user", parts=[OtherPart(part={"inline_data": {"data": "AA=="}})]), 9),
]

EXPECTED = """\
# Plan the tomato garden

- Session: 7
- Started: 2025-06-07 20:30 +09:00
- Last activity: 2025-06-07 20:39 +09:00
- Messages: 8 (1 compaction)

---

## You · 2025-06-07 20:30 +09:00 (#1)

How many rows?

---

## Model · 2025-06-07 20:31 +09:00 (#2)

<details>
<summary>Thinking</summary>

Check the file &lt;/details> first.

</details>

**Tool call:** `read_file`
```json
{"path": "g.txt"}
```

---

## Tool results · 2025-06-07 20:32 +09:00 (#3)

✅ `read_file` `{"path": "g.txt"}`
````
rows: 4
```fence```
````

---

## Tool results · 2025-06-07 20:33 +09:00 (#4)

❌ `shell` `{"cmd": "rm -rf /"}` failed
```
permission denied
```

---

## Model · 2025-06-07 20:34 +09:00 (#5)

Four rows.

---

## Compaction summary · 2025-06-07 20:35 +09:00 (#6)

*Earlier turns were summarised for the model here; kept verbatim from message #5.*

> User plans
> four rows.

---

## Unreadable message #7 · 2025-06-07 20:36 +09:00

The stored row could not be read: invalid JSON: Expecting value

---

## You · 2025-06-07 20:39 +09:00 (#8)

*(non-text part: inline_data)*
"""


def test_a_whole_session_exports_as_expected() -> None:
    assert export_markdown(INFO, MESSAGES) == EXPECTED


def test_dates_are_local_time_with_their_offset(monkeypatch: pytest.MonkeyPatch) -> None:
    # What the app shows is local time: the export says the same, offset included.
    monkeypatch.setenv("TZ", "EST+5")
    time.tzset()
    text = export_markdown(INFO, MESSAGES)
    assert "- Started: 2025-06-07 06:30 -05:00\n" in text
    assert "## You · 2025-06-07 06:30 -05:00 (#1)" in text


def test_export_is_deterministic() -> None:
    assert export_markdown(INFO, MESSAGES) == export_markdown(INFO, list(MESSAGES))


def test_an_empty_untitled_session_still_exports() -> None:
    info = SessionInfo(3, None, T0, T0, 0, 0)
    text = export_markdown(info, [])
    assert text.startswith("# Untitled session\n") and text.endswith("- Messages: 0\n")


def test_long_tool_output_is_summarised() -> None:
    huge = tool_response("read_file", {"output": "x" * (TOOL_OUTPUT_LIMIT + 500)})
    text = export_markdown(INFO, [row(1, huge, 0)])
    assert "x" * TOOL_OUTPUT_LIMIT + "\n… (500 more characters)" in text
    assert "x" * (TOOL_OUTPUT_LIMIT + 1) not in text


def test_filename_is_a_slug_of_the_title_and_the_id() -> None:
    assert export_filename(INFO) == "plan-the-tomato-garden-7.md"
    hostile = SessionInfo(12, "../../etc/[bold]passwd\x1b]0;x\x07", T0, T0, 1, 0)
    assert export_filename(hostile) == "etc-bold-passwd-0-x-12.md"
    assert export_filename(SessionInfo(5, "日本語", T0, T0, 1, 0)) == "session-5.md"
    assert len(export_filename(SessionInfo(9, "word " * 40, T0, T0, 1, 0))) <= 40 + len("-9.md")


def test_export_does_not_import_the_ui() -> None:
    code = (
        "import sys, koroku_tui.store.export\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich')))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
