"""Slash commands in the app (issue 27, section 2): the list ``/`` opens, and what is sent.

The real app under Pilot against the strict fake Gemini; custom commands are
files in the test's own user config folder (``XDG_CONFIG_HOME``, see
``conftest.home_in_tmp``) or in a project's ``.koroku/commands``. What a
command sends is read where it arrives: in the fake's requests.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from google import genai
from helpers.project_kit import write
from helpers.ui_kit import build, plain, settle, wait_until
from textual.pilot import Pilot

from koroku_tui.config.settings import Settings, user_config_dir
from koroku_tui.fake_gemini import FakeGemini, text_reply
from koroku_tui.fake_gemini.recording import RecordedRequest
from koroku_tui.ui.app import KorokuApp
from koroku_tui.ui.main.commands import BUILTIN_COMMANDS
from koroku_tui.ui.main.prompt import Prompt


def user_command(name: str, text: str | bytes) -> Path:
    """A command file in the user config folder's ``commands``."""
    return write(user_config_dir() / "commands" / f"{name}.md", text)


def last_user_text(request: RecordedRequest) -> str:
    """The text of the request's newest user content."""
    users = [c for c in request.contents if c.get("role") == "user"]
    return "".join(str(p.get("text", "")) for p in users[-1].get("parts", []))


def menu_rows(app: KorokuApp) -> list[str]:
    """The rows of the slash list as shown; ``[]`` when it is not on screen."""
    found = app.main.query("#slash-menu")
    if not found or not found.first().display:
        return []
    menu: Any = found.first()
    return [str(menu.get_option_at_index(i).prompt) for i in range(menu.option_count)]


def notices(app: KorokuApp) -> list[str]:
    return [n.message for n in app._notifications]


async def typed(pilot: Pilot[None], text: str) -> None:
    """Type ``text`` key by key into the prompt, as a person does."""
    pilot.app.query_one(Prompt).focus()
    await pilot.press(*text)
    await pilot.pause()


async def sent_as(
    pilot: Pilot[None], app: KorokuApp, fake: FakeGemini, text: str, keys: tuple[str, ...] = ()
) -> str:
    """Type ``text``, press ``keys`` (Enter by default); what reached Gemini as the message."""
    fake.add(text_reply("Done."))
    before = len(fake.generate_requests)
    await typed(pilot, text)
    await pilot.press(*(keys or ("enter",)))
    await wait_until(pilot, lambda: len(fake.generate_requests) > before, "a request")
    await settle(pilot, app)
    return last_user_text(fake.generate_requests[-1])


async def test_slash_lists_every_builtin_with_its_description_and_filters(
    client: genai.Client, tmp_path: Path
) -> None:
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 50)) as pilot:
        await settle(pilot, app)
        await typed(pilot, "/")
        rows = menu_rows(app)
        for command in BUILTIN_COMMANDS:
            assert any(
                row.startswith(f"/{command.name} ") and command.description in row for row in rows
            ), command.name
        for name in ("new", "compact", "history", "rewind", "fork", "model", "mcp", "memory"):
            assert any(row.startswith(f"/{name} ") for row in rows)
        await typed(pilot, "co")
        assert [row.split()[0] for row in menu_rows(app)] == ["/compact", "/copy"]
        await typed(pilot, "x")  # "/cox": nothing matches, the list goes
        assert menu_rows(app) == []
        await pilot.press("backspace", "backspace", "backspace")  # "/": all of them again
        await pilot.pause()
        assert len(menu_rows(app)) == len(BUILTIN_COMMANDS)
        await pilot.press("escape")
        await pilot.pause()
        assert menu_rows(app) == []
        assert app.query_one(Prompt).text == "/"  # Escape closed the list, kept the text


async def test_the_palette_offers_the_same_commands(client: genai.Client, tmp_path: Path) -> None:
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        offered = {(c.title, c.help) for c in app.main.system_commands()}
        assert offered == {(c.title, c.description) for c in BUILTIN_COMMANDS}


