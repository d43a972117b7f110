"""The app with another Koroku window on the same conversation: it sees that window's
turns, and a turn running there makes it wait and say so, never interleave."""

from __future__ import annotations

from pathlib import Path

from google import genai
from helpers.events import model, user
from helpers.ui_kit import build, send, settle, texts

from koroku_tui.fake_gemini import FakeGemini, text_reply
from koroku_tui.settings import Settings
from koroku_tui.store import SessionManager
from koroku_tui.ui.main.answer import AnswerBlock
from koroku_tui.ui.main.blocks import ErrorBlock, NoticeBlock, UserBlock
from koroku_tui.ui.main.prompt import Prompt


async def test_a_turn_taken_in_another_window_shows_up_and_reaches_the_model(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    fake.add(text_reply("Both questions seen."))
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        async with SessionManager(Settings(home=tmp_path).database_path) as other:
            await other.begin_turn(user("asked in the other window"))
            await other.add_message(model("answered in the other window"))
            await other.end_turn()
        await send(pilot, app, "and here?")
        await settle(pilot, app)
        assert "From another Koroku window:" in texts(app, NoticeBlock)
        assert texts(app, UserBlock)[-1] == "asked in the other window"
        assert "answered in the other window" in texts(app, AnswerBlock)[-2]
        assert "Both questions seen." in texts(app, AnswerBlock)[-1]
    said = [p.get("text") for c in fake.generate_requests[-1].contents for p in c["parts"]]
    assert said == ["asked in the other window", "answered in the other window", "and here?"]


async def test_a_turn_running_in_another_window_makes_this_one_wait_and_say_so(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        async with SessionManager(Settings(home=tmp_path).database_path) as other:
            await other.begin_turn(user("a long turn in the other window"))
            await send(pilot, app, "may I?")
            await settle(pilot, app)
            errors = texts(app, ErrorBlock)
            assert errors and "busy in another Koroku window" in errors[-1]
            assert app.query_one(Prompt).text == "may I?"  # nothing lost, ready to resend
            stored = await other.load_all()
        assert [m.event.text for m in stored if m.event] == ["a long turn in the other window"]
    assert fake.generate_requests == []
