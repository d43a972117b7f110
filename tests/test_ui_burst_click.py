"""A click read in the same burst as keys before it acts after them, as typed slowly.

The driver posts a read's keys and mouse events together while the app is
busy. Clicks were never held behind the keys still on their way
(``ui.key_order``): on the history screen a click on a row acted first, its
move in the list armed the row's single-letter actions, and the letters typed
before it became actions ("deploy" opened the Delete dialog, "export" wrote a
file, "rename" opened the rename dialog) instead of a search.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from google import genai
from helpers.ui_kit import build, read, seed_session, settle, type_raw, type_slowly
from test_ui_burst import CTRL_R, DOWN, UP
from textual import events
from textual.pilot import _get_mouse_message_arguments
from textual.widget import Widget

from koroku_tui.ui.history import HistoryScreen
from koroku_tui.ui.key_bar import KeyBar
from koroku_tui.ui.key_order import KeyOrder


def post_read(app: Any, keys: str, click_on: Widget) -> None:
    """``keys`` then a click on ``click_on``'s first row, posted as the driver posts one read."""
    for token in read(keys):
        token.set_sender(app)
        app.post_message(token)
    arguments = _get_mouse_message_arguments(click_on, (4, 0), button=1)
    for kind in (events.MouseDown, events.MouseUp, events.Click):
        event = kind(**arguments)
        event.set_sender(app)
        app.post_message(event)


@pytest.mark.parametrize("word", ["deploy", "export", "rename", "be real"])
async def test_letters_read_before_a_click_search_instead_of_acting_on_the_row(
    client: genai.Client, tmp_path: Path, word: str
) -> None:
    """Typed slowly, the first letter moves to the search box and the word is searched;
    the click after it only shows a row. Nothing is deleted, exported or renamed."""
    await seed_session(tmp_path, 2)
    exports = tmp_path / "exports"
    exports.mkdir()
    app = build(tmp_path, client)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot, app)
        await type_raw(pilot, app, CTRL_R)
        screen = app.screen
        assert isinstance(screen, HistoryScreen)
        screen._export_dir = exports  # where an export would land (none may)
        post_read(app, word, screen.sessions)
        await settle(pilot, app)
        assert app.store is not None
        titles = [info.title for info in await app.store.list_sessions()]
        shown = (type(app.screen).__name__, titles, sorted(p.name for p in exports.iterdir()))
        assert shown == ("HistoryScreen", ["question 0"], []), shown
        assert screen.search_box.value == word


async def test_a_key_clicked_on_the_key_bar_acts_before_the_keys_typed_after_it(
    client: genai.Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After a move in the list: Down, a click on the key bar's "/" (Search), then "de", in
    one read. The bar pressed "/" only once its click reached it, after the "d" had reached
    the list, where it asked to delete the session; typed slowly, "de" is searched for."""
    monkeypatch.setattr(KeyOrder, "WORKER_WAIT", 60.0)  # Down's jobs end: a loaded machine too
    await seed_session(tmp_path, 2)
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot, app)
        await type_slowly(pilot, app, [CTRL_R, DOWN, UP])
        screen = app.screen
        assert isinstance(screen, HistoryScreen)
        search, bar = screen.search_box, screen.query_one(KeyBar)
        column = next(x for x in range(bar.size.width) if (k := bar.key_at(x)) and k.key == "slash")
        tokens = [*read(DOWN)]
        arguments = _get_mouse_message_arguments(bar, (column, 0), button=1)
        tokens += [events.MouseDown(**arguments), events.MouseUp(**arguments), *read("de")]
        for token in tokens:
            token.set_sender(app)
            app.post_message(token)
        await settle(pilot, app)
        assert app.screen is screen  # no question asked
        assert search.value == "de" and search.has_focus