async def test_choosing_new_from_the_list_starts_a_new_session(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await sent_as(pilot, app, fake, "hello there")
        assert app.store is not None
        first = app.store.session_id
        await typed(pilot, "/ne")
        await pilot.press("down", "up", "enter")  # moved, back on /new, chosen
        await settle(pilot, app)
        assert app.store.session_id != first
        assert "hello there" not in plain(app.main.query_one("#transcript"))
        assert app.query_one(Prompt).text == ""
        assert menu_rows(app) == []
        assert len(fake.generate_requests) == 1  # nothing was sent


async def test_a_user_command_sends_its_text_with_the_arguments_verbatim(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    user_command("review", "description: Review a file\nPlease review $ARGUMENTS carefully.\n")
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await typed(pilot, "/rev")
        assert any("/review" in r and "Review a file" in r and "user" in r for r in menu_rows(app))
        await pilot.press("tab")  # it takes arguments: the prompt gets its name to go on typing
        await pilot.pause()
        assert app.query_one(Prompt).text == "/review "
        hostile = "$(rm -rf ~) `id` $ARGUMENTS ${HOME} 'q' \"d\""
        got = await sent_as(pilot, app, fake, hostile)
        assert got == f"Please review {hostile} carefully.\n"


async def test_a_trusted_projects_command_is_sent_an_untrusted_ones_is_not_offered(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    workspace = tmp_path / "project"
    write(workspace / ".koroku" / "commands" / "ship.md", "# Ship it\nRun the release steps.\n")
    home = tmp_path / "home"
    home.mkdir()
    for trusted in (False, True):
        settings = Settings(home=home, trusted_folders=[workspace] if trusted else [])
        app = build(tmp_path, client, settings=settings, workspace=workspace)
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot, app)
            await typed(pilot, "/sh")
            await settle(pilot, app)
            rows = menu_rows(app)
            if not trusted:
                assert rows == []
                app.query_one(Prompt).clear()
                continue
            assert any("/ship" in row and "Ship it" in row and "project" in row for row in rows)
            got = await sent_as(pilot, app, fake, "", keys=("enter",))
            assert got == "# Ship it\nRun the release steps.\n"


async def test_a_command_named_as_a_builtin_is_reported_and_the_builtin_runs(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    user_command("new", "not a new session\n")
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        said = [n for n in notices(app) if "new.md" in n]
        assert len(said) == 1 and "/new is a built-in command" in said[0]
        assert app.store is not None
        first = app.store.session_id
        await sent_as(pilot, app, fake, "hi")
        await typed(pilot, "/new")
        await pilot.press("enter")
        await settle(pilot, app)
        assert app.store.session_id != first
        assert len(fake.generate_requests) == 1


async def test_control_characters_in_a_command_file_show_escaped_and_arrive_as_written(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    user_command("evil", "description: fine\x1b]0;owned\x07\u202e text\nbody \x1b[31mred\n")
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await typed(pilot, "/evil")
        (row,) = menu_rows(app)
        assert "\x1b" not in row and "\x07" not in row and "\u202e" not in row
        assert "\\u001b]0;owned\\u0007\\u202e text" in row
        got = await sent_as(pilot, app, fake, "", keys=("enter",))
        assert got == "body \x1b[31mred\n"  # the file's text is what the user wrote


async def test_a_file_too_big_or_not_utf8_is_said_once_and_not_offered(
    client: genai.Client, tmp_path: Path
) -> None:
    user_command("big", "x" * (64 * 1024 + 1))
    user_command("latin", b"caf\xe9\n")
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        said = notices(app)
        assert any("big.md is not used" in n and "64 KB" in n for n in said)
        assert any("latin.md is not used: it is not UTF-8" in n for n in said)
        await typed(pilot, "/")
        await settle(pilot, app)
        assert not any(r.startswith(("/big", "/latin")) for r in menu_rows(app))
        assert len([n for n in notices(app) if "big.md" in n]) == 1  # read again, said once


async def test_an_unknown_slash_word_is_sent_as_written_after_a_notice(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        got = await sent_as(pilot, app, fake, "/usr/bin/env is slow")
        assert got == "/usr/bin/env is slow"
        (said,) = [n for n in notices(app) if "is no command" in n]
        assert "//usr/bin/env" in said and "\n" not in said


async def test_two_slashes_send_one(fake: FakeGemini, client: genai.Client, tmp_path: Path) -> None:
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        assert await sent_as(pilot, app, fake, "//new") == "/new"
        assert not [n for n in notices(app) if "is no command" in n]
        assert app.store is not None and app.store.session_id == 1
