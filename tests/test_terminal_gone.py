"""An app whose terminal goes away without a SIGHUP stops, keeping the turn, instead of spinning.

A pseudo-terminal that is not the process's controlling terminal (as a
bench, or a wrapper that starts Koroku in a new session, opens it) sends no
SIGHUP when its other end closes: reads just end. Textual's input loop went
on selecting the ended terminal for ever, at half a core, and the app never
exited. The installed command runs in such a terminal here, as a person's
wrapper would start it.
"""

from __future__ import annotations

import os
import pty
import shutil
import subprocess
import sys
import time
from pathlib import Path

from helpers.agent_kit import ENV_VARIABLES

COMMAND = shutil.which("koroku-tui", path=str(Path(sys.executable).parent))
DRAWN = b"Koroku"
"""In the title and the demo's welcome: the app has drawn."""


def read_until(leader: int, text: bytes, timeout: float) -> bytes:
    """The terminal's output up to ``text`` (waiting on the output itself, up to ``timeout`` s)."""
    seen = b""
    deadline = time.monotonic() + timeout
    while text not in seen:
        assert time.monotonic() < deadline, f"never drew {text!r}: {seen[-500:]!r}"
        seen += os.read(leader, 65536)
    return seen


def test_an_app_whose_terminal_closes_exits_on_its_own(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ENV_VARIABLES}
    env.update(KOROKU_HOME=str(tmp_path / "home"), TERM="xterm-256color")
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [str(COMMAND), "--demo"],
        stdin=follower,
        stdout=follower,
        stderr=follower,
        env=env,
        cwd=tmp_path,
        start_new_session=True,  # a new session: the terminal is not its controlling one
    )
    os.close(follower)
    try:
        read_until(leader, DRAWN, 60)
    finally:
        os.close(leader)  # the terminal goes away; no SIGHUP is sent
    try:
        process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        raise AssertionError("the app went on running after its terminal closed") from None
    log = (tmp_path / "home" / "koroku.log").read_text()
    assert "received SIGHUP: stopping the turn and exiting" in log  # as a closed terminal stops it
