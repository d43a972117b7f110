"""Typing in the history screen searches, and never deletes, renames, forks or exports.

Issue 22's blocker: ctrl+r then "deploy" deleted a conversation (``d`` opened
"Delete …?", the ``y`` later in the word confirmed it). Each English letter
sequence of the hostile lists is typed in one burst, as a terminal delivers
it (every key queued before the app reads the first), from every place a
search begins: the screen just opened, after Escape cleared a search, in the
hits, after Down into the list, in a hit's raw history, and after a move in
the list followed by a search. Nothing in the store may change and no
dialog may open. The real confirmation delay is used (``grace=None``).
"""

from __future__ import annotations

import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from helpers.history_kit import burst
from helpers.ui_kit import settle
from hostile.search_queries import HOSTILE_QUERIES
from hostile.typed_words import TYPED_IN_HISTORY
from test_ui_history import Fixture, HostApp, lines, open_store
from textual import events
from textual.pilot import Pilot
from textual.widgets import Static

from koroku_tui.store import SessionManager
from koroku_tui.ui.history import ConfirmDialog, HistoryScreen
from koroku_tui.ui.history.browser import SessionBrowser
from koroku_tui.ui.history.cursor import CursorList
from koroku_tui.ui.history.lists import SearchResults
from koroku_tui.ui.key_bar import KeyBar

TYPED = [*TYPED_IN_HISTORY] + [
    query for query in HOSTILE_QUERIES if len(query) <= 80 and re.fullmatch(r"[A-Za-z ]+", query)
]


@pytest.fixture
async def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Any]:
    manager, ids = await open_store(tmp_path / "koroku.db", monkeypatch)
    yield manager, ids
    await manager.close()


@pytest.fixture
def short_debounce(monkeypatch: pytest.MonkeyPatch) -> None:
    """A burst is still one search, but hundreds of bursts do not wait a quarter second each."""
    monkeypatch.setattr(SessionBrowser, "SEARCH_DEBOUNCE", 0.01)
    monkeypatch.setattr(HistoryScreen, "BROWSE_DEBOUNCE", 0.01)


def history(app: Any) -> HistoryScreen:
    assert isinstance(app.screen, HistoryScreen), f"{type(app.screen).__name__} is on top"
    return app.screen


async def as_opened(pilot: Pilot[Any], current: int) -> HistoryScreen:
    """The history screen as ctrl+r leaves it: no search, the focus on the list, no move made.

    Set from code between bursts (a fresh screen for each costs seconds of
    drawing, hundreds of times); what follows is typed.
    """
    screen = history(pilot.app)
    screen.search_box.value = ""
    screen.browser.end_search()
    screen.sessions.highlight_session(current)
    screen.sessions.focus()
    await settle(pilot)
    for cursor_list in screen.query(CursorList):
        cursor_list.moved = False
    return screen


async def search_tomato(pilot: Pilot[Any]) -> None:
    await pilot.press("slash")
    burst(pilot.app, "tomato")
    await settle(pilot)


async def just_opened(pilot: Pilot[Any]) -> None:
    """ctrl+r, then straight to typing (the focus is on the session list)."""


async def after_escape(pilot: Pilot[Any]) -> None:
    """A search, then Escape: it clears the search and puts the focus on the list."""
    await search_tomato(pilot)
    await pilot.press("escape")
    await settle(pilot)


async def in_the_hits(pilot: Pilot[Any]) -> None:
    """A search, then Enter: the focus is on the hits."""
    await search_tomato(pilot)
    await pilot.press("enter")
    await settle(pilot)


async def down_into_the_list(pilot: Pilot[Any]) -> None:
    """Down from the (empty) search box: into the session list, no move in it yet."""
    await pilot.press("slash", "down")
    await settle(pilot)


async def in_a_hits_history(pilot: Pilot[Any]) -> None:
    """A search, Enter on the hits, Enter on a hit: the focus is on the raw history at it."""
    await in_the_hits(pilot)
    await pilot.press("enter")
    await settle(pilot)


