"""End to end: an answer cut by a closed terminal reads "Interrupted" after a restart.

The installed ``koroku-tui`` in tmux streams a slow answer from the fake;
the tmux server is killed mid-answer (the terminal goes away: SIGHUP). The
next start, in a new terminal, shows what arrived with the line saying it
was cut short, not as a whole answer (issue 22, item 8).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers.processes import kill_leftovers, wait_until_gone
from test_e2e_tmux import COMMAND, TMUX, Terminal, app_env

from koroku_tui.fake_gemini import Call, FakeGemini, Reply, Text

pytestmark = [
    pytest.mark.skipif(
        TMUX is None and not os.environ.get("CI"),
        reason="tmux is not installed (CI installs it; locally: apt-get install tmux)",
    ),
    pytest.mark.timeout(120),
]


def processes_of(terminal: Terminal) -> list[int]:
    """The window's shell and every process under it (koroku-tui among them)."""
    found = [int(terminal._tmux("list-panes", "-t", "koroku", "-F", "#{pane_pid}").stdout)]
    for pid in found:  # grows as it goes: children, then theirs
        for task in Path(f"/proc/{pid}/task").glob("*"):
            found += [int(child) for child in (task / "children").read_text().split()]
    return found


def test_an_answer_cut_by_a_closed_terminal_says_so_after_a_restart(
    fake: FakeGemini, tmp_path: Path
) -> None:
    assert COMMAND is not None, "koroku-tui is not installed in the test environment"
    env = app_env(tmp_path, fake.base_url)
    fake.add(Reply(((Text("The first half of it."),), (Text(" Never shown."),)), chunk_delay=60))
    terminal = Terminal()
    try:
        cut_by_closing(terminal, env, tmp_path)
        replayed = replay(terminal, env, tmp_path)
    finally:
        terminal.kill()
    assert "The first half of it." in replayed and "Never shown." not in replayed
    assert "Interrupted: Koroku was closed before the answer was complete." in replayed


def ask(terminal: Terminal, env: dict[str, str], cwd: Path) -> None:
    """Start the app, send a message, and wait for the answer's first half."""
    assert COMMAND is not None, "koroku-tui is not installed in the test environment"
    terminal.start([COMMAND], env, cwd)
    terminal.wait_for(lambda s: "Quit" in s, "the app to start")
    terminal.type("tell me")
    terminal.send("Enter")
    terminal.wait_for(lambda s: "The first half of it." in s, "the first half of the answer")


def cut_by_closing(terminal: Terminal, env: dict[str, str], cwd: Path) -> None:
    """Start the app, send a message, close the terminal once the answer's first half shows."""
    ask(terminal, env, cwd)
    running = processes_of(terminal)
    try:
        terminal.kill()  # the terminal closes: SIGHUP
        assert wait_until_gone(running, within=20) == [], "koroku-tui outlived its terminal"
    finally:
        kill_leftovers(running)


def replay(terminal: Terminal, env: dict[str, str], cwd: Path) -> str:
    """Start Koroku again, and the screen once it replays the cut answer (then quit)."""
    assert COMMAND is not None
    terminal.start([COMMAND], env, cwd)
    replayed = terminal.wait_for(lambda s: "Interrupted" in s, "the replayed answer, cut")
    terminal.send("C-q")
    terminal.wait_until_closed()
    return replayed


def test_quitting_mid_answer_keeps_the_answer_to_its_call(fake: FakeGemini, tmp_path: Path) -> None:
    """ctrl+q once a call arrived: after a restart the call reads cancelled, as after Escape.

    The app closed its store while the cancelled turn was still storing what
    arrived: the reply was kept, the answer to its call written after the
    close was lost, and the next start showed the call as lost in a crash.
    """
    assert COMMAND is not None, "koroku-tui is not installed in the test environment"
    env = app_env(tmp_path, fake.base_url)
    first = (Text("The first half of it."), Call("read_file", {"path": "a.txt"}))
    fake.add(Reply((first, (Text(" Never shown."),)), chunk_delay=60))
    terminal = Terminal()
    try:
        ask(terminal, env, tmp_path)
        terminal.send("C-q")
        terminal.wait_until_closed()
        replayed = replay(terminal, env, tmp_path)
    finally:
        terminal.kill()
    assert "You cancelled this call" in replayed
