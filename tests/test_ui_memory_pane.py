"""The history screen's memory pane (ctrl+y): list, source, accept, edit, delete, add.

The history screen against a real SessionManager on a temporary SQLite file
(the fixture of ``test_ui_history``: three sessions, a fixed clock), with
memories kept from those conversations and one added by hand.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from helpers.history_kit import move_to
from helpers.ui_kit import settle
from test_ui_history import Fixture, HostApp, lines, open_store
from textual import events
from textual.pilot import Pilot
from textual.widgets import Input, Static

from koroku_tui.store import SessionManager
from koroku_tui.ui.history import ConfirmDialog, HistoryScreen, OpenSession
from koroku_tui.ui.history.dialogs import MemoryDialog
from koroku_tui.ui.key_bar import KeyBar


@dataclass
class Memories:
    ids: Fixture
    garden: int
    """Kept from the garden session, at its first message."""
    cat: int
    """Suggested at the garden session's compaction."""
    hand: int
    """Added by hand."""


@pytest.fixture
async def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Any]:
    manager, ids = await open_store(tmp_path / "koroku.db", monkeypatch)
    garden = await manager.add_memory("The user grows tomatoes.", ids.garden, ids.hidden_id)
    await manager.switch_session(ids.garden)  # suggestions come from the current session
    [cat] = await manager.suggest_memories(["The user has a cat."], ids.compaction_id)
    await manager.switch_session(ids.kyoto)
    hand = await manager.add_memory("The user likes \x1b[31mred\x1b[0m tea\u202e.")
    yield manager, Memories(ids, garden.id, cat.id, hand.id)
    await manager.close()


def history(app: Any) -> HistoryScreen:
    assert isinstance(app.screen, HistoryScreen), f"{type(app.screen).__name__} is on top"
    return app.screen


def keys_shown(app: Any) -> list[str]:
    return [f"{s.display} {s.description}" for s in history(app).query_one(KeyBar).keys()[0]]


async def open_pane(pilot: Pilot[Any]) -> HistoryScreen:
    await settle(pilot)
    await pilot.press("ctrl+y")
    await settle(pilot)
    screen = history(pilot.app)
    assert screen.showing_memories and screen.memory_list.has_focus
    return screen


@asynccontextmanager
async def pane_open(
    manager: SessionManager, memories: Memories
) -> AsyncIterator[tuple[HostApp, Pilot[Any], HistoryScreen]]:
    """The history screen of a host app on ``manager``, its memory pane open."""
    app = HostApp(manager, memories.ids.kyoto)
    async with app.run_test(size=(120, 40)) as pilot:
        yield app, pilot, await open_pane(pilot)


def status(screen: HistoryScreen) -> str:
    return lines(screen.query_one("#history-status", Static))[0]


async def test_the_pane_lists_memories_and_suggestions_newest_first_with_their_source(
    store: tuple[SessionManager, Memories],
) -> None:
    manager, memories = store
    async with pane_open(manager, memories) as (app, pilot, screen):
        listed = screen.memory_list.memories
        assert [m.id for m in listed] == [memories.hand, memories.cat, memories.garden]
        shown = lines(screen.memory_list)
        # Hidden characters as escapes, never raw (the line is cut at the pane's edge).
        assert shown[0].startswith(f"▶   {memories.hand} The user likes \\u001b[31mred\\u001b[0m")
        assert shown[1].startswith("    memory · added by hand")
        assert shown[2] == f"  ? {memories.cat} The user has a cat."
        assert shown[3].startswith("    suggested · from “How should I plan the")
        assert shown[4] == f"    {memories.garden} The user grows tomatoes."
        assert shown[5].startswith("    memory · from “How should I plan the")
        assert not any("\x1b" in line or "\u202e" in line for line in shown)
        assert status(screen) == "2 memories, 1 suggested"
        assert keys_shown(app)[:4] == ["esc Back", "⏎ Open source", "/ Search", "^y Memories"]
        assert "d Delete" in keys_shown(app) and "^n Add" in keys_shown(app)
        # The right pane follows the cursor to the memory's conversation, at its message.
        await move_to(pilot, screen.memory_list, 2)
        await settle(pilot)
        assert screen.detail.session is not None
        assert screen.detail.session.id == memories.ids.garden
        view = screen.detail.history
        message = view.message_at(view.highlighted)
        assert message is not None and message.id == memories.ids.hidden_id
        await pilot.press("enter")
        await settle(pilot)
    assert app.results == [OpenSession(memories.ids.garden, message_id=memories.ids.hidden_id)]


async def test_letters_typed_in_the_pane_search_until_the_user_moves(
    store: tuple[SessionManager, Memories],
) -> None:
    manager, memories = store
    async with pane_open(manager, memories) as (app, pilot, screen):
        await pilot.press("d", "a")
        await settle(pilot)
        assert screen.search_box.value == "da"
        assert not isinstance(app.screen, ConfirmDialog)
        assert len(await manager.list_memories()) == 3  # nothing deleted, nothing accepted
        await pilot.press("escape")  # clears the search: back to the sessions
        await settle(pilot)
        assert not screen.showing_memories


