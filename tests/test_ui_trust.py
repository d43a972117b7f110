"""The trust prompt and the instruction files in the app (issue 24, sections 2 and 3).

The real app under Pilot, in a nested git repository (``helpers.project_kit``),
against the fake Gemini; the answers land in the test's own user config
folder (``XDG_CONFIG_HOME``). A second start reads the answer back as the
config loading hands it to ``Settings``.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest
from google import genai
from helpers.project_kit import Project, nested_project, write
from helpers.ui_kit import (
    build,
    first_frames,
    key_at,
    plain,
    run_command,
    send,
    settle,
    texts,
    wait_until,
)
from textual.pilot import Pilot

from koroku_tui.config.settings import Settings, default_config_file
from koroku_tui.fake_gemini import FakeGemini, text_reply
from koroku_tui.ui.app import KorokuApp
from koroku_tui.ui.key_grace import IGNORED_NOTICE
from koroku_tui.ui.main.blocks import NoticeBlock
from koroku_tui.ui.main.instructions_view import InstructionsView
from koroku_tui.ui.main.screen import MainScreen
from koroku_tui.ui.main.trust_prompt import TrustScreen


def settings_in(tmp_path: Path, **values: Any) -> Settings:
    """The run's settings: a home of its own, the config file's answers in ``values``."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return Settings(home=home, approval_grace=values.pop("approval_grace", 0), **values)


def app_in(project: Project, tmp_path: Path, client: genai.Client, **values: Any) -> KorokuApp:
    return build(
        tmp_path, client, settings=settings_in(tmp_path, **values), workspace=project.workspace
    )


async def trust_prompt(pilot: Pilot[None], app: KorokuApp) -> TrustScreen:
    """The trust prompt, once drawn (before that it ignores keys)."""

    def drawn() -> bool:
        return isinstance(app.screen, TrustScreen) and app.screen.grace.drawn_at is not None

    await wait_until(pilot, drawn, "the trust prompt opening")
    await pilot.pause()
    assert isinstance(app.screen, TrustScreen)
    return app.screen


def saved() -> dict[str, Any]:
    """The user's config.toml as written."""
    return tomllib.loads(default_config_file().read_text())


def told(fake: FakeGemini) -> str:
    text = fake.generate_requests[-1].body["systemInstruction"]["parts"][0]["text"]
    assert isinstance(text, str)
    return text


