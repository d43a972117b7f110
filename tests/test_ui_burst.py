"""Keys read from the terminal in one burst act as the same keys typed slowly.

A fast typist's keys, a macro, or keys typed while the app is busy reach it
in one read: ``abc`` Backspace ``xyz`` left ``abcxy`` in the prompt, because
the Backspace was applied after ``xyz`` (textual#6605: a widget's own
bindings ran only once the key had bubbled up to the App), and a key bound by
a screen (ctrl+g's rewind list, Tab, the ``/`` list's Tab, ctrl+t in the
history) acted after the keys typed after it, which went where the focus had
been (``ui.key_order``). Each case types its burst through the parser the
terminal driver reads with; the terminal itself is driven in
``test_typing_tmux.py``.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest
from google import genai
from helpers.slow_key import focus_a_slow_key
from helpers.ui_kit import (
    build,
    read,
    seed_session,
    settle,
    texts,
    type_raw,
    type_slowly,
    wait_until,
)
from textual.widgets import Input, TextArea

from koroku_tui.fake_gemini import FakeGemini, text_reply
from koroku_tui.fake_gemini.script import last_user_text
from koroku_tui.ui import key_order
from koroku_tui.ui.app import KorokuApp
from koroku_tui.ui.history import HistoryScreen
from koroku_tui.ui.history.browser import SessionBrowser
from koroku_tui.ui.key_order import KeyOrder
from koroku_tui.ui.main.blocks import UserBlock
from koroku_tui.ui.main.prompt import Prompt

LEFT, HOME, DELETE, UP, DOWN = "\x1b[D", "\x1b[H", "\x1b[3~", "\x1b[A", "\x1b[B"
TAB, ENTER, BACKSPACE, CTRL_G, CTRL_R, CTRL_T = "\t", "\r", "\x7f", "\x07", "\x12", "\x14"
ESCAPE = "\x1b"


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


async def what_shows(app: KorokuApp) -> tuple[object, ...]:
    """What the user sees once the keys have acted: the screen on top, the focused widget
    and its text, the prompt's text, and the sessions listed (titles)."""
    focused = app.focused
    text = focused.value if isinstance(focused, Input) else None
    text = focused.text if isinstance(focused, TextArea) else text
    assert app.store is not None
    sessions = [info.title for info in await app.store.list_sessions()]
    return type(app.screen).__name__, focused and focused.id, text, app.main.prompt.text, sessions


async def after_typing(
    tmp_path: Path, client: genai.Client, keys: str | list[str], *, burst: bool
) -> object:
    """What shows after ``keys``, typed in one burst or slowly, on a stored two-turn session."""
    await seed_session(tmp_path, 2)
    (tmp_path / "notes.txt").write_text("for the @ picker\n")
    app = build(tmp_path, client)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot, app)
        await (type_raw if burst else type_slowly)(pilot, app, keys)
        return await what_shows(app)


