"""Keys typed in one burst in a real terminal (tmux, 80x24) edit the prompt in order.

tmux sends each ``send-keys`` in one write: ``abc`` Backspace ``xyz`` left
``abcxy`` (textual#6605, ``ui.own_keys``). The app-level cases
are in ``test_ui_burst.py``.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
from test_e2e_tmux import COMMAND, Terminal, app_env, pytestmark, said  # noqa: F401  (skip rule)
from test_e2e_tmux import terminal as terminal  # the fixture

from koroku_tui.fake_gemini import FakeGemini, text_reply


def prompt_row(screen: str) -> str | None:
    """The text of the prompt's one row, between its side borders.

    A toast over the row's right half (its left edge a "▌") is not the prompt's:
    read as part of it, a test waited the toast's 20 s out.
    """
    rows = [line for line in screen.splitlines() if line.startswith("▊ ")]
    return rows[-1].split("▌", 1)[0].strip("▊▎ ") if rows else None


@pytest.mark.timeout(120)
def test_a_burst_with_editing_keys_and_enter_arrives_in_order(
    terminal: Terminal, fake: FakeGemini, tmp_path: Path
) -> None:
    assert COMMAND is not None, "koroku-tui is not installed in the test environment"
    fake.add(text_reply("Got it."))
    terminal.start([COMMAND], app_env(tmp_path, fake.base_url), tmp_path, size=(80, 24))
    terminal.wait_for(lambda s: "Quit" in s, "the app to start")
    terminal.send("abc", "BSpace", "xyz")
    terminal.wait_for(lambda s: prompt_row(s) == "abxyz", "abxyz in the prompt")
    # ctrl+w, left, Delete, Enter, and what is typed after the Enter, in one write.
    terminal.send("Space", "ab cd", "C-w", "Left", "DC", "Enter", "mor", "BSpace", "e")
    terminal.wait_for(lambda s: "Got it." in s, "the answer")
    terminal.wait_for(lambda s: prompt_row(s) == "moe", "the keys after Enter kept")
    terminal.send("C-q")
    terminal.wait_until_closed()
    assert said(fake.generate_requests[-1])[-1] == ("user", "abxyz ab")


def one_turn_asked(terminal: Terminal, fake: FakeGemini, tmp_path: Path) -> None:
    """The app started, "tell me about ducks" sent and its turn ended."""
    assert COMMAND is not None, "koroku-tui is not installed in the test environment"
    fake.add(text_reply("Ducks are birds.", signature_chunk=True))
    terminal.start([COMMAND], app_env(tmp_path, fake.base_url), tmp_path, size=(80, 24))
    terminal.wait_for(lambda s: "Quit" in s, "the app to start")
    terminal.type("tell me about ducks")
    terminal.send("Enter")
    terminal.wait_for(lambda s: "Ducks are birds." in s, "the answer")
    # The answer shows before its turn has ended (stored, counted): a ctrl+g then is
    # refused ("A turn is running"), as it is when typed slowly. The status says when.
    terminal.wait_for(lambda s: "esc to cancel" not in s, "the turn to end")


@pytest.mark.timeout(120)
def test_keys_after_one_that_opens_a_list_go_to_that_list(
    terminal: Terminal, fake: FakeGemini, tmp_path: Path
) -> None:
    """ab, ctrl+g, Enter, x in one write: the rewind list opens, Enter rewinds, x follows ab.

    The Enter used to reach the prompt before the list was open: it sent "ab".
    """
    one_turn_asked(terminal, fake, tmp_path)
    terminal.send("ab", "C-g", "Enter", "x")
    terminal.wait_for(
        lambda s: "Rewound" in s and "Ducks are birds." not in s and prompt_row(s) == "abx",
        "the rewind, with the draft and the x after it in the prompt",
    )
    terminal.send("C-q")
    terminal.wait_until_closed()
    assert len(fake.generate_requests) == 1  # "ab" was never sent


@pytest.mark.timeout(120)
def test_ctrl_g_enter_x_on_an_empty_prompt_puts_the_message_back_before_x(
    terminal: Terminal, fake: FakeGemini, tmp_path: Path
) -> None:
    """Typed slowly: the rewind puts "tell me about ducks" back, x follows it. The Enter,
    followed twice on its way back up to the App, let x go before the message was back."""
    one_turn_asked(terminal, fake, tmp_path)
    terminal.send("C-g", "Enter", "x")
    screen = terminal.wait_for(lambda s: "Rewound" in s, "the rewind")
    terminal.wait_for(lambda s: prompt_row(s) in ("tell me about ducksx", "x"), "x typed")
    row = prompt_row(terminal.screen())
    terminal.send("C-q")
    terminal.wait_until_closed()
    assert row == "tell me about ducksx", (row, screen)


def kill_window(terminal: Terminal) -> None:
    """kill -9 what runs in the window (the app, and a shell if one is left above it)."""
    pane = terminal._tmux("display-message", "-p", "-t", "koroku", "#{pane_pid}").stdout
    os.killpg(os.getpgid(int(pane)), signal.SIGKILL)


@pytest.mark.timeout(120)
def test_a_window_killed_after_restoring_a_draft_leaves_it_for_the_next_start(
    terminal: Terminal, fake: FakeGemini, tmp_path: Path
) -> None:
    """What a start put back in the prompt was safe on disk before: kill -9 keeps it so."""
    assert COMMAND is not None, "koroku-tui is not installed in the test environment"
    env = app_env(tmp_path, fake.base_url)
    terminal.start([COMMAND], env, tmp_path, size=(100, 30))
    terminal.wait_for(lambda s: "Quit" in s, "the app to start")
    terminal.type("half a thought")
    terminal.wait_for(lambda s: prompt_row(s) == "half a thought", "the draft typed")
    terminal.send("C-q")
    terminal.wait_until_closed()
    for start in ("restored", "restored again after kill -9"):
        terminal.start([COMMAND], env, tmp_path, size=(100, 30))
        terminal.wait_for(lambda s: prompt_row(s) == "half a thought", start)
        kill_window(terminal)
        terminal.wait_until_closed()
