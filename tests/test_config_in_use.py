"""What the config file sets reaches the run: the model Gemini is asked for, the app's
notices and keys, the seed's ``Agent()``; in a real terminal too."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from google import genai
from helpers.config_kit import Desk
from helpers.processes import KOROKU, koroku_env
from helpers.ui_kit import build, settle
from test_e2e_tmux import COMMAND, TMUX, Terminal

from koroku_tui import Agent
from koroku_tui.agent import AgentError
from koroku_tui.config.settings import Settings
from koroku_tui.fake_gemini import FakeGemini, text_reply
from koroku_tui.ui.main.sidebar import ToolSidebar

UNKNOWN = (
    "~/.config/koroku/config.toml:2: `stall_timout` is not a known key "
    "(did you mean `stall_timeout`?); it was ignored."
)


def print_turn(fake: FakeGemini, desk: Desk, *args: str) -> subprocess.CompletedProcess[str]:
    assert KOROKU is not None
    env = koroku_env(fake, desk.koroku_home)
    return subprocess.run(
        [KOROKU, *args, "--print", "hi"], env=env, capture_output=True, text=True, timeout=60
    )


def test_the_files_model_is_the_one_gemini_is_asked_for_and_the_flag_is_over_it(
    fake: FakeGemini, desk: Desk
) -> None:
    desk.user('model = "gemini-from-config"\nstall_timout = 5\n')
    fake.add(text_reply("Hi."), text_reply("Hi again."))
    done = print_turn(fake, desk)
    assert (done.returncode, done.stdout) == (0, "Hi.\n")
    assert done.stderr == f"koroku-tui: {UNKNOWN}\n"  # --print says the file's warnings
    assert fake.generate_requests[-1].model == "gemini-from-config"
    assert print_turn(fake, desk, "--model", "gemini-from-flag").returncode == 0
    assert fake.generate_requests[-1].model == "gemini-from-flag"


async def test_the_app_shows_the_warnings_and_takes_the_keys(
    client: genai.Client, tmp_path: Path
) -> None:
    settings = Settings(home=tmp_path, keys={"main.toggle_sidebar": "f6", "main.nope": "f9"})
    app = build(tmp_path, client, settings=settings, notices=(UNKNOWN,))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        notices = [str(notice.message) for notice in app._notifications]
        assert UNKNOWN in notices
        assert "[keys] in config.toml: 'main.nope' is not a binding id; it was ignored." in notices
        sidebar = app.query_one(ToolSidebar)
        shown = sidebar.display
        await pilot.press("f6")
        await pilot.pause()
        assert sidebar.display is not shown


async def test_keymap_toml_wins_over_the_files_keys(client: genai.Client, tmp_path: Path) -> None:
    (tmp_path / "keymap.toml").write_text('"main.toggle_sidebar" = "f7"\n')
    settings = Settings(home=tmp_path, keys={"main.toggle_sidebar": "f6"})
    app = build(tmp_path, client, settings=settings)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        sidebar = app.query_one(ToolSidebar)
        shown = sidebar.display
        await pilot.press("f6")
        await pilot.pause()
        assert sidebar.display is shown
        await pilot.press("f7")
        await pilot.pause()
        assert sidebar.display is not shown


@pytest.mark.usefixtures("fake_in_env")
def test_the_seeds_agent_reads_the_file_and_refuses_a_bad_one(desk: Desk) -> None:
    desk.user('model = "gemini-seed-config"\n')
    assert Agent(context=[]).model == "gemini-seed-config"
    assert Agent("named-in-code", context=[]).model == "named-in-code"
    desk.user("[compaction]\nat = 2\n")
    with pytest.raises(AgentError) as refused:
        Agent(context=[])
    assert refused.value.user_message.startswith("compaction.at on line 2 of ")


@pytest.mark.skipif(TMUX is None and not os.environ.get("CI"), reason="tmux is not installed")
@pytest.mark.timeout(120)
def test_a_real_terminal_shows_the_files_model_and_its_warning(
    fake: FakeGemini, desk: Desk
) -> None:
    assert COMMAND is not None
    desk.user('model = "gemini-from-config"\nstall_timout = 5\n')
    terminal = Terminal()
    try:
        terminal.start([COMMAND], koroku_env(fake, desk.koroku_home), desk.workspace)
        screen = terminal.wait_for(lambda s: "did you mean" in s, "the config file's warning")
        assert "gemini-from-config" in screen  # the title names the model
        terminal.send("C-q")
        terminal.wait_until_closed()
    finally:
        terminal.kill()
