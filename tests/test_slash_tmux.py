"""Slash commands in a real terminal: ``/`` lists them, a custom one is chosen and sent.

The installed command in tmux, its config folder the test's (``XDG_CONFIG_HOME``)
holding ``commands/haiku.md``; what the command sent is read at the fake Gemini.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.project_kit import write
from test_e2e_tmux import COMMAND, Terminal, app_env, pytestmark, said  # noqa: F401
from test_e2e_tmux import terminal as terminal  # the fixture

from koroku_tui.fake_gemini import FakeGemini, text_reply


@pytest.mark.timeout(180)
def test_slash_lists_the_commands_and_a_chosen_custom_command_is_sent(
    terminal: Terminal, fake: FakeGemini, tmp_path: Path
) -> None:
    assert COMMAND is not None, "koroku-tui is not installed in the test environment"
    config = tmp_path / "config"
    write(config / "koroku" / "commands" / "haiku.md", "description: Ask for a haiku\n"
          "Write a haiku about $ARGUMENTS.\n")  # fmt: skip
    env = {**app_env(tmp_path, fake.base_url), "XDG_CONFIG_HOME": str(config)}
    fake.add(text_reply("Ducks drift on the pond.", signature_chunk=True))
    terminal.start([COMMAND], env, tmp_path)
    terminal.wait_for(lambda s: "Quit" in s, "the app to start")
    terminal.type("/")
    terminal.wait_for(lambda s: "/new " in s and "Start a fresh conversation" in s, "the list")
    terminal.type("hai")
    terminal.wait_for(lambda s: "Ask for a haiku" in s and "/new" not in s, "the list filtered")
    terminal.send("Tab")  # it takes arguments: its name goes into the prompt
    terminal.wait_for(lambda s: "Ask for a haiku" not in s, "the list closing")
    terminal.type("ducks")
    terminal.send("Enter")
    terminal.wait_for(lambda s: "Ducks drift on the pond." in s, "the answer")
    terminal.wait_for(lambda s: "esc to cancel" not in s, "the turn to end")
    assert said(fake.generate_requests[-1])[-1] == ("user", "Write a haiku about ducks.\n")
    terminal.type("/qu")
    terminal.wait_for(lambda s: "Close Koroku" in s, "/quit offered")
    terminal.send("Enter")
    terminal.wait_until_closed()
