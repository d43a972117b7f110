"""Slash commands beside the rest of the prompt: screens they open, paste, queue, type-ahead.

The real app under Pilot against the strict fake Gemini (``test_slash_commands``
has the list and the custom commands' files).
"""

from __future__ import annotations

from pathlib import Path

from google import genai
from helpers.project_kit import write
from helpers.ui_kit import build, plain, settle, wait_until
from test_slash_commands import last_user_text, menu_rows, notices, sent_as, typed, user_command
from textual import events

from koroku_tui.config.settings import Settings
from koroku_tui.fake_gemini import FakeGemini, Hang, text_reply
from koroku_tui.ui.history.screen import HistoryScreen
from koroku_tui.ui.main.commands import BUILTIN_COMMANDS
from koroku_tui.ui.main.help_view import HelpView
from koroku_tui.ui.main.prompt import Prompt


async def test_memory_opens_the_history_on_its_memory_pane(
    client: genai.Client, tmp_path: Path
) -> None:
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await typed(pilot, "/memory")
        await pilot.press("enter")
        await settle(pilot, app)
        screen = app.screen
        assert isinstance(screen, HistoryScreen)
        assert screen.showing_memories and screen.memory_list.has_focus


async def test_help_lists_the_keys_and_every_command(client: genai.Client, tmp_path: Path) -> None:
    user_command("standup", "description: Draft my stand-up note\nDraft it.\n")
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 60)) as pilot:
        await settle(pilot, app)
        await typed(pilot, "/help")
        await pilot.press("enter")
        await settle(pilot, app)
        assert isinstance(app.screen, HelpView)
        keys = plain(app.screen.query_one("#help-keys"))
        assert "^l" in keys and "New" in keys and "^g" in keys and "Rewind" in keys
        commands = plain(app.screen.query_one("#help-commands"))
        for command in BUILTIN_COMMANDS:
            assert f"/{command.name}" in commands and command.description in commands
        assert "/standup" in commands and "Draft my stand-up note" in commands
        await pilot.press("escape")
        await settle(pilot, app)
        assert not isinstance(app.screen, HelpView)


async def test_a_pasted_command_runs_nothing_until_enter(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        assert app.store is not None
        prompt = app.query_one(Prompt)
        prompt.focus()
        app.post_message(events.Paste("/new\n"))  # with its line break, as a terminal pastes it
        await settle(pilot, app)
        assert prompt.text == "/new\n" and app.store.session_id == 1
        assert menu_rows(app) == []  # two lines: a message, not a command being typed
        prompt.clear()
        app.post_message(events.Paste("/quit"))
        await settle(pilot, app)
        assert app.is_running and prompt.text == "/quit"
        assert fake.generate_requests == []


async def test_a_command_typed_in_one_burst_with_its_enter_runs_that_command(
    client: genai.Client, tmp_path: Path
) -> None:
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        assert app.store is not None
        await typed(pilot, "/")
        assert menu_rows(app)[0].startswith("/new ")
        # The rest queued at once, as a fast typist's keys reach the app: the
        # list has not filtered yet when the Enter comes (its first row: /new).
        for key in [*"history", "enter"]:
            app.post_message(events.Key(key, key if len(key) == 1 else None))
        await settle(pilot, app)
        assert isinstance(app.screen, HistoryScreen)  # /history, not the list's first row
        assert app.store.session_id == 1
        assert app.main.query_one(Prompt).text == ""


async def test_a_custom_command_sent_during_a_turn_is_queued_with_its_text(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    user_command("more", "Tell me more about $ARGUMENTS.\n")
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        fake.add(Hang(then=text_reply("First answer.")))
        await typed(pilot, "first")
        await pilot.press("enter")
        await wait_until(pilot, lambda: fake.pending == 0, "the request reaching the model")
        fake.add(text_reply("More."))
        await typed(pilot, "/more ducks")
        await pilot.press("enter")
        await pilot.pause()
        assert "Tell me more about ducks." in plain(app.main.query_one("#queued"))
        fake.release()
        await wait_until(pilot, lambda: len(fake.generate_requests) == 2, "the queue sent")
        await settle(pilot, app)
        assert last_user_text(fake.generate_requests[1]) == "Tell me more about ducks.\n"


async def test_text_after_a_builtin_runs_nothing_and_stays(
    client: genai.Client, tmp_path: Path
) -> None:
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await typed(pilot, "/new please")
        await pilot.press("enter")
        await settle(pilot, app)
        assert app.query_one(Prompt).text == "/new please"
        assert any("/new takes nothing after its name" in n for n in notices(app))
        assert app.store is not None and app.store.session_id == 1


async def test_a_users_command_wins_over_the_projects_and_that_is_said(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    workspace = tmp_path / "project"
    write(workspace / ".koroku" / "commands" / "plan.md", "the project's plan\n")
    user_command("plan", "my own plan\n")
    home = tmp_path / "home"
    home.mkdir()
    settings = Settings(home=home, trusted_folders=[workspace])
    app = build(tmp_path, client, settings=settings, workspace=workspace)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        (said,) = [n for n in notices(app) if "plan.md" in n]
        assert "project/.koroku/commands/plan.md is not used" in said and "your own" in said
        assert await sent_as(pilot, app, fake, "/plan") == "my own plan\n"


async def test_every_builtin_runs_from_the_prompt(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    """Each row of the table, typed whole: it runs (a screen opens, or a notice, or
    nothing to see), never an error; ``/quit`` is the tmux test's."""
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await sent_as(pilot, app, fake, "hello")
        fake.add(text_reply("A summary."))  # /compact may ask for one
        for command in BUILTIN_COMMANDS:
            if command.name == "quit":
                continue
            await typed(pilot, f"/{command.name}")
            await pilot.press("enter")
            await settle(pilot, app)
            while app.screen is not app.main:  # a screen it opened
                await pilot.press("escape")
                await settle(pilot, app)
            assert app.main.query_one(Prompt).text == "", command.name
            assert app.is_running, command.name
