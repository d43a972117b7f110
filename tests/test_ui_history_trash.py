"""The history screen's trash: a deleted session waits there, Enter restores it, x empties it.

The history screen against a real SessionManager on a temporary SQLite file
(the fixture of ``test_ui_history``: three sessions, a fixed clock).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from helpers.ui_kit import settle
from test_ui_history import Fixture, HostApp, lines, open_store, select_session
from textual.pilot import Pilot
from textual.widgets import Static

from koroku_tui.store import SessionManager, SessionNotFoundError
from koroku_tui.ui.history import ConfirmDialog, HistoryScreen
from koroku_tui.ui.key_bar import KeyBar

GARDEN = "How should I plan the tomato garden?"


@pytest.fixture
async def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Any]:
    manager, ids = await open_store(tmp_path / "koroku.db", monkeypatch)
    yield manager, ids
    await manager.close()


def history(app: Any) -> HistoryScreen:
    assert isinstance(app.screen, HistoryScreen), f"{type(app.screen).__name__} is on top"
    return app.screen


def keys_shown(app: Any) -> list[str]:
    return [f"{s.display} {s.description}" for s in history(app).query_one(KeyBar).keys()[0]]


async def delete_garden(pilot: Pilot[Any], ids: Fixture) -> HistoryScreen:
    screen = await select_session(pilot, ids.garden)
    await pilot.press("d")
    await settle(pilot)
    await pilot.press("y")
    await settle(pilot)
    return screen


async def test_a_deleted_session_waits_in_the_trash_and_enter_restores_it(
    store: tuple[SessionManager, Fixture],
) -> None:
    manager, ids = store
    app = HostApp(manager, ids.kyoto)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        screen = await delete_garden(pilot, ids)
        assert GARDEN not in "\n".join(lines(screen.sessions))
        await pilot.press("ctrl+t")
        await settle(pilot)
        trash = screen.browser.trash
        assert screen.showing_trash and trash.has_focus
        shown = lines(trash)
        assert shown[0] == f"▶   {GARDEN}"
        assert shown[1].startswith("    deleted ") and shown[1].endswith(" · 7 messages")
        heading = " ".join(lines(screen.query_one("#session-heading", Static)))
        assert heading.startswith(f"{GARDEN}  (in the trash since ")
        assert lines(screen.query_one("#history-status", Static))[0].startswith(
            "Trash: 1 session · Enter restores one"
        )
        assert keys_shown(app)[:2] == ["esc Back", "⏎ Restore"]
        assert "d Delete" not in keys_shown(app)  # nothing to do in the trash but restore

        await pilot.press("enter")  # one key
        await settle(pilot)
        assert await manager.list_trash() == []
        assert [s.id for s in await manager.list_sessions()] == [ids.kyoto, ids.hostile, ids.garden]
        assert lines(screen.query_one("#history-status", Static))[0] == "The trash is empty."
        assert app.notices[-1] == (
            f"Restored “{GARDEN}”: it is back in the session list.",
            "information",
        )
        await pilot.press("escape")  # back from the trash, not out of the screen
        await settle(pilot)
        assert not screen.showing_trash and app.results == []
        assert GARDEN in "\n".join(lines(screen.sessions))
        await pilot.press("slash", *"basil")
        await settle(pilot)
        assert {hit.session_id for hit in screen.browser.results.hits} == {ids.garden}


async def test_a_search_leaves_the_trash_out(store: tuple[SessionManager, Fixture]) -> None:
    manager, ids = store
    app = HostApp(manager, ids.kyoto)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        screen = await delete_garden(pilot, ids)
        await pilot.press("ctrl+t")
        await settle(pilot)
        await pilot.press(*"basil")  # typed in the trash: a search of the sessions
        await settle(pilot)
        assert screen.search_box.value == "basil" and not screen.showing_trash
        assert screen.browser.results.hits == []
        assert lines(screen.query_one("#history-status", Static))[0] == "No matches for “basil”."
        assert [s.id for s in await manager.list_trash()] == [ids.garden]


async def test_emptying_the_trash_asks_starting_on_cancel_then_removes_for_good(
    store: tuple[SessionManager, Fixture],
) -> None:
    manager, ids = store
    app = HostApp(manager, ids.kyoto)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        screen = await delete_garden(pilot, ids)
        await pilot.press("ctrl+t")
        await settle(pilot)
        await pilot.press("x")  # no move in the trash yet: typed, so searched for
        await settle(pilot)
        assert screen.search_box.value == "x" and isinstance(app.screen, HistoryScreen)
        await pilot.press("ctrl+t")  # the trash again (the search is cleared)
        await settle(pilot)
        await pilot.press("home", "x")
        await settle(pilot)
        dialog = app.screen
        assert isinstance(dialog, ConfirmDialog)
        question = " ".join(" ".join(lines(dialog.query_one(Static))).split())
        assert question == (
            "Remove the 1 session in the trash (7 messages) for good? This cannot be undone."
        )
        await pilot.press("enter")  # Cancel has the focus
        await settle(pilot)
        assert [s.id for s in await manager.list_trash()] == [ids.garden]
        await pilot.press("x")
        await settle(pilot)
        await pilot.press("y")
        await settle(pilot)
        assert await manager.list_trash() == []
        with pytest.raises(SessionNotFoundError):
            await manager.get_session(ids.garden)
        assert app.notices[-1] == ("Emptied the trash: 1 session removed for good.", "information")
        assert history(app).showing_trash
