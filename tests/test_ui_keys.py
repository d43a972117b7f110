"""Keys a user can remap, the command palette, ctrl+q, and the approval modal's picture."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from google import genai
from helpers.ui_kit import (
    build,
    key_bar_line,
    seed_session,
    send,
    settle,
    steady,
    wait_for_approval,
    wait_until,
)
from textual.command import CommandList, CommandPalette
from textual.pilot import Pilot
from textual.widgets import Static

from koroku_tui.agent import CompactionFailed
from koroku_tui.config.settings import Settings
from koroku_tui.fake_gemini import FakeGemini, Hang, Usage, call_reply, text_reply
from koroku_tui.ui.history import HistoryScreen
from koroku_tui.ui.key_bar import KeyBar
from koroku_tui.ui.keymap import load_keymap
from koroku_tui.ui.main import turn_status
from koroku_tui.ui.main.blocks import UserBlock
from koroku_tui.ui.main.gauge import ContextGauge
from koroku_tui.ui.main.messages import AgentCompactionFailed
from koroku_tui.ui.main.prompt import Prompt
from koroku_tui.ui.main.sidebar import ToolSidebar
from koroku_tui.ui.main.transcript import Transcript


async def test_clicking_a_key_on_the_bar_presses_it(client: genai.Client, tmp_path: Path) -> None:
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        sidebar = app.query_one(ToolSidebar)
        assert sidebar.display
        bar = app.screen.query_one(KeyBar)
        await pilot.click(bar, offset=(key_bar_line(app).index("^t Tools") + 1, 0))
        await pilot.pause()
        assert not sidebar.display
        await pilot.click(bar, offset=(key_bar_line(app).index("^p palette"), 0))
        await wait_until(
            pilot, lambda: isinstance(app.screen, CommandPalette), "the palette opened"
        )


async def test_at_80_columns_the_bar_shows_whole_keys_and_quit(
    client: genai.Client, tmp_path: Path
) -> None:
    """The bar was cut mid-word ('^q Q▏^p palette' at 100 columns, no quit at 80): keys
    that do not fit whole are left out from the right, quit's and the palette's stay."""
    await seed_session(tmp_path, turns=20)
    app = build(tmp_path, client)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        line = key_bar_line(app)
        assert line.endswith("▏^p palette "), line
        words = line.replace("▏", " ").split()
        shown = ["esc", "Cancel", "^l", "New", "^o", "Compact", "^r", "History", "^t", "Tools"]
        assert words == [*shown, "^q", "Quit", "^p", "palette"], line
        transcript = app.query_one(Transcript)
        assert transcript.scroll_y == transcript.max_scroll_y > 0  # at the newest message
        await pilot.click(KeyBar, offset=(line.index("^q Quit") + 4, 0))
        await wait_until(pilot, lambda: app.return_code is not None, "quitting from the bar")


@pytest.mark.parametrize("width", [60, 80, 100, 120])
async def test_no_key_is_cut_on_the_main_or_history_screen(
    client: genai.Client, tmp_path: Path, width: int
) -> None:
    app = build(tmp_path, client)
    async with app.run_test(size=(width, 24)) as pilot:
        await settle(pilot, app)
        for screen in ("main", "history"):
            if screen == "history":
                await pilot.press("ctrl+r")
                await wait_until(
                    pilot, lambda: isinstance(app.screen, HistoryScreen), "the history screen"
                )
                await settle(pilot, app)
            bar = app.screen.query_one(KeyBar)
            line, keys = key_bar_line(app), bar.keys()
            assert "^q Quit " in line, (screen, width, line)
            assert line.endswith("▏^p palette "), (screen, width, line)
            drawn = [f" {k.display} {k.description} " for k in keys.left]
            shown = [piece for piece in drawn if piece in line]
            assert shown == drawn[: len(shown)], (screen, width, line)  # whole keys, in order
            assert line.index("^q Quit") > max((line.index(p) for p in shown), default=-1)


async def test_the_key_under_the_pointer_is_highlighted(
    client: genai.Client, tmp_path: Path
) -> None:
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        bar = app.screen.query_one(KeyBar)
        tools, new = key_bar_line(app).index("^t Tools"), key_bar_line(app).index("^l New")
        hover = bar.get_component_rich_style("key-bar--hover").bgcolor

        def lit(column: int) -> bool:
            return bar.render().get_style_at_offset(app.console, column).bgcolor == hover

        await pilot.hover(bar, offset=(tools + 1, 0))
        assert lit(tools + 1) and lit(tools + len("^t Tools")) and not lit(new)
        await pilot.hover(bar, offset=(new, 0))
        assert lit(new) and not lit(tools + 1)


async def test_a_keymap_file_remaps_a_binding_by_its_id(
    client: genai.Client, tmp_path: Path
) -> None:
    (tmp_path / "keymap.toml").write_text('"main.toggle_sidebar" = "f6"\n')
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        sidebar = app.query_one(ToolSidebar)
        assert sidebar.display
        assert "f6 Tools" in key_bar_line(app)  # the bar shows the key that works
        await pilot.press("f6")
        await pilot.pause()
        assert not sidebar.display
        await pilot.press("ctrl+t")  # the default key no longer applies
        await pilot.pause()
        assert not sidebar.display


async def test_a_broken_keymap_file_is_reported_and_defaults_stay(
    client: genai.Client, tmp_path: Path
) -> None:
    (tmp_path / "keymap.toml").write_text("this is = = not toml\n")
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        assert any("keymap.toml was not used" in str(n.message) for n in app._notifications)
        await pilot.press("ctrl+t")
        await pilot.pause()
        assert not app.query_one(ToolSidebar).display


def test_keymap_values_must_be_text(tmp_path: Path) -> None:
    path = tmp_path / "keymap.toml"
    path.write_text('"main.compact" = "ctrl+k"\n"main.history" = 3\n')
    keymap = load_keymap(path)
    assert keymap.keys == {"main.compact": "ctrl+k"}
    assert keymap.problem is not None and "main.history" in keymap.problem
    assert load_keymap(tmp_path / "missing.toml").keys == {}


async def until(pilot: Pilot[None], condition: Callable[[], bool]) -> None:
    """Let the app run until ``condition`` holds (the palette searches in a worker)."""
    for _ in range(500):
        if condition():
            return
        await pilot.pause(0.02)
    raise AssertionError("the condition never held")


async def test_the_command_palette_finds_and_runs_koroku_actions(
    client: genai.Client, tmp_path: Path
) -> None:
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await settle(pilot, app)
        await pilot.press("ctrl+p")
        await until(pilot, lambda: isinstance(app.screen, CommandPalette))
        await pilot.press(*"comp")
        results = app.screen.query_one(CommandList)

        def offered() -> list[str]:
            options = [results.get_option_at_index(i) for i in range(results.option_count)]
            return [str(option.prompt) for option in options]

        await until(pilot, lambda: any("Compact now" in title for title in offered()))
        assert "Compact now" in offered()[results.highlighted or 0]
        await pilot.press("enter")
        # The palette ran the main screen's compact action: an empty session
        # has nothing to summarise, and says so.
        await until(pilot, lambda: not isinstance(app.screen, CommandPalette))
        await settle(pilot, app)
        await until(
            pilot, lambda: any("Nothing to summarise" in n.message for n in app._notifications)
        )


async def test_ctrl_q_quits_even_from_the_prompt(client: genai.Client, tmp_path: Path) -> None:
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        assert app.focused is app.query_one(Prompt)
        await pilot.press("ctrl+q")
        await pilot.pause()
    assert app.return_code == 0


@pytest.mark.parametrize("mid_turn", [True, False])
async def test_closing_as_a_turn_runs_or_ends_is_clean(
    fake: FakeGemini, client: genai.Client, tmp_path: Path, mid_turn: bool
) -> None:
    """The app shuts down (as on ctrl+q, or the terminal closing) with turn messages in flight.

    They reach the app after its widgets are gone; handling them must not raise.
    """
    fake.add(Hang() if mid_turn else text_reply("Done."))
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await send(pilot, app, "hello")
        if mid_turn:
            await wait_until(pilot, lambda: fake.pending == 0, "the request reaching the model")
            assert app.running
        else:
            await app.workers.wait_for_complete()  # TurnFinished is queued, not yet handled
    # Leaving run_test shuts the app down; it re-raises what a handler raised meanwhile.
    with closing(sqlite3.connect(Settings(home=tmp_path).database_path)) as db:
        stored = [row[0] for row in db.execute("SELECT event_json FROM messages")]
    assert any('"hello"' in event for event in stored)  # the message survived


def test_snapshot_approval_modal(
    fake: FakeGemini,
    snapshot_home: Path,
    snap_compare: Any,
    fake_in_env: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(turn_status, "clock", lambda: 1000.0)  # the status line's seconds
    monkeypatch.setenv("HOME", str(Path.cwd()))  # the working directory reads "~"
    fake.add(
        call_reply(
            ("run_command", {"command": "rm -rf build/ && make [bold]all[/]"}),
            usage=Usage(prompt_tokens=1200, candidates_tokens=20),
        ),
        text_reply("Done."),
    )
    # The app builds (and closes) its own client from the environment here:
    # snap_compare runs the app on an event loop of its own.
    app = build(snapshot_home, None)

    async def run_before(pilot: Pilot[None]) -> None:
        await settle(pilot, app)
        app.query_one(Prompt).cursor_blink = False
        app.query_one(Prompt).text = "rebuild please"
        await pilot.press("enter")
        await wait_for_approval(pilot, app)
        await steady(pilot)
        # What the modal says is shown literally, markup and all.
        shown = "\n".join(str(s.render()) for s in app.screen.query(Static))
        assert "[bold]all[/]" in shown

    assert snap_compare(app, terminal_size=(120, 40), run_before=run_before)


async def test_the_gauge_follows_a_new_session(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    fake.add(text_reply("Long answer.", usage=Usage(prompt_tokens=600_000)))
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await send(pilot, app, "hello")
        await app.workers.wait_for_complete()
        await pilot.pause()
        gauge = app.query_one(ContextGauge)
        before = str(gauge.render())
        assert "· 600,0" in before and "~" not in before
        await pilot.press("ctrl+l")
        await app.workers.wait_for_complete()
        await pilot.pause()
        shown = str(gauge.render())
        assert "· 600,0" not in shown and "· ~" in shown  # a fresh, estimated context


async def test_notifications_show_server_text_literally(
    client: genai.Client, tmp_path: Path
) -> None:
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await settle(pilot, app)
        hostile = "Compaction failed (400 bad [/] x [bold red]RED[/] [@click=app.quit]q[/])."
        app.main.post_message(AgentCompactionFailed(CompactionFailed(hostile)))
        # The toast renders: unbalanced markup must not crash it.
        await wait_until(pilot, lambda: bool(app.query("Toast")), "the toast showing")
        await pilot.pause()
        (note,) = [n for n in app._notifications if "Compaction failed" in n.message]
        assert note.message == hostile and not note.markup
        assert app.is_running


async def test_escape_does_not_cut_a_session_switch_in_half(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    fake.add(text_reply("First answer."))
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await send(pilot, app, "first")
        await app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("ctrl+l", "escape")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.store is not None
        assert app.store.session_id == 2
        assert not list(app.query(UserBlock))  # the screen shows the new, empty session


async def test_main_keys_do_nothing_under_the_history_screen_but_quit_works(
    client: genai.Client, tmp_path: Path
) -> None:
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await pilot.press("ctrl+r")
        await until(pilot, lambda: isinstance(app.screen, HistoryScreen))
        history = app.screen
        assert app.store is not None
        current = app.store.session_id
        await pilot.press("ctrl+t", "ctrl+l", "ctrl+r")  # the main screen's keys
        await settle(pilot, app)
        assert app.screen is history and len(app.screen_stack) == 2  # no second history
        assert app.query_one(ToolSidebar).display  # still shown
        assert app.store.session_id == current  # no new session
        await pilot.press("ctrl+q")
        await pilot.pause()
    assert app.return_code == 0


async def test_ctrl_c_says_how_to_quit_in_plain_words(client: genai.Client, tmp_path: Path) -> None:
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await settle(pilot, app)
        assert app.focused is app.query_one(Prompt)  # where a user is when pressing it
        await pilot.press("ctrl+c")
        await wait_until(pilot, lambda: bool(app.query("Toast")), "the toast showing")
        [note] = [n for n in app._notifications if "quit" in n.message]
        assert note.message == "Press ctrl+q to quit."
        toast = str(app.query_one("Toast").render())
        assert "Press ctrl+q to quit." in toast and "[b]" not in toast
