"""The header shows the current session's title, live: first message, rename, switch, ctrl+l."""

from __future__ import annotations

from pathlib import Path

import pytest
from google import genai
from helpers.history_kit import move_to
from helpers.ui_kit import build, send, settle, wait_until
from textual._compositor import Compositor
from textual.geometry import Region
from textual.pilot import Pilot
from textual.widgets import Input
from textual.widgets._header import HeaderTitle

from koroku_tui.fake_gemini import FakeGemini, Hang, text_reply
from koroku_tui.ui.app import KorokuApp
from koroku_tui.ui.history import HistoryScreen, OpenSession
from koroku_tui.ui.history.dialogs import RenameDialog
from koroku_tui.ui.main.screen import MainScreen


def header(app: KorokuApp) -> str:
    """The title the main screen's header draws (before " — model")."""
    main = app.screen_stack[0] if not isinstance(app.screen, MainScreen) else app.screen
    return str(main.query_one(HeaderTitle).render()).split(" — ")[0]


async def test_the_first_message_titles_the_header_while_the_turn_runs(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    fake.add(Hang(), text_reply("Kyoto in spring."))
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        assert header(app) == "New session"
        await send(pilot, app, "Plan my   Kyoto trip")
        # Before any answer: the message is stored, so the session has its title.
        await wait_until(pilot, lambda: header(app) == "Plan my Kyoto trip", "the header title")
        await pilot.press("escape")
        await settle(pilot, app)
        await send(pilot, app, "And Osaka?")
        await settle(pilot, app)
        assert header(app) == "Plan my Kyoto trip"  # the first message names it, not the last


async def test_rename_fork_ctrl_l_and_a_switch_retitle_the_header(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    fake.add(text_reply("Sure."))
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await send(pilot, app, "Plan my Kyoto trip")
        await settle(pilot, app)
        assert header(app) == "Plan my Kyoto trip"
        await rename_current(pilot, app, "Kyoto [b]2027[/b]")
        assert header(app) == "Kyoto [b]2027[/b]"  # literal, never markup
        await pilot.press("escape")
        await settle(pilot, app)
        assert header(app) == "Kyoto [b]2027[/b]"
        assert app.store is not None
        renamed = app.store.session_id
        main = app.screen
        assert isinstance(main, MainScreen)
        main.action_fork()  # the list of your messages; its first row: the whole conversation
        await settle(pilot, app)
        await pilot.press("enter")
        await settle(pilot, app)
        assert app.store.session_id != renamed
        assert header(app) == "Kyoto [b]2027[/b] (fork)"
        await pilot.press("ctrl+l")
        await settle(pilot, app)
        assert header(app) == "New session"
        await pilot.press("ctrl+r")
        await settle(pilot, app)
        assert isinstance(app.screen, HistoryScreen)
        app.screen.dismiss(OpenSession(renamed))
        await settle(pilot, app)
        assert header(app) == "Kyoto [b]2027[/b]"


async def rename_current(pilot: Pilot[None], app: KorokuApp, title: str) -> None:
    """Open the history (ctrl+r), rename the current session there, stay on the history."""
    await pilot.press("ctrl+r")
    await settle(pilot, app)
    screen = app.screen
    assert isinstance(screen, HistoryScreen) and app.store is not None
    # With the keys, as a user does: letters act on a row only after a move.
    await move_to(
        pilot, screen.sessions, screen.sessions.get_option_index(f"session-{app.store.session_id}")
    )
    await settle(pilot, app)
    await pilot.press("r")
    await pilot.pause()
    assert isinstance(app.screen, RenameDialog)
    app.screen.query_one(Input).value = title
    await pilot.press("enter")
    await settle(pilot, app)


async def test_a_new_title_draws_the_header_line_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A session's title arrives during its first turn: the header's line is drawn again, not
    the whole screen (App's own title reactive repainted all of it: ~6 ms of a frame the
    answer waited for, issue 22, item 21)."""
    drawn: list[Region] = []
    partial, full = Compositor.render_partial_update, Compositor.render_full_update

    def partial_update(self: Compositor) -> object:
        drawn.extend(self._dirty_regions)
        return partial(self)

    def full_update(self: Compositor, simplify: bool = False) -> object:
        drawn.append(self.size.region)
        return full(self, simplify)

    monkeypatch.setattr(Compositor, "render_partial_update", partial_update)
    monkeypatch.setattr(Compositor, "render_full_update", full_update)
    app = build(tmp_path, None)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        title_line = app.screen.query_one(HeaderTitle).region
        drawn.clear()
        app.title = "Plan my Kyoto trip"
        await settle(pilot, app)
        assert header(app) == "Plan my Kyoto trip"
        assert any(region.y == title_line.y for region in drawn)
        assert all(region.height == 1 for region in drawn)  # (a prompt's blink is a line too)
        app.sub_title = "gemini-3-pro · offline"
        await settle(pilot, app)
        assert "gemini-3-pro · offline" in str(app.screen.query_one(HeaderTitle).render())
        assert all(region.height == 1 for region in drawn)
