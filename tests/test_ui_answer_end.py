"""An answer's last words are drawn once its stream ends, not once the reply is stored.

Storing a long reply (its event built, written to SQLite, its usage told)
took ~15 ms at the end of a fast 100 KB answer, and the last words waited
for it (issue 22, item 21): the agent says the reply has all arrived
(``on_reply_streamed``) before it stores it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from google import genai
from helpers.agent_kit import held_writes
from helpers.ui_kit import build, plain, polled, send, settle

from koroku_tui.fake_gemini import FakeGemini, text_reply
from koroku_tui.ui.main import answer
from koroku_tui.ui.main.blocks import AnswerBlock

ANSWER = "".join(f"Line {i} of a long answer.\n\n" for i in range(120)) + "Last words."


async def test_the_last_words_show_while_the_reply_is_stored(
    fake: FakeGemini, client: genai.Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(answer, "REDRAW_EVERY", 3600.0)  # after its first step, the end alone
    storing, stored = held_writes(monkeypatch)  # the reply's write
    fake.add(text_reply(ANSWER, pieces=60))
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await send(pilot, app, "go")
        await polled(storing.is_set, "the reply being stored")
        await polled(
            lambda: "Last words." in plain(app.query(AnswerBlock).last()),
            "the last words drawn while the reply is stored",
        )
        stored.set()
        await settle(pilot, app)
        assert plain(app.query(AnswerBlock).last()).rstrip().endswith("Last words.")
