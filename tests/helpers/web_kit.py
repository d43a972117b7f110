"""The real ``koroku-tui --serve`` against the fake Gemini, and what runs under it."""

from __future__ import annotations

import contextlib
import signal
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from helpers.processes import KOROKU, kill_leftovers, koroku_env, wait_until_gone

from koroku_tui.fake_gemini import FakeGemini


@dataclass
class Served:
    """A running ``koroku-tui --serve``: its process and the URL it printed."""

    process: subprocess.Popen[str]
    url: str

    @property
    def base(self) -> str:
        """``http://127.0.0.1:PORT`` (the URL without its path and token)."""
        parts = urlsplit(self.url)
        return f"{parts.scheme}://{parts.netloc}"

    @property
    def token(self) -> str:
        """The token the URL carries."""
        return urlsplit(self.url).query.removeprefix("token=")

    @property
    def websocket(self) -> str:
        """A tab's websocket address as the page writes it: the token in its path."""
        return f"{self.base}/ws/{self.token}"

    def app_processes(self) -> list[int]:
        """The pids of the app processes the server started (its children)."""
        return descendants(self.process.pid, depth=1)


def descendants(pid: int, depth: int = 10) -> list[int]:
    """``pid``'s children, theirs, and so on ``depth`` levels down (from /proc)."""
    found: list[int] = []
    level = [pid]
    for _ in range(depth):
        level = [
            int(child)
            for parent in level
            for task in Path(f"/proc/{parent}/task").glob("*")
            for child in _children(task)
        ]
        found += level
    return found


def _children(task: Path) -> list[str]:
    try:
        return (task / "children").read_text().split()
    except OSError:  # the task ended meanwhile
        return []


def serve_command(fake: FakeGemini, home: Path, *flags: str, cwd: Path) -> subprocess.Popen[str]:
    """Start ``koroku-tui --serve FLAGS`` on ``home``, aimed at ``fake``."""
    assert KOROKU is not None, "koroku-tui is not installed in the test environment"
    env = koroku_env(fake, home) | {"KOROKU_APPROVAL_GRACE": "0"}
    return subprocess.Popen(
        [KOROKU, "--serve", *flags],
        env=env,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@contextlib.contextmanager
def serving(fake: FakeGemini, home: Path, *flags: str, cwd: Path) -> Iterator[Served]:
    """A running server (its URL read from its first line); stopped, with its apps, after."""
    process = serve_command(fake, home, *flags, cwd=cwd)
    assert process.stdout is not None
    url = process.stdout.readline().strip()
    left: list[int] = []
    try:
        assert url.startswith("http://"), process.communicate(timeout=30)
        yield Served(process, url)
    finally:
        left = descendants(process.pid)
        process.send_signal(signal.SIGTERM)
        try:
            process.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()
        wait_until_gone(left)
        kill_leftovers(left)
