"""ctrl+l and launches leave no empty sessions behind (issue 12, item 9)."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

from google import genai
from helpers.ui_kit import build, seed_session, settle

from koroku_tui.config.settings import Settings
from koroku_tui.ui.history import HistoryScreen


def stored_sessions(tmp_path: Path) -> list[tuple[int, int]]:
    with closing(sqlite3.connect(Settings(home=tmp_path).database_path)) as conn:
        return conn.execute("SELECT id, message_count FROM sessions").fetchall()


async def test_three_new_sessions_leave_no_empty_one_in_the_history(
    client: genai.Client, tmp_path: Path
) -> None:
    await seed_session(tmp_path, 1)
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        for _ in range(3):
            await pilot.press("ctrl+l")
            await settle(pilot, app)
        assert app.title == "New session"
        await pilot.press("ctrl+r")
        await settle(pilot, app)
        screen = app.screen
        assert isinstance(screen, HistoryScreen)
        assert screen.sessions.option_count == 1
        assert [s.title for s in screen.sessions.sessions.values()] == ["question 0"]
    assert stored_sessions(tmp_path) == [(1, 2)]


async def test_launching_twice_without_sending_stores_no_session(
    client: genai.Client, tmp_path: Path
) -> None:
    for _ in range(2):
        app = build(tmp_path, client)
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot, app)
            assert app.title == "New session"
    assert stored_sessions(tmp_path) == []
