"""Does the keyboard stay alive while a fast answer streams? Prints figures and ratios.

Run: ``uv run python bench/stream_input_bench.py`` (several minutes; no
assertions); ``--only burst50,calls1000`` picks replies; ``--quick`` runs
small ones (the smoke test's; its figures mean little); ``--repeat N``: runs
of ``--print`` and of the app per short reply, the one-word reply included,
the median time counting and every key echo kept (default 3).

Each reply is served by the fake Gemini in its own process, back to back (no
delay between chunks), to the installed ``koroku-tui`` in a pseudo-terminal
(120x40), as a person runs it:

- burst50: 2,000 chunks of 50 characters of Markdown;
- chars20k / chars100k: 20,000 / 100,000 chunks of one character;
- calls1000: one step of 1,000 parallel ``read_file`` calls (the guardrail
  runs 15), then a short answer;
- fence500: one code block of 475 KB (no cut can split it), in chunks of
  100 characters, then a line.

The app gets "go" once it has started up (its CPU time still for 0.5 s).
Per reply:

1. Key echo: from Enter on, a ``q`` is typed every 100 ms (after the
   previous one showed) until the answer's last line is drawn; the echo time
   is from writing the key to the terminal until the prompt's new text is in
   the app's output. p95 and max, in ms. Goal: p95 <= 100, max <= 300.
2. Total: from the reply's first request reaching the fake until the
   answer's last line is drawn, against ``koroku-tui --print`` for the same
   reply (from its first request until it exited; its start-up varies by
   more than a short reply takes); each less its own time for a one-word
   reply, so both count the answer only (the app's one-word runs type no
   key: the floor taken off is the least it can be). The medians of ``--repeat`` runs,
   each side's middle half (quartiles) in brackets with 4 runs or more.
   Goal: app <= 1.5x print.
3. Escape: ``--repeat`` more runs press Escape 1 s after Enter, or halfway through
   the reply if the app's runs took under 2 s (calls1000 is over in ~0.5 s:
   at 1 s there was nothing left to stop); the time until the screen says
   the turn was cancelled (either line: a stream cut, or a turn stopped
   between steps); the worst of the runs. Goal: <= 0.3 s.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from terminal_launch import COLUMNS, COMMAND, FOOTER, ROWS, cpu_seconds, open_terminal

END = "ZZ-END"
"""The answer's last words, drawn only once it has all arrived."""
CANCELLED = ("Interrupted: cancelled", "Cancelled; what arrived so far is kept.")
"""The transcript's lines when Escape stopped a turn: in a stream, or between its steps."""
ESCAPE_AFTER = 1.0
"""Seconds from Enter to Escape, for a reply that takes twice as long or more."""
NOTHING_TO_STOP = " | escape: reply complete before the Escape"
KEY_EVERY = 0.1
ECHO_TIMEOUT = 60.0


def markdown(chars: int) -> str:
    """About ``chars`` characters of varied Markdown: paragraphs, lists, code, headings."""
    blocks = [
        "## Section {n}\n\n",
        "A paragraph about item {n}, with *emphasis*, `code` and a [link](http://e.st/{n}). "
        "It runs on for a while so that the line wraps at eighty columns, as answers do.\n\n",
        "- first point {n}\n- second point, a little longer {n}\n- third {n}\n\n",
        "```python\ndef f{n}(a, b):\n    return a + b  # {n}\n```\n\n",
        "1. step one {n}\n2. step two {n}\n\n",
    ]
    out: list[str] = []
    size, n = 0, 0
    while size < chars - 20:
        block = blocks[n % len(blocks)].format(n=n)
        out.append(block)
        size += len(block)
        n += 1
    text = "".join(out)[: chars - len(END) - 12]
    return text + "\n\nLast words " + END + "\n"


