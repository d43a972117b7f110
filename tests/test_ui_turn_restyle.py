"""A turn's start and end restyle the prompt (its border says a turn runs), nothing else.

The class was the screen's: Textual restyles every widget under a node whose
classes change, so each turn restyled the whole transcript twice, on the
event loop (24 ms for one 100 KB answer; the answer's last lines waited for
it), and more with every answer kept above.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from google import genai
from helpers.ui_kit import build, send, settle
from textual.css.stylesheet import Stylesheet
from textual.dom import DOMNode

from koroku_tui.fake_gemini import FakeGemini, text_reply
from koroku_tui.ui.main.answer import AnswerPiece
from koroku_tui.ui.main.prompt import Prompt


def styled_nodes(monkeypatch: pytest.MonkeyPatch) -> list[DOMNode]:
    """A list that gains each node every time the stylesheet (re)applies its rules."""
    styled: list[DOMNode] = []
    apply = Stylesheet.apply

    def counting(self: Stylesheet, node: DOMNode, *args: object, **kwargs: object) -> None:
        styled.append(node)
        apply(self, node, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Stylesheet, "apply", counting)
    return styled


async def test_a_turn_restyles_none_of_the_answers_above(
    fake: FakeGemini, client: genai.Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake.add(text_reply("First answer.\n\n" + "A paragraph.\n\n" * 200, pieces=50))
    fake.add(text_reply("Second answer.", pieces=2))
    styled = styled_nodes(monkeypatch)
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await send(pilot, app, "one")
        await settle(pilot, app)
        above = set(app.query(AnswerPiece))
        assert above
        prompt = app.query_one(Prompt)
        bordered: list[bool] = []  # the prompt's class as the answer streams
        assert app.agent is not None
        app.agent.on("on_text_delta", lambda delta: bordered.append(prompt.has_class("-running")))
        styled.clear()
        await send(pilot, app, "two")
        await settle(pilot, app)
        assert not above & set(styled)
        assert bordered and all(bordered)
        assert not prompt.has_class("-running")  # the turn ended
