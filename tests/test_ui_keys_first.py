"""A key typed while an answer streams is drawn before the stream reads on.

Each key goes through several turns of the event loop (App, prompt, its
change, the screen's frame), and each turn waited for a share of a fast
stream: keys showed ~100 ms after they were typed (issue 22, item 21). The
App tells ``ui.input_first`` of each key, and the hooks' feed holds the
stream until the frame showing it is drawn.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from google import genai
from helpers.ui_kit import build, send, settle
from test_ui_fast_stream import ANSWER, CHUNKS, press_mid_stream, stored_answer
from textual.message import Message
from textual.screen import Screen
from textual.widgets import TextArea

from koroku_tui.fake_gemini import FakeGemini, text_reply
from koroku_tui.ui import input_first
from koroku_tui.ui.app import KorokuApp
from koroku_tui.ui.input_first import InputFirst
from koroku_tui.ui.main.prompt import Prompt
from koroku_tui.ui.main.screen import MainScreen


async def test_the_stream_reads_on_only_once_the_key_typed_is_drawn(
    fake: FakeGemini, client: genai.Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(input_first, "KEY_FIRST_WAIT", 60.0)  # however slow this machine
    fake.add(text_reply(ANSWER, pieces=CHUNKS))
    app = build(tmp_path, client)
    deltas = 0
    typed_at: list[int] = []  # the text deltas read when the prompt took the key
    shown_at: list[int] = []  # ... when a frame first showed it
    display = KorokuApp._display

    def recording(self: KorokuApp, screen: Screen[object], renderable: object) -> None:
        if typed_at and not shown_at and isinstance(screen, MainScreen):
            shown_at.append(deltas)
        display(self, screen, renderable)  # type: ignore[arg-type]

    monkeypatch.setattr(KorokuApp, "_display", recording)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        prompt = app.query_one(Prompt)

        def changed(message: Message) -> None:
            if isinstance(message, TextArea.Changed) and prompt.text == "q" and not typed_at:
                typed_at.append(deltas)

        def delta(_: object) -> None:
            nonlocal deltas
            deltas += 1

        prompt.message_signal.subscribe(app, changed)
        assert app.agent is not None
        app.agent.on("on_text_delta", delta)  # after the feed's: counts what it let through
        in_time = press_mid_stream(app, "q", lambda: prompt.text == "q")
        await send(pilot, app, "go")
        await settle(pilot, app)
        assert in_time.is_set()  # typed while the answer streamed
        assert typed_at and shown_at
        assert shown_at == typed_at  # nothing more was read until the key was drawn
        assert typed_at[0] < CHUNKS / 2
        assert len(stored_answer(tmp_path)) == len(ANSWER)


async def test_a_key_never_drawn_holds_the_stream_a_moment_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A key held behind a long job (``ui.key_order``) must not stop the answer."""
    monkeypatch.setattr(input_first, "KEY_FIRST_WAIT", 0.01)
    keys = InputFirst()
    assert keys.wait() is None  # no key typed: the stream goes on at once
    keys.typed("a")
    keys.typed("b")
    keys.drawn("a")
    waiting = keys.wait()
    assert waiting is not None
    await waiting  # "b" is never drawn: the wait ends anyway
    assert keys.wait() is None
    keys.typed("c")
    waiting = keys.wait()
    assert waiting is not None
    task = asyncio.ensure_future(waiting)
    keys.drawn("c")
    await task
    assert keys.wait() is None
