"""Tool arguments in the history screen and in exports: hidden characters as visible escapes.

Both once passed arguments through the sanitizer, which dropped them (or,
for a C1 control, everything after it on the line).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from hostile.hidden_text import HIDDEN_COMMANDS

from koroku_tui.events import (
    FCMetadata,
    FunctionCallData,
    FunctionCallPart,
    FunctionResponseData,
    FunctionResponsePart,
    SessionEvent,
)
from koroku_tui.store import SessionManager, StoredMessage
from koroku_tui.ui.history.exporting import export_session
from koroku_tui.ui.history.message_text import HistoryMoment, message_text

NAME = "run\u009d_command"  # a tool name is model text too
NAME_SHOWN = r"run\u009d_command"


def call(command: str) -> SessionEvent:
    data = FunctionCallData(name=NAME, args={"command": command}, id="c1")
    return SessionEvent(role="model", parts=[FunctionCallPart(function_call=data)])


def response(command: str) -> SessionEvent:
    part = FunctionResponsePart(
        function_response=FunctionResponseData(name=NAME, response={"error": "denied"}, id="c1"),
        fc_metadata=FCMetadata(name=NAME, args={"command": command}),
    )
    return SessionEvent(role="user", parts=[part])


@pytest.mark.parametrize(("command", "expected"), HIDDEN_COMMANDS)
async def test_an_export_writes_hidden_characters_as_escapes(
    tmp_path: Path, command: str, expected: str
) -> None:
    async with SessionManager(tmp_path / "koroku.db") as store:
        await store.add_message(call(command))
        await store.add_message(response(command))
        path = await export_session(store, store.session_id, tmp_path)
    text = path.read_text(encoding="utf-8")
    assert f'**Tool call:** `{NAME_SHOWN}`\n```json\n{{"command": "{expected}"}}\n```' in text
    assert f'❌ `{NAME_SHOWN}` `{{"command": "{expected}"}}` failed' in text


@pytest.mark.parametrize(("command", "expected"), HIDDEN_COMMANDS)
@pytest.mark.parametrize("whole", [False, True])
def test_the_raw_history_shows_hidden_characters_as_escapes(
    command: str, expected: str, whole: bool
) -> None:
    moment = HistoryMoment(now=datetime(2025, 6, 10, tzinfo=UTC))
    when = moment.now.timestamp()
    shown = [
        message_text(StoredMessage(n, 1, "session", when, event), moment, whole=whole).plain
        for n, event in enumerate([call(command), response(command)], start=1)
    ]
    assert f'→ call {NAME_SHOWN} {{"command": "{expected}"}}' in shown[0]
    assert f'✗ {NAME_SHOWN} {{"command": "{expected}"}}' in shown[1]
