"""The trust prompt's answer, honoured by the next start (issue 24, section 3).

Each start builds its settings as ``koroku-tui`` does, from the config files
(``config.loading``, then ``Settings``), on one home and one user config
folder (``XDG_CONFIG_HOME``, a temporary one): the first start asks and
writes the answer into ``config.toml``; the second reads it back. The app is
the real one under Pilot, against the fake Gemini, whose requests show what
reached it: the project's instructions, and the model its
``.koroku/config.toml`` names.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from google import genai
from helpers.project_kit import Project, nested_project, write
from helpers.ui_kit import build, plain, send, settle, texts
from test_ui_trust import saved, told, trust_prompt

from koroku_tui.config.loading import load_config
from koroku_tui.config.settings import Settings
from koroku_tui.fake_gemini import FakeGemini, text_reply
from koroku_tui.privacy.user_files import read_text_file
from koroku_tui.ui.app import KorokuApp
from koroku_tui.ui.main.blocks import NoticeBlock
from koroku_tui.ui.main.screen import MainScreen

PROJECT_MODEL = "gemini-from-the-project"


@pytest.fixture(autouse=True)
def no_grace(monkeypatch: pytest.MonkeyPatch) -> None:
    """The prompt takes keys at once, as scripts set it (``KOROKU_APPROVAL_GRACE``)."""
    monkeypatch.setenv("KOROKU_APPROVAL_GRACE", "0")


def started(project: Project, tmp_path: Path, client: genai.Client) -> KorokuApp:
    """The app as ``koroku-tui`` starts in the workspace: its settings from the files."""
    loaded = load_config(workspace=project.workspace, read=read_text_file)
    settings = Settings(**loaded.given)
    return build(
        tmp_path,
        client,
        settings=settings,
        workspace=project.workspace,
        notices=tuple(loaded.warnings),
    )


def with_project_config(tmp_path: Path) -> Project:
    project = nested_project(tmp_path)
    write(project.root / ".koroku" / "config.toml", f'model = "{PROJECT_MODEL}"\n')
    return project


async def test_trusted_at_one_start_is_trusted_at_the_next_with_its_config(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    project = with_project_config(tmp_path)
    fake.add(text_reply("first"), text_reply("second"))
    app = started(project, tmp_path, client)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        prompt = await trust_prompt(pilot, app)
        assert "its .koroku/config.toml takes effect at the next start" in plain(prompt)
        await pilot.press("t")
        await settle(pilot, app)
        notice = (
            f"Trusted {project.root}: its instructions apply from your next message; its "
            ".koroku/config.toml takes effect at the next start, not in this one."
        )
        assert notice in [n.message for n in app._notifications]
        await send(pilot, app, "in the first start")
        await settle(pilot, app)
    assert fake.generate_requests[-1].model != PROJECT_MODEL  # not applied live: said so
    assert saved() == {"trusted_folders": [str(project.root)]}

    again = started(project, tmp_path, client)
    assert again.settings.model == PROJECT_MODEL
    async with again.run_test(size=(120, 40)) as pilot:
        await settle(pilot, again)
        assert isinstance(again.screen, MainScreen)  # not asked again
        await send(pilot, again, "in the second start")
        await settle(pilot, again)
        assert texts(again, NoticeBlock)[0].endswith(f"{project.workspace / 'AGENTS.md'}, 11 bytes")
    assert fake.generate_requests[-1].model == PROJECT_MODEL
    assert "APP agents" in told(fake)


async def test_never_is_not_asked_again_and_the_files_stay_unused(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    project = with_project_config(tmp_path)
    app = started(project, tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await trust_prompt(pilot, app)
        await pilot.press("x")
        await settle(pilot, app)
    assert saved() == {"ignored_folders": [str(project.root)]}

    fake.add(text_reply("ok"))
    again = started(project, tmp_path, client)
    assert again.settings.ignored_folders == [project.root]
    async with again.run_test(size=(120, 40)) as pilot:
        await settle(pilot, again)
        assert isinstance(again.screen, MainScreen)
        await send(pilot, again, "hi")
        await settle(pilot, again)
        assert isinstance(again.screen, MainScreen)
    assert fake.generate_requests[-1].model != PROJECT_MODEL
    assert "PERSONAL standing orders" in told(fake) and "APP agents" not in told(fake)


async def test_not_now_asks_again_at_the_next_start(client: genai.Client, tmp_path: Path) -> None:
    project = with_project_config(tmp_path)
    for _ in range(2):
        app = started(project, tmp_path, client)
        async with app.run_test(size=(120, 40)) as pilot:
            await trust_prompt(pilot, app)
            await pilot.press("n")
            await settle(pilot, app)
            assert not app.parts.instruction_files.trusted
        assert app.settings.model != PROJECT_MODEL


async def test_a_project_config_alone_is_asked_about(client: genai.Client, tmp_path: Path) -> None:
    repo = tmp_path / "clone"
    (repo / ".git").mkdir(parents=True)
    write(repo / ".koroku" / "config.toml", '[approval]\nallow_commands = ["curl"]\n')
    project = Project(outer=repo, root=repo, workspace=repo, personal=tmp_path / "none")
    app = started(project, tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        prompt = await trust_prompt(pilot, app)
        shown = plain(prompt)
        assert f"{repo / '.koroku' / 'config.toml'} · 37 bytes" in shown
        assert 'allow_commands = ["curl"]' in shown  # its first lines
        assert "its instructions apply" not in shown  # it has none
        assert "its .koroku/config.toml takes effect at the next start" in shown
        assert "not used, but for the deny and ask rules of a .koroku/config.toml" in shown
        await pilot.press("n")
        await settle(pilot, app)
    assert app.settings.approval.allow_commands == []  # untrusted: not its allow rules
