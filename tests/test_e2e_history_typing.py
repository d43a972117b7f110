"""Typing into the history screen in a real terminal (tmux, 80x24) deletes nothing.

Issue 22, as it was found: ctrl+r, then a word typed as a search ("deploy"),
then Escape and more words. tmux delivers each word as one burst. Afterwards
the database holds every session as it was, and none is in the trash. A
deliberate delete (a move, then ``d``) with ``y`` typed in the same burst is
not confirmed either.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

import pytest
from helpers.events import model, user
from hostile.typed_words import TYPED_IN_HISTORY
from test_e2e_tmux import COMMAND, TMUX, Terminal

from koroku_tui.fake_gemini import FakeGemini
from koroku_tui.store import SessionManager

pytestmark = [
    pytest.mark.skipif(
        TMUX is None and not os.environ.get("CI"),
        reason="tmux is not installed (CI installs it; locally: apt-get install tmux)",
    ),
    pytest.mark.timeout(180),
]


async def three_sessions(database: Path) -> None:
    async with SessionManager(database) as store:
        for topic in ("the deploy script", "a yearly review", "the garden"):
            await store.add_messages([user(f"Tell me about {topic}"), model(f"About {topic}.")])
            await store.new_session()


def sessions(database: Path) -> list[tuple[object, ...]]:
    with closing(sqlite3.connect(database)) as conn:
        return list(
            conn.execute("SELECT id, title, message_count, trashed_at FROM sessions ORDER BY id")
        )


def shows(text: str) -> Callable[[str], bool]:
    def check(screen: str) -> bool:
        return text in screen

    return check


def open_history(terminal: Terminal) -> None:
    """ctrl+r, again while start-up keeps the history closed (the agent still loading).

    Sent again every half second (for a minute at most): a ctrl+r that reaches the
    history screen once it is open does nothing there.
    """
    for _ in range(120):
        terminal.send("C-r")
        try:
            terminal.wait_for(lambda s: "Type to search" in s, "the history screen", timeout=0.5)
        except AssertionError:
            continue
        return
    raise AssertionError(f"ctrl+r never opened the history; the screen was:\n{terminal.screen()}")


def test_words_typed_into_the_history_in_a_terminal_delete_nothing(
    fake: FakeGemini, tmp_path: Path
) -> None:
    assert COMMAND is not None, "koroku-tui is not installed in the test environment"
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    database = home / "koroku.db"
    asyncio.run(three_sessions(database))
    before = sessions(database)
    env = {
        "KOROKU_HOME": str(home),
        "GEMINI_API_KEY": "test-key",
        "GOOGLE_GEMINI_BASE_URL": fake.base_url,
        "TERM": "xterm-256color",
        "PATH": os.environ.get("PATH", ""),
        "HOME": os.environ.get("HOME", str(tmp_path)),
    }
    terminal = Terminal()
    try:
        terminal.start([COMMAND], env, tmp_path, size=(80, 24))
        terminal.wait_for(lambda s: "About the garden." in s, "the app to start")
        open_history(terminal)
        for text in TYPED_IN_HISTORY[:4]:  # "deploy", "a draft I typed yesterday"...
            terminal.type(text)
            terminal.wait_for(shows(text), f"{text!r} in the search box")
            terminal.send("Escape")  # clears the search, the screen stays open
            terminal.wait_for(lambda s: "Type to search" in s, "the search cleared")
        # A deliberate delete, with the y typed in the same burst: not confirmed.
        terminal.send("Down")
        terminal.type("dy")
        terminal.wait_for(lambda s: "Move “" in s, "the delete question")
        terminal.send("Escape")
        terminal.wait_for(lambda s: "Type to search" in s, "the question cancelled")
        terminal.send("C-q")
        terminal.wait_until_closed()
    finally:
        terminal.kill()
    assert sessions(database) == before  # none deleted, trashed, renamed or forked
    assert not list(tmp_path.glob("*.md"))  # nothing exported
    assert fake.generate_requests == []
