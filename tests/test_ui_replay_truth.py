"""After a restart the transcript still says what went wrong (issue 12, item 12).

A turn that ended in an error replays with its sentence under the message
(stored as a row the model never sees); a call cut off by a kill -9 replays
as an "interrupted" row.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path

import pytest
from google import genai
from helpers.agent_killed_in_tool import BLOCKING_COMMAND
from helpers.ui_kit import build, send, settle, texts
from test_agent_restart import kill_agent_during_its_tool

from koroku_tui.agent.tools import ToolSettings
from koroku_tui.agent.tools.builtin.recall import read_session
from koroku_tui.config.settings import Settings
from koroku_tui.fake_gemini import FakeGemini, call_reply, error_reply, text_reply
from koroku_tui.store import SessionManager
from koroku_tui.store.export import export_markdown
from koroku_tui.ui.history.message_text import HistoryMoment, message_text
from koroku_tui.ui.main.blocks import ErrorBlock, UserBlock
from koroku_tui.ui.main.tool_row import INTERRUPTED, ToolRow
from koroku_tui.ui.main.transcript import Transcript

pytestmark = pytest.mark.timeout(60)


async def test_a_turn_that_failed_replays_with_its_error(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    fake.add(error_reply(400, "Request contains an invalid argument."), text_reply("Hi."))
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await send(pilot, app, "hello")
        await settle(pilot, app)
        [sentence] = texts(app, ErrorBlock)
        assert "invalid argument" in sentence

    again = build(tmp_path, client)
    async with again.run_test(size=(120, 40)) as pilot:
        await settle(pilot, again)
        shown = [
            (type(block).__name__, texts_of)
            for block in again.query_one(Transcript).children
            if isinstance(block, UserBlock | ErrorBlock)
            for texts_of in [str(block.render())]
        ]
        assert shown == [("UserBlock", "hello"), ("ErrorBlock", sentence)]
        # The model never sees it: the next turn's request holds the message alone.
        await send(pilot, again, "hello again")
        await settle(pilot, again)
        sent = fake.generate_requests[-1].contents
        assert [c["role"] for c in sent] == ["user", "user"]
        assert sentence not in str(sent)

    async with SessionManager(Settings(home=tmp_path).database_path) as store:
        rows = await store.load_all()
        assert [row.kind for row in rows] == ["session", "error", "session", "session"]
        info = await store.get_session(store.session_id)
        assert sentence in export_markdown(info, rows)
        excerpt = await read_session(ToolSettings(history=store), store.session_id)
        assert sentence in excerpt
        history = message_text(rows[1], HistoryMoment(datetime.now(UTC))).plain
        assert history.startswith(f"#{rows[1].id} ✗ the turn ended in an error: {sentence}")
        assert (await store.search_history("invalid argument")).total == 0  # not indexed


async def test_a_call_killed_mid_tool_replays_as_interrupted(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    fake.add(call_reply(("run_command", {"command": BLOCKING_COMMAND})))
    db = Settings(home=tmp_path).database_path
    db.parent.mkdir(parents=True, exist_ok=True)
    await asyncio.to_thread(kill_agent_during_its_tool, fake.base_url, db, tmp_path)

    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        [row] = app.query(ToolRow)
        line = str(row.render())
        assert line.startswith(f"{INTERRUPTED} run_command") and "interrupted" in line
        assert row.has_class("-interrupted") and not row.has_class("-failed")
        assert texts(app, UserBlock) == ["Run the long command."]
