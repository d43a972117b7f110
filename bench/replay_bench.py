"""Do keys stay alive while a long stored answer opens, and at a resize? Prints figures.

Run: ``uv run python bench/replay_bench.py`` (a minute or so; no assertions);
``--chars N`` sets the answer's size (default 475,000), ``--repeat N`` the
runs (default 3; every key echo kept, the median of the other figures).

A home holds one session: a question and an answer of ``--chars`` of mixed
Markdown (headings, long paragraphs, nested lists, code blocks). The
installed ``koroku-tui`` opens it in a pseudo-terminal (120x40), as a person
runs it:

1. Open: from the command's start, its first frame (the footer drawn) and
   the answer's last line drawn. From the first byte the app writes (its
   terminal set up: keys are read from then on), a ``q`` is typed every
   100 ms (after the previous one showed) until the last line is drawn and
   for 1 s more; the echo is from writing the key until the prompt's new
   text is in the output. p50, p95 and max, in ms.
2. Resize: once the app is idle (its CPU time still for 0.5 s), the
   terminal becomes 100x40 (SIGWINCH), and keys are typed likewise for 3 s;
   echo p50/p95/max, and the CPU seconds the app spends until idle again.

Goal (issue 22, item 21): key echo p95 <= 100 ms and max <= 300 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import fcntl
import os
import signal
import statistics
import struct
import sys
import tempfile
import termios
import time
from pathlib import Path

from google.genai import types
from stream_input_bench import KEY_EVERY, environment, percentile, settled
from terminal_launch import COLUMNS, COMMAND, FOOTER, ROWS, Terminal, cpu_seconds, open_terminal

from koroku_tui.config.settings import Settings
from koroku_tui.events import SessionEvent
from koroku_tui.store import SessionManager

END = "ZZ-END"
"""The answer's last words."""
RESIZED = (100, ROWS)
"""The terminal's size after the resize (columns, rows)."""
KEYS_PER_LINE = 40
"""Keys typed before the prompt is emptied (ctrl+u): it fits them at 100 columns."""


def long_answer(chars: int) -> str:
    """About ``chars`` characters of Markdown: headings, paragraphs, nested lists, code."""
    code = "".join(f"def f{{n}}_{i}(a, b):\n    return a + b  # {i}\n" for i in range(15))
    blocks = [
        "## Section {n}\n\n",
        "A paragraph about item {n}, with *emphasis*, `code` and a [link](http://e.st/{n}). " * 6
        + "\n\n",
        "- first point {n}\n- second point, a little longer {n}\n  - nested {n}\n- third {n}\n\n",
        f"```python\n{code}```\n\n",
        "1. step one {n}\n2. step two {n}\n\n",
    ]
    out: list[str] = []
    size = n = 0
    while size < chars:
        block = blocks[n % len(blocks)].format(n=n)
        out.append(block)
        size += len(block)
        n += 1
    return "".join(out) + f"Last words {END}\n"


async def store_session(home: Path, answer: str) -> None:
    """Store one question and ``answer`` in a new home."""
    async with SessionManager(Settings(home=home).database_path) as store:
        for role, text in (("user", "explain"), ("model", answer)):
            content = types.Content(role=role, parts=[types.Part(text=text)])
            await store.add_message(SessionEvent.from_content(content))


def type_along(terminal: Terminal, until: int | None, seconds: float) -> list[float]:
    """Type a ``q`` every 100 ms until ``END`` shows (from offset ``until``) and ``seconds`` more.

    ``until`` None: for ``seconds`` alone. Each key's echo, in seconds.
    """
    echoes: list[float] = []
    typed, stop = 0, None if until is not None else time.monotonic() + seconds
    while stop is None or time.monotonic() < stop:
        if stop is None and until is not None and terminal.seen_at(END.encode(), until):
            stop = time.monotonic() + seconds
        if typed == KEYS_PER_LINE:
            terminal.send(b"\x15")  # ctrl+u: the prompt emptied
            time.sleep(0.2)
            typed = 0
        typed += 1
        key = terminal.send(b"q")
        shown = terminal.wait_for(b"q" * typed, key, 60)
        echoes.append(shown - terminal.sent_at[-1])
        time.sleep(KEY_EVERY)
    return echoes


def resize(terminal: Terminal, columns: int, rows: int) -> None:
    """Give the pseudo-terminal a new size and tell the app (it has no controlling terminal)."""
    fcntl.ioctl(terminal.master, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
    os.kill(terminal.process.pid, signal.SIGWINCH)


class Run:
    """One run's figures."""

    def __init__(self) -> None:
        self.first_frame = 0.0
        self.answer_shown = 0.0
        self.open_echoes: list[float] = []
        self.resize_echoes: list[float] = []
        self.resize_cpu = 0.0


def one_run(home: Path) -> Run:
    """Open the session, type along, resize, type along."""
    run = Run()
    started = time.monotonic()
    terminal = open_terminal(
        [COMMAND, "--home", str(home)], environment(home, "http://127.0.0.1:9")
    )
    try:
        while not terminal.output:  # the terminal set up: keys are read from now on
            time.sleep(0.005)
        run.open_echoes = type_along(terminal, 0, 1.0)
        run.first_frame = terminal.wait_for(FOOTER.encode(), 0, 1) - started
        run.answer_shown = terminal.wait_for(END.encode(), 0, 1) - started
        settled(terminal.process.pid)
        terminal.send(b"\x15")
        time.sleep(0.3)
        cpu = cpu_seconds(terminal.process.pid)
        resize(terminal, *RESIZED)
        run.resize_echoes = type_along(terminal, None, 3.0)
        settled(terminal.process.pid)
        run.resize_cpu = cpu_seconds(terminal.process.pid) - cpu  # the typing included
        return run
    finally:
        terminal.close()


def echo_figures(echoes: list[float]) -> str:
    ms = [e * 1000 for e in echoes] or [0.0]
    return (
        f"keys {len(ms):3d}  echo p50 {statistics.median(ms):5.0f}"
        f"  p95 {percentile(ms, 0.95):5.0f}  max {max(ms):5.0f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--chars", type=int, default=475_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"koroku-tui in a {COLUMNS}x{ROWS} pty; {os.cpu_count()} cores; python {sys.version[:6]}")
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        answer = long_answer(args.chars)
        asyncio.run(store_session(home, answer))
        runs = [one_run(home) for _ in range(args.repeat)]
    first = statistics.median(r.first_frame for r in runs)
    shown = statistics.median(r.answer_shown for r in runs)
    print(
        f"answer {len(answer) / 1000:.0f} KB, {args.repeat} runs | first frame {first:5.2f} s"
        f"  answer's end drawn {shown:5.2f} s (medians)"
    )
    print(f"open    {echo_figures([e for r in runs for e in r.open_echoes])}")
    cpu = statistics.median(r.resize_cpu for r in runs)
    print(
        f"resize  {echo_figures([e for r in runs for e in r.resize_echoes])}"
        f" | app CPU until idle {cpu:5.2f} s (3 s of typing included)"
    )


if __name__ == "__main__":
    main()
