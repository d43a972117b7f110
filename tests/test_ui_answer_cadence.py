"""A burst (more text than the screen holds between two redraws) is redrawn less often.

A fast 100 KB answer was redrawn twice on its way, each redraw parsing and
drawing tens of KB under the same interpreter lock as the agent receiving
it: ~8% of the time it took (issue 22, item 21). The reader sees whole
pages go by either way; a stream at a reading pace is redrawn as before.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.ui_kit import build, plain, settle
from textual.pilot import Pilot

from koroku_tui.ui.app import KorokuApp
from koroku_tui.ui.main import answer
from koroku_tui.ui.main.blocks import AnswerBlock
from koroku_tui.ui.main.transcript import Transcript

PARAGRAPH = "A paragraph of the answer, long enough to wrap once or twice on a narrow screen. "


def shown(app: KorokuApp) -> str:
    return plain(app.query(AnswerBlock).last())


async def drawn_after(pilot: Pilot[None], app: KorokuApp, text: str) -> bool:
    """Write ``text`` to the answer; is it drawn once the screen has handled it?"""
    await app.query_one(Transcript).add_text(text)
    await pilot.pause()
    await pilot.pause()  # the step the write scheduled, then its frame
    return text.split()[-1] in shown(app)


def burst(name: str) -> str:
    """More text than a 120x40 screen holds, its last word ``name-N.``."""
    page = 120 * 40
    text = "".join(f"{PARAGRAPH}{name}-{i}.\n\n" for i in range(page // len(PARAGRAPH) + 2))
    assert len(text) > page
    return text


async def test_a_burst_waits_for_its_cadence_and_a_stream_does_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(answer, "REDRAW_EVERY", 0.0)  # at a reading pace: each write redrawn
    monkeypatch.setattr(answer, "BURST_REDRAW_EVERY", 3600.0)  # a burst: not before its end
    app = build(tmp_path, None)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        # The answer's first words are drawn at once, a burst or not.
        assert await drawn_after(pilot, app, burst("first"))
        # What counts is what arrived since the last redraw, not the answer's length.
        assert await drawn_after(pilot, app, f"{PARAGRAPH}Second-part.\n\n")
        assert await drawn_after(pilot, app, f"{PARAGRAPH}Third-part.\n\n")
        last = burst("later")
        assert not await drawn_after(pilot, app, last)  # a page and more since the last redraw
        await app.query_one(Transcript).end_step()  # the answer ends: drawn at once, whole
        await settle(pilot, app)
        assert shown(app).rstrip().endswith(last.split()[-1])
