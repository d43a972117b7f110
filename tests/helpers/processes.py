"""Waiting on processes by pid, for tests that kill Koroku and look for leftovers."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sys
import time
from collections.abc import Iterable
from pathlib import Path

from helpers.agent_kit import ENV_VARIABLES

from koroku_tui.fake_gemini import FakeGemini

KOROKU = shutil.which("koroku-tui", path=str(Path(sys.executable).parent))
"""The installed command, as a user runs it."""


def koroku_env(fake: FakeGemini, home: Path, key: str | None = "test-key") -> dict[str, str]:
    """The test process's environment aimed at ``fake``, with ``home`` as the Koroku home."""
    env = {k: v for k, v in os.environ.items() if k not in ENV_VARIABLES}
    env["GOOGLE_GEMINI_BASE_URL"] = fake.base_url
    env["KOROKU_HOME"] = str(home)
    if key is not None:
        env["GEMINI_API_KEY"] = key
    return env


def process_gone(pid: int) -> bool:
    """True once ``pid`` no longer runs (a zombie awaiting its reaper counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"


def parent_of(pid: int) -> int:
    """The parent pid of a running process, from /proc."""
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def wait_until_gone(pids: Iterable[int], within: float = 10.0) -> list[int]:
    """Poll /proc until every pid is gone; returns the ones still running at the deadline."""
    pending = list(pids)
    deadline = time.monotonic() + within
    while pending and time.monotonic() < deadline:
        pending = [pid for pid in pending if not process_gone(pid)]
        if pending:
            time.sleep(0.02)
    return pending


def wait_for_pid(pid_file: Path, within: float = 30.0) -> int:
    """The pid a command wrote to ``pid_file`` (a whole line), once it is there."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if pid_file.exists() and (text := pid_file.read_text()).endswith("\n"):
            return int(text)
        time.sleep(0.02)
    raise AssertionError(f"{pid_file} was never written")


def kill_leftovers(pids: Iterable[int]) -> None:
    """SIGKILL what a failed test left running, so one failure does not leak processes."""
    for pid in pids:
        if not process_gone(pid):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
