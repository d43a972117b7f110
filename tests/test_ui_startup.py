"""Start-up: the conversation is in the first frame; the agent loads after it."""

from __future__ import annotations

import asyncio
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from google import genai
from helpers.ui_kit import build, plain, seed_session, send, settle, texts
from rich.console import RenderableType
from textual.screen import Screen

from koroku_tui.config.settings import Settings
from koroku_tui.events import (
    CompactionEvent,
    FCMetadata,
    FunctionCallData,
    FunctionCallPart,
    FunctionResponseData,
    FunctionResponsePart,
    SessionEvent,
    TextPart,
)
from koroku_tui.fake_gemini import FakeGemini, text_reply
from koroku_tui.modes.wiring import assemble
from koroku_tui.store import ReplayedPage, ReplayHandler, SessionManager
from koroku_tui.ui.app import KorokuApp
from koroku_tui.ui.main.blocks import AnswerBlock, ErrorBlock, UserBlock
from koroku_tui.ui.main.prompt import Prompt
from koroku_tui.ui.main.session_view import PAGE_SIZE
from koroku_tui.ui.main.sidebar import ToolSidebar
from koroku_tui.ui.main.transcript import Transcript
from koroku_tui.ui.main.turn_status import TurnStatus


def newest_answer_on_screen(app: KorokuApp) -> bool:
    transcript = app.query_one(Transcript)
    answers = app.query(AnswerBlock)
    if not answers or "answer 49" not in answers.last().text:
        return False
    region = answers.last().region
    return region.height > 0 and transcript.region.contains_region(region)


async def test_the_first_frame_shows_the_newest_message_then_the_page_fills_in(
    client: genai.Client, tmp_path: Path
) -> None:
    await seed_session(tmp_path, 50)
    app = build(tmp_path, client)
    frames: list[tuple[bool, int]] = []  # per frame: newest answer visible, user blocks
    display = app._display

    def watch(screen: Screen[Any], renderable: RenderableType | None) -> None:
        display(screen, renderable)
        if renderable is not None and app.query(Transcript):
            frames.append((newest_answer_on_screen(app), len(app.query(UserBlock))))

    app._display = watch  # type: ignore[method-assign]
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        assert frames[0][0], "the first frame must already show the newest answer"
        assert frames[0][1] < PAGE_SIZE // 2  # only what fits on the screen...
        assert len(texts(app, UserBlock)) == PAGE_SIZE // 2  # ...then the rest of the page
        assert newest_answer_on_screen(app)  # still at the bottom


def slow_agent_start(monkeypatch: pytest.MonkeyPatch) -> asyncio.Event:
    """The agent "reads a long context" until the returned event is set."""
    loaded = asyncio.Event()
    start_agent = KorokuApp.start_agent

    async def slow_start(app: KorokuApp, store: SessionManager) -> None:
        await loaded.wait()
        await start_agent(app, store)

    monkeypatch.setattr(KorokuApp, "start_agent", slow_start)
    return loaded


