"""A session busy in another window is said on ONE line, replaced as it retries (issue 22, item 9).

Two stores on one file: the other one holds the session's lease (its turn
runs), this window sends. Each attempt used to add the store's three-line
sentence; now one line says the session is busy and how often this window
tried, counted up in place, moved under the message sent again, and gone
once this window gets the session and the turn goes on.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from google import genai
from helpers.events import user
from helpers.ui_kit import plain, send, settle, texts, two_windows, wait_until

from koroku_tui.fake_gemini import FakeGemini, text_reply
from koroku_tui.ui.app import KorokuApp
from koroku_tui.ui.main.blocks import AnswerBlock, ErrorBlock, UserBlock
from koroku_tui.ui.main.prompt import Prompt
from koroku_tui.ui.main.transcript import Transcript
from koroku_tui.ui.main.turn_status import TurnStatus

pytestmark = pytest.mark.timeout(90)

TRIED = re.compile(
    r"^Session 1 is busy in another window(; retrying…|: not sent) \(tried (\d+) times\)"
)


def busy_lines(app: KorokuApp) -> list[str]:
    """Every line of the transcript that speaks of the busy session, as shown."""
    shown = [plain(block) for block in app.query_one(Transcript).children]
    return [line for block in shown for line in block.splitlines() if "busy" in line]


def tries(line: str) -> int:
    """The count a busy line gives."""
    matched = TRIED.match(line)
    assert matched, line
    return int(matched.group(2))


async def test_retrying_on_a_busy_session_keeps_one_line_then_it_goes(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    fake.add(text_reply("Your turn now."))
    async with two_windows(tmp_path, client, size=(80, 24)) as (pilot, app, other):
        await other.begin_turn(user("a long turn in the other window"))
        counts = []
        for _ in range(2):  # sent, refused, sent again from the prompt, refused
            await send(pilot, app, app.query_one(Prompt).text or "may I?")
            await settle(pilot, app)
            [line] = busy_lines(app)
            assert line.endswith(f"not sent (tried {tries(line)} times)."), line
            counts.append(tries(line))
            assert app.query_one(Prompt).text == "may I?"  # back, nothing lost
        assert 1 < counts[0] < counts[1]  # the store tried again and again: one line
        assert not any("busy" in e for e in texts(app, ErrorBlock))  # no sentence per try
        line_block = app.query_one(Transcript).children[-1]
        assert line_block.size.height == 1  # one line, at 80 columns too

        await send(pilot, app, "may I?")  # the third time the other turn ends meanwhile
        await wait_until(
            pilot,
            lambda: "retrying…" in "".join(busy_lines(app)) and "may I?" in texts(app, UserBlock),
            "the line retrying under the message sent",
        )
        [line] = busy_lines(app)
        assert tries(line) > counts[1]
        assert "another window's turn" in plain(app.query_one(TurnStatus))
        assert texts(app, UserBlock)[-1] == "may I?"
        await other.end_turn()
        await settle(pilot, app)
        assert busy_lines(app) == []  # the turn went on: the line is gone
        assert texts(app, AnswerBlock)[-1].strip() == "Your turn now."
    assert len(fake.generate_requests) == 1


async def test_the_line_goes_when_a_message_sent_later_gets_the_session_at_once(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    """Refused, then sent again once the other turn ended: no stale "not sent" above it."""
    fake.add(text_reply("Your turn now."))
    async with two_windows(tmp_path, client, size=(80, 24)) as (pilot, app, other):
        await other.begin_turn(user("a long turn in the other window"))
        await send(pilot, app, "may I?")
        await settle(pilot, app)
        [line] = busy_lines(app)
        assert "not sent" in line
        await other.end_turn()
        await send(pilot, app, app.query_one(Prompt).text)
        await settle(pilot, app)
        assert texts(app, AnswerBlock)[-1].strip() == "Your turn now."
        assert busy_lines(app) == []  # this window has the session: nothing is busy
