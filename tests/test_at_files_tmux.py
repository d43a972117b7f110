"""``@`` in a real terminal: the installed app, tmux, the fake Gemini (issue 27, part 3)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_e2e_tmux import COMMAND, Terminal, app_env, pytestmark  # noqa: F401  (same skip rule)
from test_e2e_tmux import terminal as terminal  # the fixture

from koroku_tui.fake_gemini import FakeGemini, text_reply


@pytest.mark.timeout(180)
def test_at_picks_a_file_and_sends_it_in_a_real_terminal(
    terminal: Terminal, fake: FakeGemini, tmp_path: Path
) -> None:
    assert COMMAND is not None, "koroku-tui is not installed in the test environment"
    workspace = tmp_path / "work"
    (workspace / "docs").mkdir(parents=True)
    (workspace / "docs" / "shopping.md").write_text("buy oat milk\n")
    (workspace / ".gitignore").write_text("secret/\n")
    (workspace / "secret").mkdir()
    (workspace / "secret" / "shopping-keys.md").write_text("hidden")
    fake.add(text_reply("You need oat milk.", signature_chunk=True))
    terminal.start([COMMAND], app_env(tmp_path, fake.base_url), workspace)
    terminal.wait_for(lambda s: "Quit" in s, "the app to start")
    terminal.type("what is in @shop")
    screen = terminal.wait_for(lambda s: "docs/shopping.md" in s, "the picker's match")
    assert "shopping-keys" not in screen  # ignored by .gitignore
    terminal.send("Enter")
    terminal.wait_for(lambda s: "what is in @docs/shopping.md" in s, "the chosen path")
    terminal.send("Enter")
    terminal.wait_for(
        lambda s: "You need oat milk." in s and "+ @docs/shopping.md · 13 B" in s,
        "the answer and the attachment's row",
    )
    attached = fake.generate_requests[-1].contents[-1]["parts"][1]["text"]
    assert attached.startswith('<attached-file path="docs/shopping.md" size="13">\nbuy oat milk')
    terminal.send("C-q")
    terminal.wait_until_closed()