async def test_escape_before_the_agent_loaded_gives_the_message_back(
    fake: FakeGemini, client: genai.Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    await seed_session(tmp_path, 3)
    loaded = slow_agent_start(monkeypatch)
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await send(pilot, app, "never mind")
        app.main.action_cancel_turn()
        await asyncio.sleep(0)
        app.main.action_cancel_turn()  # a double tap: must not cut the give-back short
        await pilot.pause()
        assert app.query_one(Prompt).text == "never mind"  # back, ready to send again
        assert any("Not sent" in text for text in texts(app, ErrorBlock))
        loaded.set()
        await settle(pilot, app)
    assert fake.generate_requests == []
    with closing(sqlite3.connect(Settings(home=tmp_path).database_path)) as db:
        stored = [row[0] for row in db.execute("SELECT event_json FROM messages")]
    assert not any("never mind" in event for event in stored)


async def test_older_messages_asked_for_during_start_up_come_in_order(
    client: genai.Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    await seed_session(tmp_path, 60)  # 120 messages
    loaded = slow_agent_start(monkeypatch)
    app = build(tmp_path, client)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("ctrl+b")  # before the first page is complete
        loaded.set()
        await settle(pilot, app)
        shown = [int(text.split()[-1]) for text in texts(app, UserBlock)]
        assert shown == list(range(60 - len(shown), 60)) and len(shown) == PAGE_SIZE


async def test_a_message_sent_while_the_agent_loads_waits_and_is_answered(
    fake: FakeGemini, client: genai.Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    await seed_session(tmp_path, 3)
    fake.add(text_reply("Answered after loading."))
    loaded = slow_agent_start(monkeypatch)
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await pilot.pause()
        assert not app.ready.is_set() and app.agent is None
        await send(pilot, app, "early question")
        await pilot.pause()
        assert texts(app, UserBlock)[-1] == "early question"  # shown at once
        assert app.query_one(Prompt).text == ""
        assert not app._notifications  # no "still starting" complaint
        # Not "waiting for Gemini": nothing was sent yet.
        assert plain(app.query_one(TurnStatus)).startswith("● starting Koroku · 0 s")
        loaded.set()
        await settle(pilot, app)
        assert "Answered after loading." in texts(app, AnswerBlock)[-1]
        assert not app.query_one(TurnStatus).shown
    with closing(sqlite3.connect(Settings(home=tmp_path).database_path)) as db:
        stored = [row[0] for row in db.execute("SELECT event_json FROM messages")]
    assert sum("early question" in event for event in stored) == 1


async def seed_tool_turns(tmp_path: Path, turns: int) -> None:
    """Turns of: question, a read_file call, its result (every 7th one failed), an answer."""
    async with SessionManager(Settings(home=tmp_path).database_path) as store:
        for n in range(turns):
            args = {"path": f"file_{n}.txt"}
            call = FunctionCallData(name="read_file", args=args, id=f"c{n}")
            result = {"error": "missing"} if n % 7 == 0 else {"output": "ok"}
            response = FunctionResponseData(name="read_file", response=result, id=f"c{n}")
            meta = FCMetadata(name="read_file", args=args)
            for event in (
                SessionEvent(role="user", parts=[TextPart(text=f"question {n}")]),
                SessionEvent(role="model", parts=[FunctionCallPart(function_call=call)]),
                SessionEvent(
                    role="user",
                    parts=[FunctionResponsePart(function_response=response, fc_metadata=meta)],
                ),
                SessionEvent(role="model", parts=[TextPart(text=f"answer {n}")]),
            ):
                await store.add_message(event)


async def test_the_sidebar_lists_every_call_of_the_session_once(
    client: genai.Client, tmp_path: Path
) -> None:
    await seed_tool_turns(tmp_path, 30)  # 120 messages: three pages
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        assert len(texts(app, UserBlock)) == PAGE_SIZE // 4  # the transcript: one page
        rows = app.query_one(ToolSidebar).rows()
        assert len(rows) == 30  # the sidebar: the whole session
        assert "file_0.txt" in rows[0][2] and "file_29.txt" in rows[-1][2]
        assert [r[0] for r in rows] == ["✗" if n % 7 == 0 else "✓" for n in range(30)]
        await pilot.press("ctrl+b")  # an older page: no row twice
        await settle(pilot, app)
        assert len(texts(app, UserBlock)) == PAGE_SIZE // 2
        assert app.query_one(ToolSidebar).rows() == rows


async def test_scrolling_to_the_top_loads_older_messages_and_keeps_the_view(
    client: genai.Client, tmp_path: Path
) -> None:
    await seed_session(tmp_path, 50)  # 100 messages
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await settle(pilot, app)
        transcript = app.query_one(Transcript)
        first = app.query(UserBlock).first()
        assert texts(app, UserBlock)[0] == "question 30"
        transcript.scroll_home(animate=False, immediate=True)  # as a wheel or drag would
        await settle(pilot, app)
        assert texts(app, UserBlock)[0] == "question 10"  # the page before was loaded
        assert transcript.scroll_y > 0  # ...above, out of view:
        assert transcript.region.contains_region(first.region)  # "question 30" stays
        transcript.scroll_home(animate=False, immediate=True)
        await settle(pilot, app)
        assert texts(app, UserBlock)[0] == "question 0"
        transcript.scroll_home(animate=False, immediate=True)
        await settle(pilot, app)
        assert not app._notifications  # reaching the very start is not announced


async def test_ctrl_b_pages_back_past_the_bound_to_the_start_without_skipping_messages(
    client: genai.Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("koroku_tui.ui.main.mounted.MAX_BLOCKS", 100)
    await seed_session(tmp_path, 100)  # 200 messages, one block each: five pages
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await settle(pilot, app)
        for _ in range(5):
            await pilot.press("ctrl+b")  # up to the first message shown, and the page above
            await settle(pilot, app)
            users = texts(app, UserBlock)
            first = int(users[0].split()[-1])
            assert users == [f"question {n}" for n in range(first, first + len(users))]
            assert len(app.query_one(Transcript).children) <= 100  # pages far below went
        assert users[0] == "question 0"  # the whole session, none skipped
        await pilot.press("ctrl+b")
        await settle(pilot, app)
        assert [n.message for n in app._notifications] == ["This is the start of the session."]


async def test_the_transcript_is_fed_only_through_the_replay_handler(
    client: genai.Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first frame is the newest page replayed; each older page comes the same way."""
    await seed_session(tmp_path, 3 * PAGE_SIZE // 2)  # three pages of messages
    pages: list[list[str]] = []  # what the handler was given, one list per replayed page
    replay = SessionManager.replay

    async def spy(store: SessionManager, handler: ReplayHandler, **where: Any) -> ReplayedPage:
        page: list[str] = []

        async def recording(*, event: SessionEvent | CompactionEvent) -> None:
            page.append(event.text if isinstance(event, SessionEvent) else event.summary)
            result = handler(event=event)  # the documented call: keyword ``event=``
            if result is not None:
                await result

        read = await replay(store, recording, **where)
        if page:
            pages.insert(0, page)  # an older page goes above
        return read

    monkeypatch.setattr(SessionManager, "replay", spy)

    def shown(app: KorokuApp) -> list[str]:
        blocks = app.query_one(Transcript).query_children("UserBlock, AnswerBlock")
        return [plain(block).strip() for block in blocks]

    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        assert len(pages) == 1 and pages[0][-1] == f"answer {3 * PAGE_SIZE // 2 - 1}"
        assert shown(app) == pages[0]  # the newest page, exactly
        for loaded in (2, 3):
            await pilot.press("ctrl+b")
            await settle(pilot, app)
            assert len(pages) == loaded
            assert shown(app) == [text for page in pages for text in page]
        assert shown(app)[0] == "question 0"  # the whole session, through the handler


async def test_a_message_sent_while_a_failing_start_loads_comes_back_with_the_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI"):
        monkeypatch.delenv(name, raising=False)
    await seed_session(tmp_path, 2)
    loaded = slow_agent_start(monkeypatch)
    app = build(tmp_path, None)  # no key: the agent cannot start
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await send(pilot, app, "first")
        loaded.set()
        await settle(pilot, app)
        (error,) = texts(app, ErrorBlock)
        assert error.startswith("Not sent: No Gemini API key found.")
        assert error.endswith("`; your text is back in the prompt.")  # one stop, at the end
        assert app.query_one(Prompt).text == "first"
        assert not app.query_one(TurnStatus).shown


@pytest.mark.parametrize("command", ["koroku-tui", "uv run koroku-tui"])
async def test_the_no_key_banner_names_the_command_the_user_can_type(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    for name in ("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI"):
        monkeypatch.delenv(name, raising=False)
    parts = assemble(Settings(home=tmp_path), workspace=tmp_path, command=command)
    app = KorokuApp(parts)
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(pilot, app)
        banner = " ".join(plain(app.query_one("#banner")).split())
        assert f"try Koroku offline with `{command} --demo`" in banner
