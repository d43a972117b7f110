"""The usage statistics in a real terminal: the installed ``koroku-tui`` in tmux, on the fake."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from test_e2e_tmux import COMMAND, Terminal, app_env, pytestmark  # noqa: F401  (same skip rule)
from test_e2e_tmux import terminal as terminal  # the fixture
from test_stats_screen import seed_history

from koroku_tui.fake_gemini import FakeGemini, Usage, text_reply


@pytest.mark.timeout(120)
def test_the_palette_opens_the_statistics_in_a_real_terminal(
    terminal: Terminal, fake: FakeGemini, tmp_path: Path
) -> None:
    assert COMMAND is not None, "koroku-tui is not installed in the test environment"
    asyncio.run(seed_history(tmp_path / "home"))  # an earlier reply, a hostile tool's failure
    usage = Usage(prompt_tokens=1_234, candidates_tokens=56, thoughts_tokens=7, cached_tokens=89)
    fake.add(text_reply("Hello there.", usage=usage))
    terminal.start([COMMAND], app_env(tmp_path, fake.base_url), tmp_path)
    terminal.wait_for(lambda s: "Quit" in s, "the app to start")
    terminal.type("hi")
    terminal.send("Enter")
    terminal.wait_for(lambda s: "Hello there." in s, "the answer")

    terminal.send("C-p")
    terminal.wait_for(lambda s: "Search for commands" in s, "the palette")
    terminal.type("Usage statistics")
    terminal.wait_for(lambda s: "Tokens, requests, tools" in s, "the palette's offer")
    terminal.send("Enter")
    screen = terminal.wait_for(
        lambda s: "All history" in s and "2,234" in s, "both columns of the statistics"
    )
    assert "Time waiting for Gemini" in screen
    # The hostile name is shown as written, escapes visible; nothing retitled the window.
    assert "evil\\u001b]0;pwned\\u0007[bold]name" in screen
    terminal.send("Escape")
    terminal.wait_for(lambda s: "All history" not in s, "the statistics closing")
    terminal.send("C-q")
    terminal.wait_until_closed()
