"""Koroku in a real browser: headless Chromium on ``koroku-tui --serve``, the strict fake.

What a user does in the page: load it with the token, type a message and see
the answer stream, approve a ``write_file``, open the history (a screenshot
is taken there and checked by the text on the screen). Closing the tab
mid-answer stores the partial answer as Escape does; closing it while a
command runs kills the command.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.browser_kit import (
    chromium,
    needs_chromium,
    open_koroku,
    send,
    stored,
    wait_for_screen,
)
from helpers.processes import kill_leftovers, wait_for_pid, wait_until_gone
from helpers.web_kit import serving
from playwright.sync_api import Browser
from test_stop_signals import LONG_COMMAND

from koroku_tui.agent.loop.guardrail import INTERRUPTED_BY_STOP
from koroku_tui.config.settings import UNSENT_FILENAME
from koroku_tui.fake_gemini import FakeGemini, Reply, Text, call_reply, text_reply

pytestmark = [needs_chromium, pytest.mark.timeout(120)]
__all__ = ["chromium"]  # the module's browser fixture


def test_a_conversation_in_the_browser(fake: FakeGemini, tmp_path: Path, chromium: Browser) -> None:
    fake.add(
        text_reply("Hello from the fake, streamed in pieces.", pieces=4, chunk_delay=0.05),
        call_reply(("write_file", {"path": "note.txt", "content": "from the browser"})),
        text_reply("The note is written."),
    )
    with serving(fake, tmp_path / "home", cwd=tmp_path) as served:
        page = open_koroku(chromium, served.url)
        shown = wait_for_screen(page, "Message Koroku")
        assert "alt+l New" in shown  # the browser keeps ctrl+l: the key bar shows its stand-in
        send(page, "hello")
        wait_for_screen(page, "Hello from the fake, streamed in pieces.")
        send(page, "write a note")
        wait_for_screen(page, "Allow once")
        page.keyboard.press("y")
        wait_for_screen(page, "The note is written.")
        assert (tmp_path / "note.txt").read_text() == "from the browser"
        page.keyboard.press("Control+r")
        wait_for_screen(page, "alt+t Trash")  # the history, with the browser's key for the trash
        history = wait_for_screen(page, "hello")  # its list holds the conversation
        page.screenshot(path=str(tmp_path / "history.png"))
        assert "Type to search all sessions" in history
        page.close()


def test_closing_the_tab_stores_the_partial_answer_and_kills_the_command(
    fake: FakeGemini, tmp_path: Path, chromium: Browser
) -> None:
    home, workspace = tmp_path / "home", tmp_path / "work"
    workspace.mkdir()
    fake.add(
        Reply(((Text("The first half of it."),), (Text(" Never shown."),)), chunk_delay=60),
        call_reply(("run_command", {"command": LONG_COMMAND})),
    )
    pids: list[int] = []
    with serving(fake, home, cwd=workspace) as served:
        page = open_koroku(chromium, served.url)
        wait_for_screen(page, "Message Koroku")
        send(page, "tell me")
        wait_for_screen(page, "The first half of it.")
        send(page, "and then")  # queued behind the running turn
        wait_for_screen(page, "Queued")
        [app] = served.app_processes()
        page.close()
        assert wait_until_gone([app], within=20) == [], "the app outlived its tab"
        answer = stored(home / "koroku.db")[-1].model_dump_json()
        assert "The first half of it." in answer and "Never shown." not in answer
        assert "and then" in (home / UNSENT_FILENAME).read_text()  # kept for the next start

        page = open_koroku(chromium, served.url)
        wait_for_screen(page, "and then")  # the next tab's prompt holds the queued message
        send(page, " run the long command")
        wait_for_screen(page, "Allow once")
        page.keyboard.press("y")
        try:
            pids = [wait_for_pid(workspace / "shell.pid"), wait_for_pid(workspace / "sleep.pid")]
            [app] = served.app_processes()
            page.close()
            assert wait_until_gone([*pids, app], within=20) == [], "the command outlived its tab"
        finally:
            kill_leftovers(pids)
    events = stored(home / "koroku.db")
    [response] = events[-1].function_responses
    assert response.function_response.response == {"error": INTERRUPTED_BY_STOP}


def test_the_token_stays_with_koroku_s_own_page(
    fake: FakeGemini, tmp_path: Path, chromium: Browser
) -> None:
    """Cookies are shared by every port of 127.0.0.1: another server there (the fake
    Gemini stands for one) would get a token kept in one. The URL keeps it instead,
    so a reload and the ended page's link still open Koroku."""
    with serving(fake, tmp_path / "home", cwd=tmp_path) as served:
        page = open_koroku(chromium, served.url)
        wait_for_screen(page, "Message Koroku")
        page.goto(fake.base_url + "/another-server")  # the same browser, another local server
        [visit] = [request for request in fake.requests if request.path == "/another-server"]
        assert served.token not in str(visit.headers), "another port got Koroku's token"
        assert served.token not in str(page.context.cookies())

        page.go_back()
        wait_for_screen(page, "Message Koroku")
        page.reload()
        wait_for_screen(page, "Message Koroku")
        page.click("#terminal")
        page.keyboard.press("Control+q")
        page.get_by_text("Start another").click()
        wait_for_screen(page, "Message Koroku")
        page.close()
