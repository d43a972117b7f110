"""Rewind with files as a person does it: the installed app in a real terminal (tmux).

A ``--print --yes`` turn writes a file; in the app, ctrl+g and Enter
rewind to before it, the files question appears, ``f`` puts the file back.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.rewind_kit import koroku, writes
from test_e2e_tmux import COMMAND, Terminal, app_env, terminal

from koroku_tui.fake_gemini import FakeGemini

__all__ = ["terminal"]  # the fixture, shared with the other tmux tests


def opens_the_list(terminal: Terminal, screen: str) -> bool:
    """ctrl+g (Escape twice has its own tmux test) unless the list is open already."""
    if "Rewind:" in screen:
        return True
    terminal.send("C-g")
    return False


@pytest.mark.timeout(180)
def test_rewind_with_files_in_a_real_terminal(
    terminal: Terminal, fake: FakeGemini, tmp_path: Path
) -> None:
    assert COMMAND is not None, "koroku-tui is not installed in the test environment"
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "plan.md").write_text("first plan\n")
    writes(fake, ("plan.md", "second plan\n"), answer="Rewritten.")
    done = koroku(fake, tmp_path, "--yes", "--print", "rewrite the plan")
    assert done.returncode == 0, done.stderr
    assert (workspace / "plan.md").read_text() == "second plan\n"

    terminal.start([COMMAND], app_env(tmp_path, fake.base_url), workspace)
    # Until the agent is up, the rewind key says "still starting": ask until the list opens.
    terminal.wait_for(lambda s: "Rewritten." in s, "the conversation replayed")
    terminal.wait_for(lambda s: opens_the_list(terminal, s), "the rewind list")
    terminal.send("Enter")
    asked = terminal.wait_for(lambda s: "Conversation and files" in s, "the files question")
    assert "plan.md" in asked
    terminal.send("f")
    terminal.wait_for(lambda s: "1 file put back" in s, "the files put back")
    assert (workspace / "plan.md").read_text() == "first plan\n"
    terminal.send("C-q")
    terminal.wait_until_closed()
