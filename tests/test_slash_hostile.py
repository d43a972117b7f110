"""Slash commands attacked: what a refused command leaves, text given back with a leading
slash, command folders linked out of the project, arguments that multiply, floods of
unusable files, descriptions longer than a line.

The real app under Pilot against the strict fake Gemini (the helpers are
``test_slash_commands``'s); the loader on real files in ``tmp_path``.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from google import genai
from helpers.project_kit import write
from helpers.ui_kit import build, first_frames, plain, settle, wait_until
from test_slash_commands import menu_rows, notices, sent_as, typed, user_command
from test_ui_rewind import open_list

from koroku_tui.agent.context.custom_commands import load_commands
from koroku_tui.config.settings import Settings
from koroku_tui.fake_gemini import FakeGemini, Hang, text_reply
from koroku_tui.ui.history.screen import HistoryScreen
from koroku_tui.ui.main import slash
from koroku_tui.ui.main.prompt import Prompt
from koroku_tui.ui.main.screen import MainScreen


async def test_a_command_that_sends_nothing_keeps_what_was_typed(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    user_command("empty", "description: says nothing\n")
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await typed(pilot, "/empty")
        await pilot.press("enter")
        await settle(pilot, app)
        assert any("/empty sends nothing" in n for n in notices(app))
        assert app.query_one(Prompt).text == "/empty"
        assert fake.generate_requests == []


async def test_a_message_sent_with_a_leading_slash_comes_back_as_typed(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    """``//new`` sends the message ``/new``: given back to the prompt (queue, rewind), Enter
    must send that message again, not start a new session."""
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        assert app.store is not None
        fake.add(Hang(then=text_reply("First answer.")))
        await typed(pilot, "first")
        await pilot.press("enter")
        await wait_until(pilot, lambda: fake.pending == 0, "the request reaching the model")
        await typed(pilot, "//new")
        await pilot.press("enter")
        await pilot.pause()
        assert "Queued: /new" in plain(app.main.query_one("#queued"))
        await pilot.press("up")  # the queued message back in the prompt, to edit
        await pilot.pause()
        assert app.query_one(Prompt).text == "//new"
        await pilot.press("enter", "escape")  # queued again; the turn cancelled
        await settle(pilot, app)
        assert app.query_one(Prompt).text == "//new"
        app.query_one(Prompt).clear()
        assert await sent_as(pilot, app, fake, "//new") == "/new"
        await open_list(pilot, app)
        await pilot.press("enter")  # rewind to before the message "/new"
        await settle(pilot, app)
        assert app.query_one(Prompt).text == "//new"
        assert await sent_as(pilot, app, fake, "", keys=("enter",)) == "/new"
        assert app.store.session_id == 1


async def test_arguments_a_command_multiplies_past_a_window_are_refused_and_kept(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    """A 60 KB file of ``$ARGUMENTS`` times a 700-character paste is 4 MB: one sentence,
    nothing sent, the text still in the prompt (a longer paste would build gigabytes)."""
    user_command("echo", "$ARGUMENTS" * 6000)
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        typed_text = "/echo " + "pasted " * 100
        app.query_one(Prompt).text = typed_text
        await pilot.press("enter")
        await settle(pilot, app)
        (said,) = [n for n in notices(app) if "/echo would send" in n]
        assert "4,194,000 characters" in said and "stays in the prompt" in said
        assert app.query_one(Prompt).text == typed_text
        assert fake.generate_requests == []
        app.query_one(Prompt).clear()
        assert await sent_as(pilot, app, fake, "/echo ab") == "ab" * 6000


async def test_hundreds_of_unusable_files_say_a_few_and_how_many_more(
    client: genai.Client, tmp_path: Path
) -> None:
    for n in range(200):
        user_command(f"bad name {n}", "x\n")
    user_command("fine", "description: still offered\nhello\n")
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        said = [n for n in notices(app) if "command" in n]
        assert len(said) == 4, len(said)
        assert said[-1].startswith("197 more command files are not used")
        await typed(pilot, "/fi")
        assert any("still offered" in row for row in menu_rows(app))


async def test_each_offer_is_one_line_at_80_columns_and_the_prompt_stays_in_sight(
    client: genai.Client, tmp_path: Path
) -> None:
    user_command("long", "description: " + "a very long description " * 40 + "\nbody\n")
    app = build(tmp_path, client)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        await typed(pilot, "/")
        await typed(pilot, "s")  # /stats's description is wider than 80 columns
        menu, prompt = app.main.query_one("#slash-menu"), app.query_one(Prompt)
        assert menu.region.height == len(menu_rows(app)) + 2  # a row a line, and the border
        await pilot.press("backspace", "l", "o", "n")
        await pilot.pause()
        assert menu.region.height == len(menu_rows(app)) + 2 == 3
        assert prompt.region.bottom <= app.size.height - 1  # above the key bar, on screen


async def test_the_list_never_pushes_the_prompt_off_a_short_terminal(
    client: genai.Client, tmp_path: Path
) -> None:
    app = build(tmp_path, client)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        await typed(pilot, "/")
        prompt = app.query_one(Prompt)
        for height in (15, 12):  # made shorter while the list is open
            await pilot.resize_terminal(80, height)
            await pilot.pause()
            assert menu_rows(app)  # still open
            assert prompt.region.height == 3, height  # its line of text in sight
            assert prompt.region.bottom <= height - 1, height  # above the key bar


async def test_escape_closes_the_list_for_that_text_only(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    """Escape on ``/`` closes the list; a later ``/``, after a message, opens it again."""
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await typed(pilot, "/")
        await pilot.press("escape")
        await pilot.pause()
        assert menu_rows(app) == []
        await pilot.press("backspace")
        await sent_as(pilot, app, fake, "a message between")
        await typed(pilot, "/")
        assert menu_rows(app)[0].startswith("/new ")


async def test_no_command_file_is_read_before_the_first_frame(
    monkeypatch: pytest.MonkeyPatch, client: genai.Client, tmp_path: Path
) -> None:
    user_command("mine", "mine\n")
    read_at: list[float] = []

    def timed_load(*args: Any, **kwargs: Any) -> Any:
        read_at.append(time.monotonic())
        return load_commands(*args, **kwargs)

    monkeypatch.setattr(slash, "load_commands", timed_load)
    shown_at = first_frames(monkeypatch)
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        (main,) = [at for screen, at in shown_at.items() if isinstance(screen, MainScreen)]
        assert read_at and min(read_at) > main
        assert "mine" in app.main.slash.custom


async def test_a_click_on_a_command_in_the_list_runs_it(
    client: genai.Client, tmp_path: Path
) -> None:
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await typed(pilot, "/hist")
        assert menu_rows(app)[0].startswith("/history ")
        await pilot.click("#slash-menu", offset=(4, 1))  # on its first row, inside the border
        await settle(pilot, app)
        assert isinstance(app.screen, HistoryScreen)
        assert app.main.query_one(Prompt).text == ""


async def test_text_after_a_command_without_arguments_is_not_dropped(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    user_command("ship", "Run the release steps.\n")
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await typed(pilot, "/ship but skip the changelog")
        await pilot.press("enter")
        await settle(pilot, app)
        (said,) = [n for n in notices(app) if "/ship takes nothing" in n]
        assert "ship.md has no $ARGUMENTS" in said
        assert app.query_one(Prompt).text == "/ship but skip the changelog"
        assert fake.generate_requests == []
        app.query_one(Prompt).clear()
        assert await sent_as(pilot, app, fake, "/ship") == "Run the release steps.\n"


async def test_the_files_are_read_once_a_slash_word_not_at_each_key(
    monkeypatch: pytest.MonkeyPatch, fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    """``/usr/bin/env`` matches no command after ``/u``: the list stays shut, and the up
    to 500 files were read again at each key of it."""
    user_command("mine", "mine\n")
    reads: list[int] = []

    def counted(*args: Any, **kwargs: Any) -> Any:
        reads.append(1)
        return load_commands(*args, **kwargs)

    monkeypatch.setattr(slash, "load_commands", counted)
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        at_start = len(reads)
        await typed(pilot, "/usr/bin/env")
        await settle(pilot, app)
        assert len(reads) == at_start + 1
        app.query_one(Prompt).clear()
        user_command("mint", "mint\n")
        await typed(pilot, "/min")  # a new /word: read again, a file added since shows up
        await settle(pilot, app)
        assert len(reads) == at_start + 2
        assert [row.split()[0] for row in menu_rows(app)] == ["/mine", "/mint"]


async def test_cancel_with_no_turn_says_so_and_is_not_half_a_double_escape(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await sent_as(pilot, app, fake, "hello")
        await typed(pilot, "/cancel")
        await pilot.press("enter", "escape")
        await settle(pilot, app)
        assert app.screen is app.main  # one Escape: no rewind list
        assert "No turn is running." in notices(app)


async def test_a_projects_command_says_so_whatever_its_description(
    client: genai.Client, tmp_path: Path
) -> None:
    """The scope comes before the description: a long one (or one padded to end in
    "· user") cannot push "project" out of the row's one line."""
    workspace = tmp_path / "project"
    fake_scope = "Review it" + " " * 80 + "· user"
    write(workspace / ".koroku" / "commands" / "rev.md", f"description: {fake_scope}\nx\n")
    home = tmp_path / "home"
    home.mkdir()
    settings = Settings(home=home, trusted_folders=[workspace])
    app = build(tmp_path, client, settings=settings, workspace=workspace)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        await typed(pilot, "/rev")
        await settle(pilot, app)
        menu = app.main.query_one("#slash-menu")
        line = menu.render_line(0).text  # its first row, as drawn
        assert line.split()[0] == "/rev" and "project" in line and "user" not in line, line
        app.query_one(Prompt).clear()
        await typed(pilot, "/help")
        await pilot.press("enter")
        await settle(pilot, app)
        listed = plain(app.screen.query_one("#help-commands"))
        assert "/rev              project · Review it" in listed