async def moved_then_searched(pilot: Pilot[Any]) -> None:
    """A move in the list, then a search, then Escape: the move does not count any more."""
    await pilot.press("down", "up")
    await search_tomato(pilot)
    await pilot.press("escape")
    await settle(pilot)


Beginning = Callable[[Pilot[Any]], Awaitable[None]]

SOME = [
    "deploy",
    "a draft I typed yesterday",
    "dy",
    "delete yes",
    "rename",
    "fork",
    "xyzzy",
    "the quick brown fox jumps over the lazy dog",
]
"""For the other beginnings: the issue's words, and every action's letter before a y."""

CASES: list[tuple[Beginning, list[str]]] = [
    (just_opened, TYPED),  # the first way
    (after_escape, TYPED),  # and its second
    (in_the_hits, SOME),
    (down_into_the_list, SOME),
    (in_a_hits_history, SOME),
    (moved_then_searched, SOME),
]


@pytest.mark.parametrize(("begin", "typed"), CASES, ids=[begin.__name__ for begin, _ in CASES])
async def test_no_typed_word_deletes_renames_forks_or_exports_anything(
    begin: Beginning,
    typed: list[str],
    store: tuple[SessionManager, Fixture],
    tmp_path: Path,
    short_debounce: None,
) -> None:
    manager, ids = store
    exports = tmp_path / "exports"
    exports.mkdir()
    listed = [(s.id, s.title, s.message_count) for s in await manager.list_sessions()]
    app = HostApp(manager, ids.kyoto, export_dir=exports, grace=None)
    async with app.run_test(size=(80, 24)) as pilot:  # small: hundreds of bursts to draw
        await settle(pilot)
        for text in typed:
            screen = await as_opened(pilot, ids.kyoto)
            await begin(pilot)
            burst(app, text)
            await settle(pilot)
            screen = history(app)  # no dialog on top, the screen not dismissed
            assert screen.search_box.value.endswith(text.strip()), text  # it was searched for
            assert app.deleted == [] and app.renamed == [] and app.results == [], text
            assert [n for n in app.notices if n[1] == "error"] == [], text
    after = [(s.id, s.title, s.message_count) for s in await manager.list_sessions()]
    assert after == listed  # none deleted, renamed, or added by a fork
    assert await manager.list_trash() == []
    assert list(exports.iterdir()) == []  # nothing exported


# -- the keys that do act, once the user moved ------------------------------------


async def test_letters_act_only_after_a_move_and_the_key_bar_says_so(
    store: tuple[SessionManager, Fixture],
) -> None:
    manager, ids = store
    app = HostApp(manager, ids.kyoto)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        bar = app.screen.query_one(KeyBar)

        def enabled() -> dict[str, bool]:
            return {shown.description: shown.enabled for shown in bar.keys()[0]}

        assert enabled()["Delete"] is False and enabled()["Rename"] is False
        await pilot.press("d")
        await settle(pilot)
        assert history(app).search_box.value == "d" and history(app).search_box.has_focus
        await pilot.press("escape")  # clears the search: back on the list, no move in it yet
        await settle(pilot)
        assert history(app).sessions.has_focus and enabled()["Delete"] is False
        await pilot.press("down")  # a move
        await settle(pilot)
        assert enabled()["Delete"] is True and enabled()["Fork"] is True
        await pilot.press("d")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmDialog)


async def test_an_unbound_letter_on_a_list_the_user_moved_in_starts_a_search(
    store: tuple[SessionManager, Fixture],
) -> None:
    manager, ids = store
    app = HostApp(manager, ids.kyoto)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("down", "t", "o", "m")
        await settle(pilot)
        screen = history(app)
        assert screen.search_box.value == "tom" and screen.browser.searching


# -- the confirmation's first moments ------------------------------------------------


