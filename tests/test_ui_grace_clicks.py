"""A click made before a dialog was drawn never answers it, however late it is handled.

Textual stamps a click when it handles the button's release (and again as it
hands it to the button), not when the terminal read it. A click the app
handled late (held behind keys typed before it, ``ui.key_order``, or the app
busy drawing a fast answer) looked made after the dialog was drawn: one
pressed where the approval dialog's "Allow once" then showed ran the
command, one pressed where a delete's "Move to the trash" showed moved the
session. The press's own time counts, as a key's does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from google import genai
from helpers.ui_kit import asking_to_run, build, seed_session, settle, type_raw, wait_until
from test_ui_burst import CTRL_R, DOWN, UP
from textual import events
from textual.pilot import Pilot, _get_mouse_message_arguments
from textual.widget import Widget

from koroku_tui.config.settings import Settings
from koroku_tui.fake_gemini import FakeGemini
from koroku_tui.ui.history import ConfirmDialog, HistoryScreen
from koroku_tui.ui.main.approval import ApprovalScreen


async def click_at(pilot: Pilot[Any], widget: Widget, at: float) -> None:
    """A click on ``widget`` pressed and released at ``at`` (``time.monotonic()``), posted to
    the App as the terminal driver posts it (the App makes the ``Click``)."""
    arguments = _get_mouse_message_arguments(widget, (2, 0), button=1)
    for kind in (events.MouseDown, events.MouseUp):
        event = kind(**arguments)
        event.time = at
        event.set_sender(pilot.app)
        pilot.app.post_message(event)
    await pilot.pause()


async def test_a_click_made_before_the_approval_dialog_was_drawn_allows_nothing(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    """No grace (as every test's): only the drop of input made before it was drawn protects."""
    async with asking_to_run(fake, client, tmp_path, "touch PWNED") as (pilot, app, dialog):
        assert dialog.displayed_at is not None
        await click_at(pilot, dialog.query_one("#allow_once"), dialog.displayed_at - 0.3)
        await pilot.pause()  # not settled: the turn waits on the dialog
        assert isinstance(app.screen, ApprovalScreen) and dialog.ignored_keys == 1
        assert not (tmp_path / "PWNED").exists()
        await click_at(pilot, dialog.query_one("#deny"), dialog.displayed_at)  # made once drawn
        await settle(pilot, app)
        assert not isinstance(app.screen, ApprovalScreen)
    assert not (tmp_path / "PWNED").exists()


async def test_a_click_made_before_a_delete_was_asked_deletes_nothing(
    client: genai.Client, tmp_path: Path
) -> None:
    await seed_session(tmp_path, 2)
    app = build(tmp_path, client, settings=Settings(home=tmp_path, approval_grace=0))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot, app)
        await type_raw(pilot, app, f"{CTRL_R}{DOWN}{UP}d")  # a move, then d asks
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmDialog), "the question")
        dialog = app.screen
        assert isinstance(dialog, ConfirmDialog)
        grace = dialog.grace
        await wait_until(pilot, lambda: grace.drawn_at is not None, "the question drawn")
        assert grace.drawn_at is not None
        await click_at(pilot, dialog.query_one("#confirm"), grace.drawn_at - 0.3)
        await settle(pilot, app)
        assert app.screen is dialog and grace.ignored == 1
        await click_at(pilot, dialog.query_one("#cancel"), grace.drawn_at)
        await settle(pilot, app)
        assert isinstance(app.screen, HistoryScreen)
        assert app.store is not None
        assert await app.store.list_trash() == []
        assert [info.title for info in await app.store.list_sessions()] == ["question 0"]
