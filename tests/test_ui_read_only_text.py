"""Text the user only reads (answers, history) hides nothing and reads as it says.

A lone string introducer (U+009D...) once swallowed the rest of its line
in the answer and the history; bidi controls were escaped on ``--print``
but drawn raw in the app, where they reorder the line.
"""

from __future__ import annotations

from pathlib import Path

from google import genai
from helpers.ui_kit import build, send, settle, texts
from hostile.terminal import BIDI_IN_ANSWERS, FORBIDDEN_IN_OUTPUT, UNTERMINATED_STRINGS

from koroku_tui.fake_gemini import FakeGemini, text_reply
from koroku_tui.ui.history import HistoryScreen
from koroku_tui.ui.main.blocks import AnswerBlock

CASES = BIDI_IN_ANSWERS + UNTERMINATED_STRINGS
ANSWER = "\n\n".join(text for _, text, _ in CASES)
MUST_SHOW = [(name, shown) for name, _, shown in CASES]


async def test_answers_and_history_hide_no_text_and_escape_bidi_controls(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    fake.add(text_reply(ANSWER, pieces=4))
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await send(pilot, app, "is it safe?")
        await settle(pilot, app)
        [answer] = texts(app, AnswerBlock)
        for name, shown in MUST_SHOW:
            assert shown in answer, name
        assert not set(answer) & set(FORBIDDEN_IN_OUTPUT)

        await pilot.press("ctrl+r")
        await settle(pilot, app)
        assert isinstance(app.screen, HistoryScreen)
        [model_row] = [
            str(getattr(option.prompt, "plain", option.prompt))
            for option in app.screen.detail.history.options
            if "model" in str(getattr(option.prompt, "plain", option.prompt)).split("\n")[0]
        ]
        # The history clips a row to its first lines: the first cases are there.
        for name, shown in MUST_SHOW[:6]:
            assert shown in model_row, name
        assert not set(model_row) & set(FORBIDDEN_IN_OUTPUT)