def script(name: str, quick: bool) -> list[dict[str, object]]:
    """The fake's script for one reply."""
    scale = 10 if quick else 1
    if name == "calls1000":
        calls = [
            {"name": "read_file", "args": {"path": "notes.txt"}, "id": f"c{i}"}
            for i in range(1000 // scale)
        ]
        return [{"calls": calls}, {"text": f"Read them. {END}"}]
    if name == "fence500":
        line = "def f{0}(a, b):\n    return a + b  # {0}: a comment\n"
        code = "".join(line.format(i) for i in range(9_000 // scale))
        text = f"```python\n{code}```\n\nLast words {END}\n"
        return [{"text": text, "pieces": len(text) // 100}]
    chunk, count = {"burst50": (50, 2_000), "chars20k": (1, 20_000), "chars100k": (1, 100_000)}[
        name
    ]
    count //= scale
    return [{"text": markdown(chunk * count), "pieces": count}]


class Fake:
    """The fake Gemini in its own process, serving one script."""

    def __init__(self, entries: list[dict[str, object]], folder: Path) -> None:
        path = folder / "script.json"
        path.write_text(json.dumps(entries))
        command = [sys.executable, "-m", "koroku_tui.fake_gemini", "--script", str(path)]
        self.process = subprocess.Popen(
            [*command, "--echo", "--arrivals"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,  # a reply cut by Escape or quitting is no news
            text=True,
        )
        assert self.process.stdout is not None
        self.url = self.process.stdout.readline().strip()

    def close(self) -> float | None:
        """Stop the fake; when its first generation request arrived (``time.monotonic()``)."""
        self.process.terminate()
        out, _ = self.process.communicate()
        for line in out.splitlines():
            if line.startswith("arrivals "):
                return float(line.split()[1])
        return None


def environment(home: Path, url: str) -> dict[str, str]:
    # Without bytecode files every start compiles Koroku from source (this
    # machine sets PYTHONDONTWRITEBYTECODE), and under load the agent was still
    # loading on the loop when the first reply came: a cost no user pays.
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("GOOGLE_", "GEMINI_")) and k != "PYTHONDONTWRITEBYTECODE"
    }
    return env | {
        "TERM": "xterm-256color",
        "GEMINI_API_KEY": "test-key",
        "GOOGLE_GEMINI_BASE_URL": url,
        "KOROKU_HOME": str(home),
        "KOROKU_APPROVAL_GRACE": "0",
    }


def print_time(entries: list[dict[str, object]], folder: Path) -> float:
    """Seconds ``koroku-tui --print`` takes over this reply: from its first request's
    arrival at the fake until the command has exited.

    Not from its start: its start-up (~1 s, more under load) varied more
    between runs than a 1,000-call reply takes, so the reply's share, a
    difference of two start-to-exit times, came out anywhere from -0.04 to
    0.55 s.
    """
    fake = Fake(entries, folder)
    try:
        home = Path(tempfile.mkdtemp(dir=folder))
        subprocess.run(
            [COMMAND, "--print", "go", "--new"],
            env=environment(home, fake.url),
            cwd=folder,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            check=False,
        )
        ended = time.monotonic()
    finally:
        first = fake.close()
    if first is None:
        raise RuntimeError("koroku-tui --print sent no request: is the fake's script valid?")
    return ended - first


def print_times(entries: list[dict[str, object]], folder: Path, repeat: int) -> list[float]:
    """``repeat`` ``print_time`` runs (one if a run takes over 5 s); the median counts.

    Each side's one-word reply is taken off its times (the app's drawing of
    one line, ``--print``'s exit), so both count the reply only.
    The median of several is used on both sides (and for the app's): a
    single run of a short reply moved its ratio by 0.3x.
    """
    times = [print_time(entries, folder)]
    while len(times) < repeat and times[0] < 5.0:
        times.append(print_time(entries, folder))
    return times


IDLE_FOR = 0.5
"""Seconds the app's CPU time must stay still before "go" is sent."""


def settled(pid: int, longest: float = 20.0) -> None:
    """Wait until the app started up: at least 1 s, then until it uses no CPU for ``IDLE_FOR`` s.

    The agent and the recall models load after the first frame, in threads:
    ~1.5 s of CPU here, more on a loaded machine. A fixed second had the
    reply run beside the end of that loading, which took its share of the
    one core left and of the GIL: a 1,000-call reply took ~0.35 s longer
    and its worst key echo doubled, a cost of the start-up, not of the reply.
    """
    time.sleep(1.0)
    deadline = time.monotonic() + longest
    used = cpu_seconds(pid)
    while time.monotonic() < deadline:
        time.sleep(IDLE_FOR)
        now = cpu_seconds(pid)
        if now - used < 0.02:
            return
        used = now


class Run:
    """One app run: the figures of one reply."""

    def __init__(self) -> None:
        self.echoes: list[float] = []
        self.total: float | None = None
        """From the first request's arrival at the fake until the answer's last line shows."""
        self.escape: float | None = None


def app_run(
    entries: list[dict[str, object]],
    folder: Path,
    escape_after: float | None,
    *,
    type_along: bool = True,
) -> Run:
    """Send "go" in the app and type along (or press Escape ``escape_after`` s in).

    ``type_along`` False: no key is typed (the one-word reply's floor, see ``main``).
    """
    fake = Fake(entries, folder)
    home = Path(tempfile.mkdtemp(dir=folder))
    terminal = open_terminal([COMMAND, "--home", str(home), "--new"], environment(home, fake.url))
    run = Run()
    done: float | None = None
    try:
        terminal.wait_for(FOOTER.encode(), 0, 30)
        settled(terminal.process.pid)
        mark = terminal.send(b"go")
        terminal.wait_for(b"go", mark, 10)
        sent = terminal.send(b"\r")
        if escape_after is not None:
            time.sleep(escape_after)
            if terminal.seen_at(END.encode(), sent) is not None:
                return run  # all shown already: nothing to stop
            escaped = terminal.send(b"\x1b")
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                seen = (terminal.seen_at(line.encode(), escaped) for line in CANCELLED)
                stopped = min((at for at in seen if at is not None), default=None)
                if stopped is not None:
                    run.escape = stopped - terminal.sent_at[-1]
                    break
                if terminal.seen_at(END.encode(), escaped) is not None:
                    break  # the reply had all arrived (only drawing was left): nothing to stop
                time.sleep(0.01)
            return run
        typed = 0
        while True:
            done = terminal.seen_at(END.encode(), sent)
            if done is not None:
                break
            if not type_along:
                time.sleep(0.002)
                continue
            typed += 1
            if typed > 60:  # the prompt is 118 columns wide: start again
                terminal.send(b"\x15")  # ctrl+u: TextArea deletes to the line's start
                time.sleep(0.2)
                typed = 1
            key = terminal.send(b"q")
            try:
                shown = terminal.wait_for(b"q" * typed, key, ECHO_TIMEOUT)
            except RuntimeError:
                import re

                tail = re.sub(rb"\x1b\[[0-9;?]*[a-zA-Z]", b"", bytes(terminal.output[key:]))
                print(typed, tail[-3000:].decode(errors="replace"))
                raise
            run.echoes.append(shown - terminal.sent_at[-1])
            time.sleep(KEY_EVERY)
    finally:
        terminal.close()
        first = fake.close()
    if done is not None and first is not None:
        run.total = done - first
    return run


def app_runs(
    entries: list[dict[str, object]], folder: Path, repeat: int, *, type_along: bool = True
) -> tuple[Run, list[float]]:
    """``repeat`` typed-along app runs (one if a run takes over 5 s), as ``print_times``.

    Returns one run holding every run's key echoes (p95 and max stand on
    more keys: a short reply has time for only a few), and every run's total.
    """
    runs = [app_run(entries, folder, None, type_along=type_along)]
    while len(runs) < repeat and (runs[0].total or 0.0) < 5.0:
        runs.append(app_run(entries, folder, None, type_along=type_along))
    pooled = Run()
    pooled.echoes = [echo for r in runs for echo in r.echoes]
    return pooled, [r.total for r in runs if r.total is not None]


def spread(times: Sequence[float], less: float) -> str:
    """The middle half of ``times`` less ``less`` (quartiles): how far one run may be trusted."""
    if len(times) < 4:
        return ""
    low, _, high = statistics.quantiles(times, n=4)
    return f" ({low - less:.2f}-{high - less:.2f})"


def percentile(values: Sequence[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", default="burst50,chars20k,chars100k,calls1000,fence500")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument(
        "--repeat", type=int, default=3, help="runs per short reply (the median counts)"
    )
    args = parser.parse_args()
    print(f"koroku-tui in a {COLUMNS}x{ROWS} pty; {os.cpu_count()} cores; python {sys.version[:6]}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "notes.txt").write_text("a note\n")
        floors = print_times([{"text": "hi"}], folder, args.repeat)
        # Untyped: a key typed as the one word arrived (~0.02 s) was drawn
        # first in some runs and not in others, and the floor came out 0.02
        # or 0.05 s; taken off a 0.25 s reply, that alone moved its ratio by 0.2x.
        floor_runs = app_runs([{"text": f"hi {END}"}], folder, args.repeat, type_along=False)
        app_floors = floor_runs[1]
        floor = statistics.median(floors)
        app_floor = statistics.median(app_floors) if app_floors else 0.0
        print(
            f"one-word reply from its request: --print {floor:.2f} s{spread(floors, 0)},"
            f" app {app_floor:.2f} s{spread(app_floors, 0)}"
        )
        for name in args.only.split(","):
            entries = script(name, args.quick)
            print_totals = print_times(entries, folder, args.repeat)
            printed = statistics.median(print_totals) - floor
            run, app_totals = app_runs(entries, folder, args.repeat)
            app_total = statistics.median(app_totals) if app_totals else None
            escape_after = min(ESCAPE_AFTER, (app_total or 0.0) / 2) or ESCAPE_AFTER
            escapes = [app_run(entries, folder, escape_after).escape for _ in range(args.repeat)]
            stops = [e for e in escapes if e is not None]
            echoes = [e * 1000 for e in run.echoes] or [0.0]
            total = (app_total or float("nan")) - app_floor
            print(
                f"{name:10s} keys {len(run.echoes):4d}"
                f"  echo p50 {statistics.median(echoes):6.0f} ms"
                f"  p95 {percentile(echoes, 0.95):6.0f} ms  max {max(echoes):6.0f} ms"
                f" | app {total:6.2f} s{spread(app_totals, app_floor)}"
                f"  print {printed:6.2f} s{spread(print_totals, floor)}"
                f"  ratio {total / printed:5.2f}x"
                + (
                    f" | escape max {max(stops):5.2f} s (median {statistics.median(stops):4.2f},"
                    f" {len(stops)} of {len(escapes)} stopped)"
                    if stops
                    else NOTHING_TO_STOP
                ),
                flush=True,
            )


if __name__ == "__main__":
    main()
