"""Keys read from the terminal in one burst edit the prompt in the order they were typed.

A fast typist's keys, a macro, or keys typed while the app is busy reach it
in one read: ``abc`` Backspace ``xyz`` left ``abcxy`` in the prompt, because
the Backspace was applied after ``xyz`` (textual#6605: a widget's own
bindings ran only once the key had bubbled up to the App). Each case types
its burst through the parser the terminal driver reads with; the terminal
itself is driven in ``test_e2e_tmux.py``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from google import genai
from helpers.ui_kit import build, settle, texts, type_raw, wait_until
from textual.widgets import Input

from koroku_tui.fake_gemini import FakeGemini, text_reply
from koroku_tui.fake_gemini.script import last_user_text
from koroku_tui.ui.history import HistoryScreen
from koroku_tui.ui.main.blocks import UserBlock
from koroku_tui.ui.main.prompt import Prompt

LEFT, HOME, DELETE, UP = "\x1b[D", "\x1b[H", "\x1b[3~", "\x1b[A"


@pytest.mark.parametrize(
    ("burst", "left"),
    [
        ("abc\x7fxyz", "abxyz"),  # Backspace as most terminals send it
        ("abc\x08xyz", "abxyz"),  # ctrl+h
        ("ab cd\x17xy", "ab xy"),  # ctrl+w: the word before the cursor
        ("abc\x15xyz", "xyz"),  # ctrl+u: the line before the cursor
        (f"abc{LEFT}{LEFT}xy", "axybc"),
        (f"abc{LEFT}{DELETE}xy", "abxy"),
        (f"abc{HOME}xy", "xyabc"),
        (f"ab\ncd{UP}X", "abX\ncd"),  # ctrl+j, then up to the first line
        (f"abc\x7f\x7f\x7f\x7fxyz{LEFT}\x7f", "xz"),
    ],
)
async def test_editing_keys_in_a_burst_apply_in_order(
    client: genai.Client, tmp_path: Path, burst: str, left: str
) -> None:
    app = build(tmp_path, client)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        await type_raw(pilot, app, burst)
        assert app.query_one(Prompt).text == left


@pytest.mark.parametrize(
    ("burst", "sent", "kept"),
    [
        ("abc\x7fxyz\rmore\x7fe", "abxyz", "more"),
        (f"abc{HOME}\rxyz", "abc", "xyz"),  # Enter with the cursor before the text
    ],
)
async def test_a_burst_with_enter_sends_what_was_typed_and_keeps_what_followed(
    fake: FakeGemini, client: genai.Client, tmp_path: Path, burst: str, sent: str, kept: str
) -> None:
    fake.add(text_reply("Sent."))
    app = build(tmp_path, client)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        await type_raw(pilot, app, burst)
        await wait_until(pilot, lambda: fake.generate_requests != [], "the message sent")
        assert last_user_text(fake.generate_requests[0]) == sent
        assert texts(app, UserBlock) == [sent]
        assert app.query_one(Prompt).text == kept


async def test_the_history_search_box_edits_a_burst_in_order(
    client: genai.Client, tmp_path: Path
) -> None:
    app = build(tmp_path, client)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        await pilot.press("ctrl+r")
        await settle(pilot, app)
        assert isinstance(app.screen, HistoryScreen)
        search = app.screen.query_one("#history-search", Input)
        await type_raw(pilot, app, "d")  # a letter typed on the list moves to the search box
        await wait_until(pilot, lambda: app.focused is search, "the search box focused")
        await type_raw(pilot, app, f"eplox\x7fy ab\x17{LEFT}{LEFT}{DELETE}")
        assert search.value == "deplo "
