"""Debian's Chromium, headless, driven by Playwright: Koroku's page as a user opens it.

Playwright's own browsers are never downloaded: the system's ``/usr/bin/chromium``
runs (``.ci/run`` installs it). The terminal draws on a canvas, so the
screen's text is read from xterm.js's buffer: the page's ``textual.js`` is
served to this browser with one statement added that keeps the terminal
object where the test can read it (the page itself is unchanged).
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from helpers.agent_kit import stored_events
from playwright.sync_api import Browser, Page, sync_playwright
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from koroku_tui.events import SessionEvent
from koroku_tui.modes.web.page import static_folder

CHROMIUM = Path("/usr/bin/chromium")
LAUNCH_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
needs_chromium = pytest.mark.skipif(
    not CHROMIUM.exists() and not os.environ.get("CI"),
    reason="chromium is not installed (CI installs it; locally: apt-get install chromium)",
)

_CREATED = "const t=new w(e,{ping:r});"
_SCREEN_JS = """() => {
  const terminal = window.korokuTerminal && window.korokuTerminal.terminal;
  if (!terminal) return "";
  const buffer = terminal.buffer.active, lines = [];
  for (let i = 0; i < buffer.length; i++) lines.push(buffer.getLine(i).translateToString(true));
  return lines.join("\\n");
}"""


def readable_textual_js() -> str:
    """textual-serve's ``textual.js`` keeping its terminal in ``window.korokuTerminal``."""
    source = (static_folder() / "js" / "textual.js").read_text()
    assert _CREATED in source, "textual.js changed: update browser_kit"
    return source.replace(_CREATED, _CREATED + "window.korokuTerminal=t;")


@pytest.fixture(scope="module")
def chromium() -> Iterator[Browser]:
    """One headless Chromium for a test module."""
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS)
        yield browser
        browser.close()


def serve_readable_textual_js(page: Page, script: str) -> None:
    """Answer ``page``'s requests for textual.js (its URL carries the token) with ``script``."""
    page.route(
        lambda url: urlsplit(url).path == "/static/js/textual.js",
        lambda route: route.fulfill(body=script, content_type="application/javascript"),
    )


def open_koroku(browser: Browser, url: str) -> Page:
    """A new tab on ``url`` whose screen the test can read, once its first frame is drawn."""
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    serve_readable_textual_js(page, readable_textual_js())
    page.goto(url)
    page.wait_for_function("() => document.body.classList.contains('-first-byte')")
    # As a user does before typing: the click lands on the transcript, which
    # takes the app's focus; the keys typed next must reach the prompt in order.
    page.click("#terminal")
    return page


def screen(page: Page) -> str:
    """The terminal's text as it shows now."""
    text: str = page.evaluate(_SCREEN_JS)
    return text


def wait_for_screen(page: Page, text: str, timeout: float = 30.0) -> str:
    """Wait until ``text`` shows on the screen; returns the screen (a failure shows it)."""
    try:
        page.wait_for_function(
            f"() => ({_SCREEN_JS})().includes({json.dumps(text)})", timeout=timeout * 1000
        )
    except PlaywrightTimeoutError:
        raise AssertionError(f"{text!r} never showed; the screen:\n{screen(page)}") from None
    return screen(page)


def send(page: Page, text: str) -> None:
    """Type ``text`` into the page's terminal, then Enter."""
    page.keyboard.type(text)
    page.keyboard.press("Enter")


def stored(database: Path) -> list[SessionEvent]:
    """The current session's events in ``database``, read in a thread of its own
    (Playwright's sync API keeps an event loop running in this one)."""
    with ThreadPoolExecutor(1) as thread:
        return thread.submit(asyncio.run, stored_events(database)).result()