async def test_trust_lists_the_files_writes_the_config_and_applies_from_the_next_message(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    project = nested_project(tmp_path)
    write(project.root / ".koroku" / "config.toml", 'model = "x"\n')
    write(project.workspace / "AGENTS.md", "APP agents\u202e hidden\n")
    fake.add(text_reply("one"))
    app = app_in(project, tmp_path, client)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        prompt = await trust_prompt(pilot, app)
        shown = plain(prompt)
        assert f"Trust the project files in {project.root}?" in shown
        assert f"{project.root / 'AGENTS.md'} · 16 bytes" in shown
        assert "LIB-ROOT agents" in shown  # its first lines
        assert f"{project.root / '.koroku' / 'config.toml'} · 12 bytes" in shown
        assert "APP agents\\u202e hidden" in shown
        assert "⚠ holds hidden characters (U+202E)" in shown
        assert app.focused is not None and app.focused.id == "not_now"
        await settle(pilot, app)  # the agent started meanwhile, with the personal file only
        await pilot.press("t")
        await settle(pilot, app)
        assert isinstance(app.screen, MainScreen)
        assert saved() == {"trusted_folders": [str(project.root)]}
        assert app.settings.trusted_folders == [project.root]
        await send(pilot, app, "after")
        await settle(pilot, app)
        assert "APP agents\\u202e hidden" in told(fake)
        notices = texts(app, NoticeBlock)
        assert notices[0] == f"Instructions: {project.personal / 'AGENTS.md'}, 25 bytes"
        assert notices[-1].startswith("Instruction files changed. Instructions: ")
        assert str(project.workspace / "AGENTS.md") in notices[-1]
        said = [n.message for n in app._notifications]
        assert any(m.startswith(f"Trusted {project.root}: its instructions apply") for m in said)


async def test_never_is_remembered_and_the_next_start_does_not_ask(
    client: genai.Client, tmp_path: Path
) -> None:
    project = nested_project(tmp_path)
    (project.workspace / "KOROKU.md").symlink_to("/etc/passwd")
    app = app_in(project, tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        prompt = await trust_prompt(pilot, app)
        shown = plain(prompt)
        assert "KOROKU.md · not read: it is a link to /etc/passwd, outside the project" in shown
        assert "root:" not in shown  # the target is never opened
        await pilot.press("x")
        await settle(pilot, app)
    assert saved() == {"ignored_folders": [str(project.root)]}
    again = app_in(project, tmp_path, client, ignored_folders=saved()["ignored_folders"])
    async with again.run_test(size=(120, 40)) as pilot:
        await settle(pilot, again)
        assert isinstance(again.screen, MainScreen)
        assert not again.parts.instruction_files.trusted


async def test_not_now_writes_nothing_and_the_next_start_asks_again(
    client: genai.Client, tmp_path: Path
) -> None:
    project = nested_project(tmp_path)
    for key in ("n", "escape"):
        app = app_in(project, tmp_path, client)
        async with app.run_test(size=(120, 40)) as pilot:
            await trust_prompt(pilot, app)
            await pilot.press(key)
            await settle(pilot, app)
            assert isinstance(app.screen, MainScreen)
            assert not app.parts.instruction_files.trusted
        assert not default_config_file().exists()


async def test_keys_typed_as_the_prompt_opens_are_ignored(
    client: genai.Client, tmp_path: Path
) -> None:
    project = nested_project(tmp_path)
    app = app_in(project, tmp_path, client, approval_grace=10)
    async with app.run_test(size=(120, 40)) as pilot:
        prompt = await trust_prompt(pilot, app)
        await pilot.press("t", "x", "enter")
        await pilot.click("#trust")
        await pilot.pause()
        assert app.screen is prompt
        assert IGNORED_NOTICE in plain(prompt)
        await pilot.press("escape")  # always "not now", at once
        await settle(pilot, app)
        assert isinstance(app.screen, MainScreen)
    assert not default_config_file().exists()


async def test_without_grace_a_key_pressed_once_the_prompt_is_on_the_terminal_counts(
    client: genai.Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a script does (``KOROKU_APPROVAL_GRACE=0``): wait for the prompt, press t."""
    project = nested_project(tmp_path)
    app = app_in(project, tmp_path, client)
    shown_at = first_frames(monkeypatch)
    async with app.run_test(size=(120, 40)) as pilot:
        prompt = await trust_prompt(pilot, app)
        await key_at(pilot, app, "t", shown_at[prompt])
        await settle(pilot, app)
        assert IGNORED_NOTICE not in plain(prompt)
        assert isinstance(app.screen, MainScreen)
    assert saved() == {"trusted_folders": [str(project.root)]}


async def test_a_trusted_folder_is_not_asked_about_and_its_files_are_shown_with_escapes(
    client: genai.Client, tmp_path: Path
) -> None:
    project = nested_project(tmp_path)
    write(project.workspace / "AGENTS.md", "Be kind\u202e\x1b[31m red\n")
    app = app_in(project, tmp_path, client, trusted_folders=[project.outer])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        assert isinstance(app.screen, MainScreen)
        [line] = texts(app, NoticeBlock)
        assert line.startswith(f"Instructions: {project.personal / 'AGENTS.md'}, 25 bytes, ")
        assert line.endswith(f"{project.workspace / 'AGENTS.md'}, 20 bytes")
        await run_command(pilot, app, "show instr", "Show instructions")
        await wait_until(pilot, lambda: isinstance(app.screen, InstructionsView), "the view")
        shown = plain(app.screen)
        assert "PERSONAL standing orders" in shown and "LIB-ROOT koroku" in shown
        assert "Be kind\\u202e\\u001b[31m red" in shown
        assert f"{project.workspace / 'AGENTS.md'} · 20 bytes · project" in shown
        await pilot.press("escape")
        await settle(pilot, app)
        assert isinstance(app.screen, MainScreen)
        await pilot.press("ctrl+l")  # a new session: its model is told the same, said again
        await settle(pilot, app)
        assert texts(app, NoticeBlock) == [line]
