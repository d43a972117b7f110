"""A fast answer never takes the keyboard: Escape stops it, and the screen keeps being drawn.

The fake streams its chunks back to back (no delay), as a fast model on a
fast line does: the app reads them faster than it can draw them.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from google import genai
from helpers.big_step import drawn, one_big_step
from helpers.ui_kit import build, plain, send, settle, texts
from textual import events
from textual.message import Message
from textual.screen import Screen

from koroku_tui.config.settings import Settings
from koroku_tui.fake_gemini import FakeGemini, call_reply, text_reply
from koroku_tui.ui.app import KorokuApp
from koroku_tui.ui.main import messages as m
from koroku_tui.ui.main.blocks import AnswerBlock, NoticeBlock, ToolRow
from koroku_tui.ui.main.call_list import CallList
from koroku_tui.ui.main.prompt import Prompt
from koroku_tui.ui.main.screen import MainScreen
from koroku_tui.ui.main.transcript import Transcript

CHUNKS = 12_000
ANSWER = "".join(f"word{i} " + ("\n\n" if i % 40 == 39 else "") for i in range(CHUNKS))


def stored_events(home: Path) -> list[dict[str, Any]]:
    """Every stored event as its JSON (read as another process would)."""
    db = sqlite3.connect(Settings(home=home).database_path)
    try:
        return [json.loads(j) for (j,) in db.execute("select event_json from messages")]
    finally:
        db.close()


def watch_main_posts(monkeypatch: pytest.MonkeyPatch, seen: Callable[[Message], object]) -> None:
    """Show ``seen`` every message posted to the main screen, as it is posted."""
    post = MainScreen.post_message

    def watching(screen: MainScreen, message: Message) -> bool:
        seen(message)
        return post(screen, message)

    monkeypatch.setattr(MainScreen, "post_message", watching)


def stored_answer(tmp_path: Path) -> str:
    """The text of the stored model reply (the kept part when it was cut)."""
    rows = stored_events(tmp_path)
    parts = [p for row in rows if row.get("role") == "model" for p in row.get("parts", [])]
    return "".join(str(p.get("text", "")) for p in parts)


def press_mid_stream(app: KorokuApp, key: str, taken: Callable[[], bool]) -> threading.Event:
    """Press ``key`` as a terminal does (from the driver's thread) once the answer streams.

    The returned event is set when ``taken()`` became true while the turn still
    ran. Pilot is not used: it waits for the process to be idle, which a fast
    stream is not.
    """
    streaming, in_time = threading.Event(), threading.Event()

    def press() -> None:
        if not streaming.wait(30):
            return
        app.call_from_thread(app.post_message, events.Key(key, key if len(key) == 1 else None))
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and app.running:
            if taken():
                in_time.set()
                return
            time.sleep(0.001)

    assert app.agent is not None
    app.agent.on("on_text_delta", lambda delta: streaming.set())
    threading.Thread(target=press, daemon=True).start()
    return in_time


async def test_escape_stops_a_fast_stream_before_it_ends(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    fake.add(text_reply(ANSWER, pieces=CHUNKS))
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        press_mid_stream(app, "escape", lambda: False)
        await send(pilot, app, "go")
        await settle(pilot, app)
        assert any("Interrupted" in t for t in texts(app, NoticeBlock))
        kept = stored_answer(tmp_path)
        assert kept and len(kept) < len(ANSWER)  # stopped mid-stream, what arrived kept
        assert ANSWER.startswith(kept)


async def test_a_key_typed_during_a_fast_stream_is_drawn_before_it_ends(
    fake: FakeGemini, client: genai.Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake.add(text_reply(ANSWER, pieces=CHUNKS))
    app = build(tmp_path, client)
    drawn_while_running: list[str] = []  # the prompt's text in each frame drawn mid-turn
    display = KorokuApp._display

    def recording(self: KorokuApp, screen: Screen[object], renderable: object) -> None:
        if self.running and isinstance(screen, MainScreen):
            drawn_while_running.append(self.query_one(Prompt).text)
        display(self, screen, renderable)  # type: ignore[arg-type]

    monkeypatch.setattr(KorokuApp, "_display", recording)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        prompt = app.query_one(Prompt)
        in_time = press_mid_stream(app, "q", lambda: prompt.text == "q")
        await send(pilot, app, "go")
        await settle(pilot, app)
        assert in_time.is_set()  # typed into the prompt while the answer still streamed
        assert "q" in drawn_while_running  # and drawn then, not once it ended
        assert len(stored_answer(tmp_path)) == len(ANSWER)


async def test_the_hooks_reach_the_screen_in_batches(
    fake: FakeGemini, client: genai.Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Textual draws a screen only when its queue runs empty: one message per
    # chunk kept it full, and nothing was drawn until the answer ended.
    fake.add(
        call_reply(*[("read_memory", {"date": "list"}) for _ in range(40)]),
        text_reply(ANSWER, pieces=CHUNKS),
    )
    posted: list[Message] = []
    watch_main_posts(monkeypatch, posted.append)
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await send(pilot, app, "go")
        await settle(pilot, app)
        hooks = [p for p in posted if isinstance(p, (m.AgentMessage, m.AgentBatch))]
        assert 0 < len(hooks) < CHUNKS / 20
        assert len(app.query(ToolRow)) == 40  # every call shown, whatever the batching
        assert "word11999" in plain(app.query(AnswerBlock).last())


async def test_a_step_of_many_calls_is_one_list_of_every_call_in_order_and_finished(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    # A thousand ToolRow widgets took seconds to mount, style and lay out,
    # and the keys waited: a step of many calls is one widget that draws the lines in view.
    async with one_big_step(fake, client, tmp_path, 150) as (app, _):
        assert [plain(r) for r in app.query(ToolRow)] == []
        [calls] = app.query(CallList)
        assert [call.call_id for call in calls.calls] == [f"call-{i}" for i in range(150)]
        assert all(call.done for call in calls.calls)
        lines = drawn(calls)
        for day in ("00-01-2026", "149-01-2026"):
            [line] = [line for line in lines if f'"date": "{day}"' in line]
            assert line.startswith(("✓ read_memory", "✗ read_memory"))
        assert "Done." in plain(app.query(AnswerBlock).last())
        blocks = list(app.query_one(Transcript).children)
        assert blocks.index(app.query(AnswerBlock).last()) > blocks.index(calls)  # below