async def test_a_confirmation_ignores_keys_as_it_opens_and_starts_on_cancel(
    store: tuple[SessionManager, Fixture],
) -> None:
    manager, ids = store
    app = HostApp(manager, ids.kyoto, grace=30.0)  # longer than any test run: "too early"
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("down", "up")  # moved: d asks
        typed_before_it_was_drawn = events.Key("y", "y")
        await pilot.press("d")
        await settle(pilot)
        dialog = app.screen
        assert isinstance(dialog, ConfirmDialog)
        assert dialog.focused is not None and dialog.focused.id == "cancel"
        assert dialog.grace.drawn_at is not None
        assert typed_before_it_was_drawn.time < dialog.grace.drawn_at
        app.post_message(typed_before_it_was_drawn)
        await pilot.press("y", "enter", "Y")  # within the quiet time
        await settle(pilot)
        assert dialog.grace.ignored == 4
        assert app.screen is dialog
        notice = " ".join(lines(dialog.query_one("#confirm-ignored", Static)))
        assert "Keys pressed as this dialog opened were ignored" in notice
        await pilot.click("#confirm")  # a click too
        await settle(pilot)
        assert isinstance(dialog, ConfirmDialog) and dialog.grace.ignored == 5
        assert app.screen is dialog
        await pilot.press("escape")  # Escape only ever cancels: it needs no wait
        await settle(pilot)
        assert isinstance(app.screen, HistoryScreen)
    assert await manager.list_trash() == [] and app.deleted == []


async def test_after_the_quiet_time_y_moves_the_session_to_the_trash(
    store: tuple[SessionManager, Fixture],
) -> None:
    manager, ids = store
    app = HostApp(manager, ids.kyoto, grace=None)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("down", "up", "d")
        await settle(pilot)
        dialog = app.screen
        assert isinstance(dialog, ConfirmDialog) and dialog.grace.seconds == 0.6
        assert dialog.grace.drawn_at is not None
        # Waited out on the event's own clock, not by sleeping: a key stamped
        # 0.6 s after the dialog was drawn (and a little: the float sum can
        # round below the edge, depending on the clock's value).
        late = events.Key("y", "y")
        late.time = dialog.grace.drawn_at + dialog.grace.seconds + 0.001
        assert late.time >= time.monotonic() - 60  # a real moment of this run
        app.post_message(late)
        await settle(pilot)
        assert isinstance(app.screen, HistoryScreen)
    assert [s.id for s in await manager.list_trash()] == [ids.kyoto]


async def test_a_delete_with_its_y_typed_in_the_same_burst_only_asks(
    store: tuple[SessionManager, Fixture],
) -> None:
    """After a move, "dy" fast: d asks; the y, typed before the question was drawn, is dropped."""
    manager, ids = store
    app = HostApp(manager, ids.kyoto, grace=0.0)  # no quiet time: only the drop protects
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("down")
        await settle(pilot)
        screen = history(app)
        burst(app, "dyyy")
        await settle(pilot)
        dialog = app.screen
        assert isinstance(dialog, ConfirmDialog)
        assert screen.search_box.value == ""  # the y's went nowhere
        await pilot.press("escape")
        await settle(pilot)
    assert await manager.list_trash() == [] and app.deleted == []


# -- Down into the hits, one Enter (issue 22, item 6) -------------------------------


async def test_down_moves_into_the_hits_and_one_enter_shows_the_hit_under_the_cursor(
    store: tuple[SessionManager, Fixture],
) -> None:
    manager, ids = store
    app = HostApp(manager, ids.kyoto)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("slash", *"tomato")
        await settle(pilot)
        screen = history(app)
        results = screen.query_one(SearchResults)
        assert len(results.hits) >= 3
        await pilot.press("down")  # from the search box into the hits
        await settle(pilot)
        assert results.has_focus and results.highlighted == 0
        # A hit in another session than the first one's: the pane must change.
        index = next(
            i for i, h in enumerate(results.hits) if h.session_id != results.hits[0].session_id
        )
        await pilot.press(*["down"] * index)
        await settle(pilot)
        hit = results.hits[index]
        # The pane follows the cursor: it shows that hit's session, at the hit.
        assert screen.detail.session is not None and screen.detail.session.id == hit.session_id
        view = screen.detail.history
        shown = view.message_at(view.highlighted)
        assert shown is not None and shown.id == hit.message_id
        await pilot.press("enter")  # one Enter
        await settle(pilot)
        assert view.has_focus
        row = view.message_at(view.highlighted)
        assert row is not None and row.id == hit.message_id