async def test_accept_edit_and_add_change_the_store(
    store: tuple[SessionManager, Memories],
) -> None:
    manager, memories = store
    async with pane_open(manager, memories) as (app, pilot, screen):
        await move_to(pilot, screen.memory_list, 1)
        await pilot.press("a")
        await settle(pilot)
        assert (await manager.get_memory(memories.cat)).state == "memory"
        assert lines(screen.memory_list)[2] == f"▶   {memories.cat} The user has a cat."
        assert status(screen) == "3 memories"

        await move_to(pilot, screen.memory_list, 1)
        await pilot.press("e")
        await settle(pilot)
        dialog = app.screen
        assert isinstance(dialog, MemoryDialog)
        field = dialog.query_one(Input)
        assert field.value == "The user has a cat."
        field.value = "The user has two cats."
        await pilot.press("enter")
        await settle(pilot)
        assert (await manager.get_memory(memories.cat)).text == "The user has two cats."

        await pilot.press("ctrl+n")
        await settle(pilot)
        assert isinstance(app.screen, MemoryDialog)
        app.screen.query_one(Input).value = "The user lives in Lyon."
        await pilot.press("enter")
        await settle(pilot)
        newest = (await manager.list_memories())[0]
        assert (newest.text, newest.session_id) == ("The user lives in Lyon.", None)
        assert screen.memory_list.highlighted_memory == newest
        assert app.notices[-1][0].startswith(f"Remembered as memory {newest.id}")

        await pilot.press("ctrl+n")
        await settle(pilot)
        app.screen.query_one(Input).value = "   "
        await pilot.press("enter")
        await settle(pilot)
        assert app.notices[-1] == ("A memory needs some text: say the fact to keep.", "error")


async def test_an_edit_keeps_the_hidden_characters_it_showed_as_escapes(
    store: tuple[SessionManager, Memories],
) -> None:
    """The dialog shows ESC, U+202E or a Persian zero-width non-joiner as ``\\u…``: an Enter
    with nothing typed saved those escapes as text (and the lines joined), and an edit of
    another word did too; each escape is the character again, and an Enter changes nothing."""
    manager, memories = store
    persian = await manager.add_memory(
        "The user signs as \u0645\u0647\u200c\u0646\u0627\u0632.\nKeep it."
    )
    hand = (await manager.get_memory(memories.hand)).text
    async with pane_open(manager, memories) as (app, pilot, screen):
        for row, typed in ((0, ""), (1, " Oolong, mostly.")):
            await move_to(pilot, screen.memory_list, row)
            await pilot.press("e")
            await settle(pilot)
            assert isinstance(app.screen, MemoryDialog)
            field = app.screen.query_one(Input)
            assert "\\u200c" in field.value or "\\u202e" in field.value  # shown, escaped
            field.value += typed
            await pilot.press("enter")
            await settle(pilot)
    assert (await manager.get_memory(persian.id)).text == persian.text
    assert (await manager.get_memory(memories.hand)).text == hand + " Oolong, mostly."


async def test_delete_asks_first_starting_on_cancel_and_ignoring_its_first_moments(
    store: tuple[SessionManager, Memories],
) -> None:
    manager, memories = store
    app = HostApp(manager, memories.ids.kyoto, grace=None)  # the real quiet time
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_pane(pilot)
        await move_to(pilot, screen.memory_list, 2)
        await pilot.press("d", "y")  # "y" typed on as the dialog opens: ignored
        await settle(pilot)
        dialog = app.screen
        assert isinstance(dialog, ConfirmDialog)
        assert dialog.focused is not None and dialog.focused.id == "cancel"
        assert len(await manager.list_memories()) == 3
        question = " ".join(line.strip() for line in lines(dialog.query(Static).first()))
        assert f"Delete memory {memories.garden}" in question
        assert "the conversation it came from stays" in question
        # A "y" stamped after its quiet time (the event's own clock, not a sleep).
        late = events.Key("y", "y")
        late.time = time.monotonic() + dialog.grace.seconds + 0.001
        app.post_message(late)
        await settle(pilot)
        assert isinstance(app.screen, HistoryScreen)
        assert [m.id for m in await manager.list_memories()] == [memories.hand, memories.cat]
        assert app.notices[-1][0].startswith(f"Deleted memory {memories.garden}")
        # The conversation stays.
        assert (await manager.get_session(memories.ids.garden)).message_count == 7


async def test_the_pane_lists_every_memory_however_many(
    store: tuple[SessionManager, Memories],
) -> None:
    manager, memories = store
    for n in range(600):
        await manager.add_memory(f"The user's fact number {n}.")
    async with pane_open(manager, memories) as (_, _, screen):
        assert status(screen) == "602 memories, 1 suggested"
        listed = screen.memory_list.memories
        assert len(listed) == 603
        assert listed[-1].id == memories.garden  # the oldest, there to delete too
