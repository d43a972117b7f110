"""Each step of a streamed answer is laid out once, and each text it shows is drawn once.

Textual lays a widget out, then sets its ``virtual_size``, which asked for
another layout of the whole screen after every size change; awaiting a mount
asked for one more: each step of a fast answer (the live piece grown,
finished pieces cut off and mounted) laid the screen out two or three times
while keys waited (``ui.main.laid_out``).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from helpers.ui_kit import build, polled, settle
from test_ui_answer_burst import burst_answer, drawn, held_plans, transcript_text
from textual.screen import Screen

from koroku_tui.ui.main import answer
from koroku_tui.ui.main.answer import AnswerBlock, AnswerPiece
from koroku_tui.ui.main.transcript import Transcript

__all__ = ["drawn"]  # the fixture, shared


@pytest.fixture
def layouts(monkeypatch: pytest.MonkeyPatch) -> list[Screen[object]]:
    """One entry per layout of a screen (Textual's reflow), in order."""
    done: list[Screen[object]] = []
    reflow = Screen._refresh_layout

    def counting(self: Screen[object], *args: object, **kwargs: object) -> None:
        done.append(self)
        reflow(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Screen, "_refresh_layout", counting)
    return done


async def test_each_step_of_an_answer_is_laid_out_once_and_each_text_drawn_once(
    tmp_path: Path,
    layouts: list[Screen[object]],
    drawn: list[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(answer, "QUIET_SECONDS", 3600.0)  # the steps alone
    text = burst_answer(120)  # ~17 KB: steps that cut pieces off
    first, rest = text[:6_000], text[6_000:]  # the first fills the view: the scrollbar shows
    app = build(tmp_path, None)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        transcript = app.query_one(Transcript)
        await transcript.add_text(first)
        await settle(pilot, app)
        block = app.query(AnswerBlock).last()
        steps: list[tuple[int, int]] = []
        for start in range(0, len(rest), 2_500):  # each write: one step, drawn before the next
            pieces, laid_out, texts = len(block.children), len(layouts), len(drawn)
            await transcript.add_text(rest[start : start + 2_500])
            await settle(pilot, app)
            steps.append((len(block.children) - pieces, len(layouts) - laid_out))
            step = drawn[texts:]
            assert len(step) == len(set(step))  # the live piece's text, and pieces in view
        assert sum(cut for cut, _ in steps) >= 4  # finished stretches were cut off and mounted
        assert [laid_out for _, laid_out in steps] == [1] * len(steps)
        assert block.text == text
        assert "Last line of the answer." in transcript_text(app)[-3:]
        shown = [piece for piece in block.query_children(AnswerPiece) if not piece.guessed]
        assert all(p.size.height == p.drawn_rows(p.size.width) for p in shown)


async def test_an_answer_that_ends_after_a_step_with_more_text_draws_it_without_a_frame(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Text came while a step planned, then the answer ended before the next frame: its
    last words are drawn at once, in that frame. Left to the frame after the step, the end
    showed a frame later (a whole layout, ~25 ms at the end of a fast 100 KB answer:
    issue 22, item 21)."""
    monkeypatch.setattr(answer, "QUIET_SECONDS", 3600.0)  # the steps alone
    planning, release = held_plans(monkeypatch, growing=True)
    frames_held = False
    frame = Screen._on_timer_update

    def maybe_frame(self: Screen[object]) -> None:
        if not frames_held:  # a busy loop: the frame is late
            frame(self)

    after_frame = Screen._invoke_and_clear_callbacks

    async def maybe_after_frame(self: Screen[object]) -> None:
        if not frames_held:  # what waits for the frame waits
            await after_frame(self)

    monkeypatch.setattr(Screen, "_on_timer_update", maybe_frame)
    monkeypatch.setattr(Screen, "_invoke_and_clear_callbacks", maybe_after_frame)
    text = burst_answer(250)  # ~35 KB: a step planned in a thread
    app = build(tmp_path, None)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        transcript = app.query_one(Transcript)
        await transcript.add_text(text[:-3_000])
        # Waited for in a thread: the pilot's waits wait for the app to be idle.
        assert await asyncio.to_thread(planning.wait, 10), "no step planned in its thread"
        block = app.query(AnswerBlock).last()
        await transcript.add_text(text[-3_000:])  # more text while the step plans
        frames_held = True
        release.set()
        # The next step waits for its turn, not for a frame.
        await polled(lambda: block._waiting is not None, "the next step's turn", 5)
        await transcript.end_step()
        assert block.shown.is_set()  # the end drawn in the call, for the frame to come
        frames_held = False
        await settle(pilot, app)
        assert "Last line of the answer." in transcript_text(app)[-3:]
        assert block.text == text
