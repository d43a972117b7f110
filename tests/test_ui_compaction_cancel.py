"""Escape during a compaction says so in one notice, and nothing was stored."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from google import genai
from helpers.ui_kit import build, settle, wait_until
from test_ui_compaction_notices import LONG, recorded, turns

from koroku_tui.config.settings import Settings
from koroku_tui.fake_gemini import FakeGemini, Hang, text_reply
from koroku_tui.ui.main.blocks import CompactionBlock


def stored_rows(tmp_path: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(Settings(home=tmp_path).database_path) as db:
        rows = list(db.execute("SELECT kind, event_json FROM messages ORDER BY id"))
    db.close()
    return rows


async def test_escape_during_a_compaction_is_one_notice_and_changes_nothing(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    fake.add(text_reply(LONG * 10), text_reply("Hi again."), Hang(then=text_reply("summary")))
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await turns(pilot, app, "hello", "hello again")
        before = stored_rows(tmp_path)
        notices = recorded(app)
        await pilot.press("ctrl+o")
        await wait_until(pilot, lambda: fake.pending == 0, "the summary request")
        await pilot.press("escape")
        await settle(pilot, app)
        assert notices == ["Compaction cancelled; nothing was changed."]
        assert len(app.query(CompactionBlock)) == 0
        assert stored_rows(tmp_path) == before
        fake.release()
