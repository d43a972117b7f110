"""The trust prompt in a real terminal: the installed command started in a cloned repository.

Its home and config folder are the test's (``HOME``, ``XDG_CONFIG_HOME``):
the prompt lists the repository's ``AGENTS.md`` and ``.koroku/config.toml``,
"t" trusts the repository, the answer lands in ``config.toml``, and the next
message carries the file's text to the fake Gemini. Started again, the
command does not ask, and the project's config (its model) applies.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from helpers.project_kit import write
from test_e2e_tmux import COMMAND, Terminal, app_env, pytestmark  # noqa: F401  (same skip rule)
from test_e2e_tmux import terminal as terminal  # the fixture

from koroku_tui.fake_gemini import FakeGemini, text_reply


@pytest.mark.timeout(180)
def test_trusting_a_cloned_repository_in_a_real_terminal_and_starting_again(
    terminal: Terminal, fake: FakeGemini, tmp_path: Path
) -> None:
    assert COMMAND is not None, "koroku-tui is not installed in the test environment"
    repo = tmp_path / "clone"
    (repo / ".git").mkdir(parents=True)
    write(repo / "AGENTS.md", "Answer in haiku.\n")
    write(repo / ".koroku" / "config.toml", 'model = "gemini-from-the-clone"\n')
    env = {
        **app_env(tmp_path, fake.base_url),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "KOROKU_APPROVAL_GRACE": "0",  # the prompt takes keys at once (scripts do this)
        "HOME": str(tmp_path),
    }
    fake.add(text_reply("Five, seven, five."), text_reply("Again five, seven, five."))
    terminal.start([COMMAND], env, repo)
    shown = terminal.wait_for(lambda s: "Trust [t]" in s, "the trust prompt")
    assert "Trust the project files in ~/clone?" in shown
    assert "~/clone/AGENTS.md · 17 bytes" in shown and "Answer in haiku." in shown
    assert "~/clone/.koroku/config.toml · 32 bytes" in shown
    terminal.send("t")
    terminal.wait_for(lambda s: "Trusted ~/clone" in s, "the notice that it is trusted")
    config = tmp_path / "config" / "koroku" / "config.toml"
    assert tomllib.loads(config.read_text()) == {"trusted_folders": [str(repo)]}
    terminal.type("hello")
    terminal.send("Enter")
    terminal.wait_for(lambda s: "Five, seven, five." in s, "the answer")
    system = fake.generate_requests[-1].body["systemInstruction"]["parts"][0]["text"]
    assert f"--- {repo / 'AGENTS.md'} (project) ---\nAnswer in haiku." in system
    assert fake.generate_requests[-1].model != "gemini-from-the-clone"  # at the next start
    terminal.send("C-q")
    terminal.wait_until_closed()

    terminal.start([COMMAND], env, repo)
    # The notice comes once the agent has read the files, after the prompt would have opened.
    shown = terminal.wait_for(
        lambda s: "Instructions: ~/clone/AGENTS.md, 17 bytes" in s, "the instructions notice"
    )
    assert "Trust [t]" not in shown
    terminal.type("hello again")
    terminal.send("Enter")
    terminal.wait_for(lambda s: "Again five, seven, five." in s, "the second answer")
    assert fake.generate_requests[-1].model == "gemini-from-the-clone"
    system = fake.generate_requests[-1].body["systemInstruction"]["parts"][0]["text"]
    assert f"--- {repo / 'AGENTS.md'} (project) ---\nAnswer in haiku." in system
    terminal.send("C-q")
    terminal.wait_until_closed()
