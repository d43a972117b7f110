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
    env = {
        **os.environ,
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
        process.wait(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(master)
    if drawn is None:
        raise RuntimeError(f"koroku-tui never drew {text!r}")
    return drawn
