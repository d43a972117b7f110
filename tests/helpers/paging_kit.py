"""Small pages for the main view's paging tests: what they seed and what they read back."""

from __future__ import annotations

import pytest
from helpers.ui_kit import plain

from koroku_tui.events import SessionEvent, TextPart
from koroku_tui.ui.app import KorokuApp
from koroku_tui.ui.main.blocks import AnswerBlock
from koroku_tui.ui.main.transcript import Transcript

PAGE, BOUND = 25, 75
"""Messages per page and blocks mounted at most, for these tests."""


def use_small_pages(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pages of ``PAGE`` messages, at most ``BOUND`` blocks mounted: paging in a few seconds."""
    monkeypatch.setattr("koroku_tui.ui.main.session_view.PAGE_SIZE", PAGE)
    monkeypatch.setattr("koroku_tui.ui.main.mounted.MAX_BLOCKS", BOUND)


def turn(n: int) -> list[SessionEvent]:
    """Turn ``n``: "question n", then "answer n"."""
    return [
        SessionEvent(role="user", parts=[TextPart(text=f"question {n}")]),
        SessionEvent(role="model", parts=[TextPart(text=f"answer {n}")]),
    ]


def mounted(app: KorokuApp) -> list[str]:
    """What the transcript's mounted blocks say, top to bottom (a fold: its title)."""
    said = []
    for block in app.query_one(Transcript).children:
        text = block.text if isinstance(block, AnswerBlock) else plain(block)
        said.append(text.strip().splitlines()[0])
    return said
