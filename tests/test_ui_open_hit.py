"""Opening a search hit from the history screen shows the session at the hit, marked.

Small pages and bound (patched, as in test_ui_paging) put the hit several
pages away from the end of a few hundred messages.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from google import genai
from helpers.paging_kit import BOUND, use_small_pages
from helpers.ui_kit import build, plain, send, settle
from textual.pilot import Pilot
from textual.widget import Widget
from textual.widgets import Input

from koroku_tui.config.settings import Settings
from koroku_tui.events import (
    FCMetadata,
    FunctionCallData,
    FunctionCallPart,
    FunctionResponseData,
    FunctionResponsePart,
    SessionEvent,
    TextPart,
)
from koroku_tui.fake_gemini import FakeGemini, text_reply
from koroku_tui.store import SessionManager
from koroku_tui.ui.app import KorokuApp
from koroku_tui.ui.history import HistoryScreen, OpenSession
from koroku_tui.ui.main.blocks import ToolRow
from koroku_tui.ui.main.screen import MainScreen
from koroku_tui.ui.main.sidebar import ToolSidebar
from koroku_tui.ui.main.transcript import Transcript

HIT = 30
"""The turn whose answer holds the word searched for (of 80: far from the end)."""


@pytest.fixture(autouse=True)
def small_pages(monkeypatch: pytest.MonkeyPatch) -> None:
    use_small_pages(monkeypatch)
    monkeypatch.setattr(
        "koroku_tui.ui.main.session_jobs.HIT_MARK_SECONDS",
        600.0,
    )


def turn(n: int) -> list[SessionEvent]:
    return [
        SessionEvent(role="user", parts=[TextPart(text=f"question {n}")]),
        SessionEvent(role="model", parts=[TextPart(text=answer(n))]),
    ]


def answer(n: int) -> str:
    return f"answer {n} about the xylophone" if n == HIT else f"answer {n}"


async def seed(tmp_path: Path) -> None:
    store = SessionManager(Settings(home=tmp_path).database_path)
    await store.initialize()
    await store.add_messages([event for n in range(80) for event in turn(n)])
    await store.close()


def on_screen(transcript: Transcript, text: str) -> Widget | None:
    """The mounted block showing ``text`` if it lies in the visible part of the transcript."""
    for block in transcript.children:
        if text in plain(block) and transcript.region.overlaps(block.region):
            return block
    return None


async def test_opening_a_search_hit_shows_it_marked_then_pages_to_the_live_end(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    await seed(tmp_path)
    fake.add(text_reply("the fresh answer"))
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await pilot.press("ctrl+r")
        await settle(pilot, app)
        assert isinstance(app.screen, HistoryScreen)
        await pilot.press("slash")
        app.screen.query_one("#history-search", Input).value = "xylophone"
        await pilot.press("enter")  # to the hits
        await settle(pilot, app)
        await pilot.press("enter")  # the hit, in the raw history
        await settle(pilot, app)
        await pilot.press("enter")  # open the session there
        await settle(pilot, app)
        assert not isinstance(app.screen, HistoryScreen)

        transcript = app.query_one(Transcript)
        hit = on_screen(transcript, "xylophone")
        assert hit is not None, "the hit is not in view"
        assert hit.has_class("-hit")
        assert on_screen(transcript, "answer 79") is None  # not opened at the end

        await scroll_to_live_end(pilot, app)
        assert on_screen(transcript, "answer 79") is not None

        await send(pilot, app, "a new question")
        await settle(pilot, app)
        assert on_screen(transcript, "the fresh answer") is not None
        assert not hit.has_class("-hit")  # sending ends the mark
        assert len(transcript.children) <= BOUND


async def scroll_to_live_end(pilot: Pilot[Any], app: KorokuApp) -> None:
    """Scroll down as the user would until the newest message is mounted and no page comes."""
    transcript = app.query_one(Transcript)
    for _ in range(20):
        transcript.scroll_end(animate=False, immediate=True)
        await settle(pilot, app)
        if not transcript.edges.away:
            transcript.scroll_end(animate=False, immediate=True)
            await settle(pilot, app)
            return
    raise AssertionError("scrolling down never reached the live end")


async def test_a_hit_a_rewind_abandoned_opens_at_the_rewind_marker(
    client: genai.Client, tmp_path: Path
) -> None:
    store = SessionManager(Settings(home=tmp_path).database_path)
    await store.initialize()
    ids = await store.add_messages([event for n in range(60) for event in turn(n)])
    await store.rewind(ids[2 * 20])  # before "question 20": 20..59 abandoned
    await store.add_messages([event for n in range(100, 160) for event in turn(n)])
    session_id = store.session_id
    await store.close()
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        screen = app.screen
        assert isinstance(screen, MainScreen)
        # What the history screen hands back for Enter on a hit in "answer 40".
        screen.sessions.history_closed(OpenSession(session_id, message_id=ids[2 * 40 + 1]))
        await settle(pilot, app)
        transcript = app.query_one(Transcript)
        marker = on_screen(transcript, "Rewound to before message")
        assert marker is not None and marker.has_class("-hit")
        assert on_screen(transcript, "answer 40") is None  # abandoned: not in the transcript
        assert on_screen(transcript, "answer 159") is None


async def test_a_hit_on_a_tool_result_opens_at_its_row_and_the_sidebar_lists_every_call(
    client: genai.Client, tmp_path: Path
) -> None:
    results: list[int] = []
    async with SessionManager(Settings(home=tmp_path).database_path) as store:
        session_id = store.session_id
        for n in range(30):  # 120 rows: question, a call, its result, an answer
            args = {"path": f"file_{n}.txt"}
            call = FunctionCallData(name="read_file", args=args, id=f"c{n}")
            response = FunctionResponseData(name="read_file", response={"output": "ok"}, id=f"c{n}")
            meta = FCMetadata(name="read_file", args=args)
            ids = await store.add_messages(
                [
                    SessionEvent(role="user", parts=[TextPart(text=f"question {n}")]),
                    SessionEvent(role="model", parts=[FunctionCallPart(function_call=call)]),
                    SessionEvent(
                        role="user",
                        parts=[FunctionResponsePart(function_response=response, fc_metadata=meta)],
                    ),
                    SessionEvent(role="model", parts=[TextPart(text=f"answer {n}")]),
                ]
            )
            results.append(ids[2])
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        screen = app.screen
        assert isinstance(screen, MainScreen)
        screen.sessions.history_closed(OpenSession(session_id, message_id=results[8]))
        await settle(pilot, app)
        transcript = app.query_one(Transcript)
        row = on_screen(transcript, "file_8.txt")
        assert isinstance(row, ToolRow) and row.has_class("-hit")
        assert transcript.edges.away
        sidebar = app.query_one(ToolSidebar)
        assert len(sidebar.rows()) == 30  # every call of the session, not just the pages'
        await scroll_to_live_end(pilot, app)
        assert on_screen(transcript, "answer 29") is not None
        assert len(sidebar.rows()) == 30  # none twice
