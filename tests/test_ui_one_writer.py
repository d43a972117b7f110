"""The app with another Koroku window on the same conversation: it sees that window's
turns, and a turn running there makes it wait and say so, never interleave."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from google import genai
from helpers.events import model, user
from helpers.paging_kit import mounted, use_small_pages
from helpers.ui_kit import build, plain, seed_session, send, settle, texts, two_windows

from koroku_tui.agent import Agent
from koroku_tui.config.settings import Settings
from koroku_tui.events import SessionEvent
from koroku_tui.fake_gemini import FakeGemini, text_reply
from koroku_tui.store import SessionManager
from koroku_tui.ui.app import KorokuApp
from koroku_tui.ui.main.answer import AnswerBlock
from koroku_tui.ui.main.blocks import NoticeBlock, UserBlock
from koroku_tui.ui.main.prompt import Prompt
from koroku_tui.ui.main.transcript import Transcript


async def test_a_turn_taken_in_another_window_shows_up_and_reaches_the_model(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    fake.add(text_reply("Both questions seen."))
    await seed_session(tmp_path, 1)  # a stored conversation: both windows open it
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        async with SessionManager(Settings(home=tmp_path).database_path) as other:
            await other.begin_turn(user("asked in the other window"))
            await other.add_message(model("answered in the other window"))
            await other.end_turn()
        await send(pilot, app, "and here?")
        await settle(pilot, app)
        # In stored order: the other window's turn came before this message.
        blocks = [(type(b).__name__, plain(b).strip()) for b in app.query_one(Transcript).children]
        assert blocks[-5:] == [
            ("NoticeBlock", "From another Koroku window:"),
            ("UserBlock", "asked in the other window"),
            ("AnswerBlock", "answered in the other window"),
            ("UserBlock", "and here?"),
            ("AnswerBlock", "Both questions seen."),
        ]
    said = [p.get("text") for c in fake.generate_requests[-1].contents for p in c["parts"]]
    assert said == [
        "question 0",
        "answer 0",
        "asked in the other window",
        "answered in the other window",
        "and here?",
    ]


async def test_a_turn_running_in_another_window_makes_this_one_wait_and_say_so(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    async with two_windows(tmp_path, client) as (pilot, app, other):
        await other.begin_turn(user("a long turn in the other window"))
        await send(pilot, app, "may I?")
        await settle(pilot, app)
        said = texts(app, NoticeBlock)
        assert said and "Session 1 is busy in another window: not sent" in said[-1]
        assert app.query_one(Prompt).text == "may I?"  # nothing lost, ready to resend
        assert "may I?" not in texts(app, UserBlock)  # not stored, so not shown as sent
        stored = await other.load_all()
        stored_texts = [m.event.text for m in stored if isinstance(m.event, SessionEvent)]
        assert stored_texts[-1] == "a long turn in the other window"
    assert fake.generate_requests == []


async def test_what_another_window_stores_while_the_app_starts_is_shown(
    fake: FakeGemini, client: genai.Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows stored after the first page was read but before the agent read its context."""
    await seed_session(tmp_path, 1)
    make_agent = KorokuApp._make_agent

    def stored_meanwhile(app: KorokuApp, store: SessionManager) -> Agent:
        # The first page is on screen; the agent's context is not read yet.
        with closing(sqlite3.connect(store.path)) as conn, conn:
            row = model("written by the other window during start-up").model_dump_json()
            conn.execute(
                "INSERT INTO messages(session_id, kind, event_json, created_at) "
                "VALUES (1, 'session', ?, 0)",
                (row,),
            )
        return make_agent(app, store)

    monkeypatch.setattr(KorokuApp, "_make_agent", stored_meanwhile)
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        answers = texts(app, AnswerBlock)
        assert "written by the other window during start-up" in answers[-1]
        assert "From another Koroku window:" in texts(app, NoticeBlock)


async def test_a_rewind_made_in_another_window_is_shown_here(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    await seed_session(tmp_path, 2)  # question 0, answer 0, question 1, answer 1
    fake.add(text_reply("Only the first turn seen."))
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        async with SessionManager(Settings(home=tmp_path).database_path) as other:
            await other.rewind(3)  # to before "question 1"
        await send(pilot, app, "and here?")
        await settle(pilot, app)
        shown = [plain(b).strip() for b in app.query_one(Transcript).children]
        notice = shown.index("From another Koroku window:")
        assert "Rewound to before message #3" in shown[notice + 1]
        sent = fake.generate_requests[-1].contents
        assert ["".join(p.get("text", "") for p in c["parts"]) for c in sent] == [
            "question 0",
            "answer 0",
            "and here?",
        ]


@pytest.mark.parametrize("back", ["scrolling down", "sending from far back"])
async def test_another_windows_turn_shows_once_after_this_windows_turn_paged_away(
    fake: FakeGemini,
    client: genai.Client,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    back: str,
) -> None:
    """Pages read again hold the other window's turn: the sync must not add it a second time."""
    use_small_pages(monkeypatch)
    await seed_session(tmp_path, 60)
    fake.add(text_reply("my answer"), text_reply("my second answer"))
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await send(pilot, app, "my question")
        await settle(pilot, app)
        async with SessionManager(Settings(home=tmp_path).database_path) as other:
            await other.begin_turn(user("asked in the other window"))
            await other.add_message(model("answered in the other window"))
            await other.end_turn()
        transcript = app.query_one(Transcript)
        for _ in range(6):  # far up: this window's turn is unmounted
            transcript.scroll_home(animate=False, immediate=True)
            await settle(pilot, app)
        assert "my question" not in mounted(app)
        if back == "scrolling down":
            for _ in range(10):
                transcript.scroll_end(animate=False, immediate=True)
                await settle(pilot, app)
            assert not transcript.edges.away
        await send(pilot, app, "and here?")
        await settle(pilot, app)
        shown = mounted(app)
    # Read back from the store with this window's turn: once, in stored order.
    assert shown[-6:] == [
        "my question",
        "my answer",
        "asked in the other window",
        "answered in the other window",
        "and here?",
        "my second answer",
    ]
    assert shown.count("asked in the other window") == 1