@pytest.mark.parametrize(
    "keys",
    [
        pytest.param(f"ab{CTRL_G}{ENTER}x", id="ctrl+g Enter rewinds, x in the prompt"),
        pytest.param(
            [f"{CTRL_G}{ESCAPE}", "x"], id="ctrl+g Escape closes the list, x in the prompt"
        ),
        pytest.param(f"{CTRL_G}{UP}{UP}{ENTER}", id="ctrl+g Up Up Enter rewinds two turns"),
        # The Enter bubbling back up to the App was followed twice: the second walk let y
        # go before the rewound message was put back in the empty prompt ("y" was left).
        pytest.param(f"{CTRL_G}{ENTER}y", id="ctrl+g Enter on an empty prompt, y after it"),
        pytest.param(f"{CTRL_G}{ENTER}{CTRL_G}{ENTER}y", id="two rewinds on an empty prompt"),
        pytest.param(f"{CTRL_G}{UP}{ENTER}ab{CTRL_G}{ESCAPE}cd", id="rewind, type, list again"),
        pytest.param(f"ab{TAB}xy", id="Tab to the tool list, letters back to the prompt"),
        pytest.param(f"/he{TAB}x", id="the / list's Tab opens /help, x typed on it"),
        pytest.param(f"@no{ENTER}x", id="the @ picker's Enter writes the path, nothing sent"),
        # The text held behind Home: Enter still waits for the walk "@" started.
        pytest.param(f"{HOME}@no{ENTER}x", id="Home, then the @ picker's Enter writes the path"),
        pytest.param(f"{CTRL_R}{CTRL_T}ab", id="ctrl+t shows the trash, letters search"),
        pytest.param(f"{CTRL_R}{DOWN}{UP}rnew{ENTER}", id="r after a move renames to new"),
        pytest.param(f"{CTRL_R}{DOWN}{UP}dy", id="d after a move asks, its y dropped"),
        pytest.param(f"{CTRL_R}{DOWN}{UP}{ENTER}ab", id="Enter opens, letters in its prompt"),
    ],
)
async def test_a_burst_of_keys_bound_by_screens_acts_as_typed_slowly(
    client: genai.Client, tmp_path: Path, keys: str | list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The jobs these keys start (the rewind list's read) end: on a loaded machine too.
    monkeypatch.setattr(KeyOrder, "WORKER_WAIT", 60.0)
    slowly = await after_typing(tmp_path / "slowly", client, keys, burst=False)
    assert await after_typing(tmp_path / "burst", client, keys, burst=True) == slowly


async def test_the_first_burst_in_the_history_screen_searches_backspace_included(
    client: genai.Client, tmp_path: Path
) -> None:
    shown = await after_typing(tmp_path, client, f"{CTRL_R}deplox{BACKSPACE}y", burst=True)
    assert shown == ("HistoryScreen", "history-search", "deploy", "", ["question 0"])


async def test_backspace_on_the_list_edits_the_search(client: genai.Client, tmp_path: Path) -> None:
    shown = await after_typing(tmp_path, client, f"{CTRL_R}dep{DOWN}{BACKSPACE}", burst=False)
    assert shown == ("HistoryScreen", "history-search", "de", "", ["question 0"])


async def test_text_held_behind_a_key_waits_for_the_field_not_for_the_searches_it_starts(
    client: genai.Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Keys read behind a key still on its way wait their turn, one by one. Text among
    them went on only once the search each letter started had ended: 0.27 s a key in the
    history (its debounce), 6 s before a sentence typed fast showed in a terminal. Text
    behind text for the same field goes into the field's queue, as unheld text does; the
    key after the last of it still waits for the searches."""
    monkeypatch.setattr(SessionBrowser, "SEARCH_DEBOUNCE", 60.0)  # no search ends here
    monkeypatch.setattr(KeyOrder, "WORKER_WAIT", 60.0)  # nor is one given up on
    monkeypatch.setattr(KeyOrder, "STUCK", 60.0)
    app = build(tmp_path, client)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        await pilot.press("ctrl+r")
        await settle(pilot, app)
        search = app.screen.query_one("#history-search", Input)
        search.focus()
        await settle(pilot, app)
        for token in read(f"{HOME}deploy script"):  # Home first: the text is held behind it
            token.set_sender(app)
            app.post_message(token)
        await wait_until(pilot, lambda: search.value == "deploy script", "the text typed")


class GivenUp(logging.Handler):
    """Set once ``KeyOrder`` logs that it gave a key up."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.told = asyncio.Event()

    def emit(self, record: logging.LogRecord) -> None:
        self.told.set()


async def test_a_key_that_never_settles_stops_holding_the_keys_after_it(
    client: genai.Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Given up on after ``STUCK`` seconds whether or not keys wait behind it: a key typed
    long after it went on at once (it was given up on only from then, seconds later)."""
    monkeypatch.setattr(KeyOrder, "STUCK", 0.2)
    given_up = GivenUp()
    logging.getLogger(key_order.__name__).addHandler(given_up)
    app = build(tmp_path, client)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        hangs = await focus_a_slow_key(pilot, app)
        for token in read(DOWN):  # not text: it stays on the focused widget
            token.set_sender(app)
            app.post_message(token)
        try:  # waited for without the pilot, whose pause waits for every widget's queue
            await asyncio.wait_for(hangs.reached.wait(), 10)
            await asyncio.wait_for(given_up.told.wait(), 10)
            assert app.key_order.idle
        finally:
            hangs.release.set()
            logging.getLogger(key_order.__name__).removeHandler(given_up)
