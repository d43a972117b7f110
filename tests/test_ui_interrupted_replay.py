"""An answer cut short on Koroku's side reads "Interrupted" after a restart too (issue 22, item 8).

Escape, quitting the app, a closed terminal (SIGHUP: the turn is cancelled
with ``INTERRUPTED_BY_STOP``) or a broken stream keep what arrived. It is
stored with Koroku's own finish reason, so a fresh app on the same file draws
the same "Interrupted: ..." line under it that the live one did, rather than
a whole-looking answer. What is sent back to Gemini stays the Content as it
arrived (the strict fake checks the next request).
"""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

import pytest
from google import genai
from helpers.agent_kit import open_agent, stored_events, wire_signature
from helpers.ui_kit import build, cut_mid_answer, seed_session, send, settle, texts
from test_ui_finish import shown

from koroku_tui.agent.loop.guardrail import INTERRUPTED_BY_STOP
from koroku_tui.agent.wire.finish import KOROKU_CUT_OFF, KOROKU_STOPPED
from koroku_tui.fake_gemini import FakeGemini, Reply, Text, stream_cut, text_reply
from koroku_tui.ui.app import KorokuApp
from koroku_tui.ui.main.blocks import NoticeBlock
from koroku_tui.ui.main.transcript import Transcript

pytestmark = pytest.mark.timeout(60)

CANCELLED = "Interrupted: cancelled before the answer was complete."
CLOSED = "Interrupted: Koroku was closed before the answer was complete."
BROKE_OFF = "Interrupted: the stream from Gemini broke off before the answer was complete."


def slow_answer() -> Reply:
    """A first piece at once, the rest long after: whatever cuts it, cuts it there."""
    return Reply(((Text("The first half of it."),), (Text(" And the rest."),)), chunk_delay=5.0)


CLOSING = "terminal closed"


def close_terminal(app: KorokuApp) -> None:
    """What SIGHUP does to the app: its handler, on the app's loop (see ``ui/app.py``)."""
    app._stop_on_signal(signal.SIGHUP)


async def cut_short(how: str, home: Path, client: genai.Client) -> list[tuple[str, str]]:
    """Send, let the first piece arrive, cut it ``how``: the transcript as last shown."""
    app = build(home, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await cut_mid_answer(pilot, app, (lambda: close_terminal(app)) if how == CLOSING else how)
        return shown(app.query_one(Transcript))


async def replayed(home: Path, client: genai.Client) -> list[tuple[str, str]]:
    """The transcript a fresh app on ``home`` shows."""
    again = build(home, client)
    async with again.run_test(size=(120, 40)) as pilot:
        await settle(pilot, again)
        return shown(again.query_one(Transcript))


@pytest.mark.parametrize(
    ("how", "line"),
    [("escape", CANCELLED), ("ctrl+q", CANCELLED), (CLOSING, CLOSED)],
)
async def test_an_answer_cut_short_replays_interrupted(
    fake: FakeGemini, client: genai.Client, tmp_path: Path, how: str, line: str
) -> None:
    fake.add(slow_answer())
    live = await cut_short(how, tmp_path, client)
    after_restart = await replayed(tmp_path, client)
    assert after_restart == [
        ("UserBlock", "tell me"),
        ("AnswerBlock", "The first half of it."),
        ("NoticeBlock", line),
    ]
    if how == "escape":  # the line Escape draws live is the one a restart draws: once
        assert live[-3:] == after_restart


async def test_an_answer_whose_stream_broke_replays_interrupted(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    fake.add(stream_cut(text_reply("The first half of it. Never sent.", pieces=2), after=1))
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await send(pilot, app, "tell me")
        await settle(pilot, app)
        assert BROKE_OFF in texts(app, NoticeBlock)
    assert (await replayed(tmp_path, client))[-1] == ("NoticeBlock", BROKE_OFF)
    [_, kept] = await stored_events(tmp_path / "koroku.db")
    assert kept.finish_reason == KOROKU_CUT_OFF


async def test_rows_from_before_without_a_reason_replay_as_they_were(
    client: genai.Client, tmp_path: Path
) -> None:
    await seed_session(tmp_path, 1)  # a model row with no finish reason, as older Korokus left
    assert await replayed(tmp_path, client) == [
        ("UserBlock", "question 0"),
        ("AnswerBlock", "answer 0"),
    ]


async def test_the_reply_cut_by_a_stop_goes_back_to_gemini_as_it_arrived(
    fake: FakeGemini, tmp_path: Path
) -> None:
    """Koroku's reason stays in the file: the next request holds the parts, signatures and all."""
    thought, text = b"\x01thought-signature", b"\x02text-signature"
    fake.add(
        Reply(
            (
                (Text("Weighing it.", thought=True, signature=thought),),
                (Text("The first half. ", signature=text),),
                (Text("The rest."),),
            ),
            chunk_delay=5.0,
        )
    )
    fake.add(text_reply("Going on."))
    async with open_agent(fake, tmp_path) as agent:
        arrived = asyncio.Event()
        agent.on("on_text_delta", lambda _delta: arrived.set())
        turn = asyncio.create_task(agent.run_turn("tell me"))
        await asyncio.wait_for(arrived.wait(), 10)
        turn.cancel(INTERRUPTED_BY_STOP)  # what the app does on SIGHUP
        with pytest.raises(asyncio.CancelledError):
            await turn
        assert await agent.run_turn("go on") == "Going on."
    [_, kept, *_] = await stored_events(tmp_path / "koroku.db")
    assert kept.finish_reason == KOROKU_STOPPED
    request = fake.generate_requests[-1]
    assert request.status == 200
    sent = request.contents[1]
    assert sent["role"] == "model"
    assert [(p.get("text"), p.get("thought"), wire_signature(p)) for p in sent["parts"]] == [
        ("Weighing it.", True, thought),
        ("The first half. ", None, text),
    ]
    assert "finish" not in str(sent).lower() and "KOROKU" not in str(request.contents)
