"""The first start after an upgrade, in a real terminal: the progress line, then the conversation.

The command is the real CLI entry point (``koroku_tui.cli.main``) in tmux,
started through a small wrapper that appends one slow migration step (it
reports 45% and waits until the test creates a file), so the upgrade is
slow on any machine. Before the fix the CLI migrated the file itself before
the app started: the terminal stayed blank and the line never showed.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest
from helpers.ui_kit import seed_session
from test_e2e_tmux import Terminal, pytestmark  # noqa: F401  (same skip rule)
from test_e2e_tmux import terminal as terminal  # the fixture

WRAPPER = """
import sys, time
from pathlib import Path
from koroku_tui import cli
from koroku_tui.store import opening, schema

release = Path(sys.argv.pop(1))

def slow(conn, progress):
    progress(45, 100)
    while not release.exists():  # the test creates it once it saw the line
        time.sleep(0.05)
    progress(100, 100)

steps = (*schema.MIGRATIONS, schema.ReportingMigration(slow))
schema.MIGRATIONS = steps
schema.SCHEMA_VERSION = opening.SCHEMA_VERSION = len(steps)
sys.exit(cli.main())
"""


@pytest.mark.timeout(120)
def test_the_first_start_after_an_upgrade_shows_progress_then_the_conversation(
    terminal: Terminal, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    asyncio.run(seed_session(home, 2))
    wrapper = tmp_path / "upgrade_then_run.py"
    wrapper.write_text(WRAPPER, encoding="utf-8")
    release = tmp_path / "release"
    env = {
        "KOROKU_HOME": str(home),
        "TERM": "xterm-256color",
        "PATH": os.environ.get("PATH", ""),
        "HOME": os.environ.get("HOME", str(tmp_path)),
    }
    terminal.start([sys.executable, str(wrapper), str(release)], env, tmp_path)
    terminal.wait_for(lambda s: "Updating the search index… 45%" in s, "the progress line")
    release.touch()
    terminal.wait_for(lambda s: "answer 1" in s, "the conversation after the upgrade")
    terminal.send("C-q")
    terminal.wait_until_closed()
