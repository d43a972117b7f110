"""Launching a command in a pseudo-terminal, as a person would.

Used by ``tui_bench.py``: the time from starting the command until the bytes
it writes to the terminal hold given texts (for ``koroku-tui``, the newest
message and the footer, so the frame is the app's). This includes Python's
start and the imports, which the in-process launch figure leaves out.
"""

from __future__ import annotations

import fcntl
import os
import select
import struct
import subprocess
import sys
import termios
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

COMMAND = str(Path(sys.executable).parent / "koroku-tui")
FLOOR = [sys.executable, str(Path(__file__).with_name("floor_app.py"))]
"""The minimal Textual app (one Static): the floor any Textual app pays."""


def widgets_floor(home: Path) -> list[str]:
    """Koroku's widget kinds on ``home``'s newest page, with none of Koroku's code."""
    database = home / "koroku.db"
    return [sys.executable, str(Path(__file__).with_name("widgets_floor_app.py")), str(database)]


ROWS, COLUMNS = 40, 120
FOOTER = "palette"  # the footer's "^p palette", drawn in the first frame
QUIT = b"\x11"  # ctrl+q, for Koroku and for the floor app alike
TIMEOUT = 30.0


class Launch(NamedTuple):
    """One launch, until the wanted frame was drawn."""

    wall: float
    """Seconds of wall time: what a person waits (on a busy machine, mostly waiting for a core)."""
    cpu: float
    """Seconds of CPU the process used (user + system): steadier than ``wall`` under load."""


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a running process so far (``/proc/PID/stat``)."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def koroku(home: Path) -> list[str]:
    """The installed ``koroku-tui`` on ``home``."""
    return [COMMAND, "--home", str(home)]


def launch_in_terminal(
    command: Sequence[str],
    *texts: str,
    cwd: Path | None = None,
    env_extra: dict[str, str] | None = None,
) -> Launch:
    """The time from starting ``command`` until every one of ``texts`` has been drawn.

    ``cwd``: the folder it starts in (default: this one); ``env_extra``:
    variables set on top of this process's (``XDG_CONFIG_HOME``...).

    The CPU time is read as soon as the frame is seen, which on a busy
    machine can be a while after it was written: work the app starts right
    after its first frame (Koroku loads its agent in a thread) is then
    partly counted, so Koroku's CPU figure is an upper bound.

    Koroku gets a key and a server address that refuses connections: it
    starts as usual, and nothing leaves the machine.
    """
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLUMNS, 0, 0))
    # No variable of the user's may point the SDK at Google (GOOGLE_API_KEY
    # wins over GEMINI_API_KEY, Vertex settings...): drop them all.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GOOGLE_", "GEMINI_"))}
    # A person's Python reads the bytecode it cached on the first run; a shell
    # that forbids caching would time the compiling of every module instead.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env |= {
        "TERM": "xterm-256color",
        "GEMINI_API_KEY": "bench-key",
        "GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:9",
        **(env_extra or {}),
    }
    started = time.monotonic()
    process = subprocess.Popen(
        list(command),
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=env,
        cwd=cwd,
        start_new_session=True,
    )
    os.close(slave)
    wanted, seen, drawn = [text.encode() for text in texts], b"", None
    try:
        while drawn is None and time.monotonic() - started < TIMEOUT:
            if select.select([master], [], [], 0.5)[0]:
                seen += os.read(master, 65536)
                if all(text in seen for text in wanted):
                    drawn = Launch(time.monotonic() - started, cpu_seconds(process.pid))
        os.write(master, QUIT)
        _drain_until_exit(master, process)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(master)
    if drawn is None:
        raise RuntimeError(f"{command[0]} never drew {texts!r}")
    return drawn


def _drain_until_exit(master: int, process: subprocess.Popen[bytes]) -> None:
    """Keep reading: an app blocked on a full terminal buffer could not quit."""
    deadline = time.monotonic() + 10
    while process.poll() is None and time.monotonic() < deadline:
        if select.select([master], [], [], 0.1)[0]:
            try:
                os.read(master, 65536)
            except OSError:  # the app closed the terminal
                break
    process.wait(timeout=max(0.1, deadline - time.monotonic()))


class Terminal:
    """A command in a pseudo-terminal, its output timestamped as it arrives (a reader thread)."""

    def __init__(self, command: Sequence[str], env: dict[str, str]) -> None:
        self.master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLUMNS, 0, 0))
        self.process = subprocess.Popen(
            list(command), stdin=slave, stdout=slave, stderr=slave, env=env, start_new_session=True
        )
        os.close(slave)
        self.output = bytearray()
        self.arrivals: list[tuple[int, float]] = []  # (end offset of a read, when it was read)
        self.sent_at: list[float] = []
        self._changed = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                data = os.read(self.master, 65536)
            except OSError:
                data = b""
            with self._changed:
                if not data:
                    self.arrivals.append((-1, time.monotonic()))
                    self._changed.notify_all()
                    return
                self.output += data
                self.arrivals.append((len(self.output), time.monotonic()))
                self._changed.notify_all()

    def send(self, keys: bytes) -> int:
        """Write ``keys``; the output offset from which their effect is looked for."""
        with self._changed:
            mark = len(self.output)
        self.sent_at.append(time.monotonic())
        os.write(self.master, keys)
        return mark

    def seen_at(self, text: bytes, mark: int) -> float | None:
        """When ``text`` was first complete in the output after offset ``mark`` (None: not yet)."""
        with self._changed:
            found = self.output.find(text, mark)
            if found < 0:
                return None
            end = found + len(text)
            return next(at for offset, at in self.arrivals if offset >= end)

    def wait_for(self, text: bytes, mark: int, timeout: float) -> float:
        """When ``text`` showed after ``mark``, waiting up to ``timeout`` s for it."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while self.output.find(text, mark) < 0:
                left = deadline - time.monotonic()
                if left <= 0 or (self.arrivals and self.arrivals[-1][0] == -1):
                    raise RuntimeError(f"never drew {text!r}")
                self._changed.wait(left)
        seen = self.seen_at(text, mark)
        assert seen is not None
        return seen

    def close(self) -> None:
        """ctrl+q, then kill what is left."""
        try:
            os.write(self.master, QUIT)
            self.process.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            pass
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        os.close(self.master)


def open_terminal(command: Sequence[str], env: dict[str, str]) -> Terminal:
    """Start ``command`` in a new pseudo-terminal of ROWS x COLUMNS."""
    return Terminal(command, env)
