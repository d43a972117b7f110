"""Launching the installed ``koroku-tui`` in a pseudo-terminal, as a person would.

Used by ``tui_bench.py``: the time from starting the command until the bytes
it writes to the terminal hold a given text (and the footer, so the frame
is the app's). This includes Python's start and the imports (~1.5 s here),
which the in-process launch figure leaves out.
"""

from __future__ import annotations

import fcntl
import os
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

COMMAND = str(Path(sys.executable).parent / "koroku-tui")
ROWS, COLUMNS = 40, 120
FOOTER = b"palette"  # the footer's "^p palette", drawn in the first frame
QUIT = b"\x11"  # ctrl+q
TIMEOUT = 30.0


def launch_in_terminal(home: Path, text: str) -> float:
    """Seconds from starting ``koroku-tui --home HOME`` until ``text`` has been drawn.

    The app gets a key and a server address that refuses connections: it
    starts as usual, and nothing leaves the machine.
    """
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLUMNS, 0, 0))
    # No variable of the user's may point the SDK at Google (GOOGLE_API_KEY
    # wins over GEMINI_API_KEY, Vertex settings...): drop them all.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GOOGLE_", "GEMINI_"))}
    env |= {
        "TERM": "xterm-256color",
        "GEMINI_API_KEY": "bench-key",
        "GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:9",
    }
    started = time.monotonic()
    process = subprocess.Popen(
        [COMMAND, "--home", str(home)],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=env,
        start_new_session=True,
    )
    os.close(slave)
    wanted, seen, drawn = text.encode(), b"", None
    try:
        while drawn is None and time.monotonic() - started < TIMEOUT:
            if select.select([master], [], [], 0.5)[0]:
                seen += os.read(master, 65536)
                if wanted in seen and FOOTER in seen:
                    drawn = time.monotonic() - started
        os.write(master, QUIT)
        _drain_until_exit(master, process)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(master)
    if drawn is None:
        raise RuntimeError(f"koroku-tui never drew {text!r}")
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
