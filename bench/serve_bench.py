"""First frame in the browser (``koroku-tui --serve``) beside the terminal's, same session.

Run: ``uv run python bench/serve_bench.py [--rounds 5] [--events 10000]``.
One home holds a session of ``--events`` events (``tui_bench.build_home``).
The server starts once; then, alternating each round, (a) a new headless
Chromium tab opens the printed URL, timed until its terminal shows the
newest message and the key bar (the app's first whole frame), and (b)
``koroku-tui`` starts in a pseudo-terminal, timed until the same texts are
drawn (``terminal_launch``). The tab is closed and its app gone before the
next launch. Printed: medians, and the median of per-round ratios web / terminal.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from terminal_launch import COLUMNS, FOOTER, ROWS, koroku, launch_in_terminal
from tui_bench import BIG, build_home

sys.path.insert(0, str(Path(__file__).parents[1] / "tests"))  # the browser tests' helpers

from helpers.browser_kit import (
    CHROMIUM,
    LAUNCH_ARGS,
    readable_textual_js,
    serve_readable_textual_js,
)
from helpers.processes import wait_until_gone
from helpers.web_kit import descendants
from playwright.sync_api import Browser, ViewportSize, sync_playwright

_SHOWS = """([texts]) => {
  const t = window.korokuTerminal && window.korokuTerminal.terminal;
  if (!t) return false;
  const b = t.buffer.active, lines = [];
  for (let i = 0; i < b.length; i++) lines.push(b.getLine(i).translateToString(true));
  const text = lines.join("\\n");
  return texts.every((x) => text.includes(x));
}"""
# Cell size of the page's terminal at 16 px: the viewport gives about the terminal's 120x40.
_VIEWPORT: ViewportSize = {"width": COLUMNS * 10, "height": ROWS * 20}


def open_in_browser(browser: Browser, url: str, texts: list[str], script: str) -> float:
    """Seconds from opening ``url`` in a new tab until its terminal shows ``texts``."""
    page = browser.new_page(viewport=_VIEWPORT)
    serve_readable_textual_js(page, script)
    started = time.monotonic()
    page.goto(url)
    page.wait_for_function(_SHOWS, arg=[texts], timeout=60_000)
    seconds = time.monotonic() - started
    page.close()
    return seconds


def start_server(home: Path) -> tuple[subprocess.Popen[str], str]:
    """``koroku-tui --serve`` on ``home`` (a server address that refuses: nothing leaves)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GOOGLE_", "GEMINI_"))}
    env |= {"GEMINI_API_KEY": "bench-key", "GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:9"}
    command = [*koroku(home), "--serve"]
    server = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, text=True)
    assert server.stdout is not None
    return server, server.stdout.readline().strip()


def main(rounds: int, events: int) -> None:
    with tempfile.TemporaryDirectory(prefix="koroku-serve-bench-") as folder:
        home = Path(folder) / "home"
        build_home(home, events)
        texts = [f"Final answer {events - 1}.", FOOTER]
        server, url = start_server(home)
        script = readable_textual_js()
        web: list[float] = []
        terminal: list[float] = []
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(
                    executable_path=str(CHROMIUM), args=LAUNCH_ARGS
                )
                for round_ in range(rounds + 1):  # the first round is untimed: caches
                    seconds = open_in_browser(browser, url, texts, script)
                    wait_until_gone(descendants(server.pid), within=20)
                    launch = launch_in_terminal(koroku(home), *texts)
                    if round_:
                        web.append(seconds)
                        terminal.append(launch.wall)
                browser.close()
        finally:
            server.terminate()
            server.wait(timeout=30)
    print(f"First frame of a {events:,}-event session, {rounds} alternating rounds after one:")
    for name, runs in (("browser (--serve)", web), ("terminal", terminal)):
        print(
            f"{name:>18}: median {statistics.median(runs) * 1e3:7.1f} ms "
            f"(min {min(runs) * 1e3:.1f}, max {max(runs) * 1e3:.1f})"
        )
    ratios = [w / t for w, t in zip(web, terminal, strict=True)]
    print(f"browser / terminal: {statistics.median(ratios):.2f}x (median of per-round ratios)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--events", type=int, default=BIG)
    args = parser.parse_args()
    main(args.rounds, args.events)
