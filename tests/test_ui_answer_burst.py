"""A long answer draws what is in view: pieces out of view get a guessed height until drawn.

Drawing Markdown costs more than receiving it, and Textual asks every piece
its height: a fast long answer drew all of its text while it streamed (each
finished piece, and the live one), keys waiting. Pieces cut off out of view
are now laid out by a height guessed from their source, drawn when painted
or once the stream is quiet, and nothing looks different once drawn. A long
code block, which no cut can split, is highlighted a stretch at a time
while it grows.
"""

from __future__ import annotations

import asyncio
import io
import threading
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from google import genai
from helpers.ui_kit import build, send, settle, wait_until
from rich.console import Console, ConsoleOptions, RenderResult
from rich.markdown import Markdown
from rich.syntax import Syntax
from rich.text import Text
from test_ui_copy import drag
from textual import events
from textual.pilot import Pilot
from textual.screen import Screen

from koroku_tui.fake_gemini import FakeGemini, text_reply
from koroku_tui.ui.app import KorokuApp
from koroku_tui.ui.main import answer, answer_cuts, answer_plan
from koroku_tui.ui.main.answer import AnswerBlock, AnswerPiece
from koroku_tui.ui.main.answer_plan import DRAWN_APART_CHARS, Plan
from koroku_tui.ui.main.prompt import Prompt
from koroku_tui.ui.main.transcript import Transcript


def held_plans(
    monkeypatch: pytest.MonkeyPatch, *, growing: bool, within: float = 10.0
) -> tuple[threading.Event, threading.Event]:
    """Hold the answer's plans made with ``growing`` (in their thread) until released.

    Returns ``(planning, release)``: ``planning`` is set once one is held;
    setting ``release`` lets it (and every later one) go. Wait for
    ``planning`` in a thread (``asyncio.to_thread``) and poll without the
    pilot (``polled``): the pilot's waits wait for the held step.
    """
    planning, release = threading.Event(), threading.Event()
    plan = answer_plan.plan

    def held(*args: Any, **kwargs: Any) -> Plan:
        if bool(kwargs.get("growing")) == growing and not release.is_set():
            planning.set()
            release.wait(within)
        return plan(*args, **kwargs)

    monkeypatch.setattr(answer, "plan", held)
    return planning, release


def burst_answer(sections: int) -> str:
    """Headings, lists, code, and paragraphs written over short lines (drawn as one line each).

    Those paragraphs make a guess from the source too tall, so a guess left
    in place would show.
    """
    parts = [
        f"## Part {n}\n\nPart {n} reads\n`config_{n}.toml`\nand **fails**\nwhen empty.\n\n"
        f"- check input {n}\n- add guard {n}\n\n"
        f"```python\ndef load_{n}():\n    return None  # {n}\n```\n\n"
        for n in range(sections)
    ]
    return "".join(parts) + "Last line of the answer."


def fragments(text: str, size: int = 50) -> Iterator[str]:
    return (text[i : i + size] for i in range(0, len(text), size))


def transcript_text(app: KorokuApp) -> list[str]:
    """The transcript's text on screen, line by line, as the terminal shows it (no scrollbar)."""
    region = app.query_one(Transcript).scrollable_content_region
    rows = app.screen._compositor.render_strips()[region.y : region.bottom]
    return [row.crop(region.x, region.right).text.rstrip() for row in rows]


@pytest.fixture
def drawn(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The text of each Markdown Rich draws, in order (the answer's pieces are all there is)."""
    texts: list[str] = []
    draw = Markdown.__rich_console__

    def counting(self: Markdown, console: Console, options: ConsoleOptions) -> RenderResult:
        texts.append(self.markup)
        return draw(self, console, options)

    monkeypatch.setattr(Markdown, "__rich_console__", counting)
    return texts


async def burst(pilot: Pilot[None], app: KorokuApp, text: str) -> AnswerBlock:
    """Stream ``text`` into the transcript faster than it is drawn, as a fast model does."""
    transcript = app.query_one(Transcript)
    for fragment in fragments(text):  # all written before the first step draws
        await transcript.add_text(fragment)
    await transcript.end_step()
    await settle(pilot, app)
    return app.query(AnswerBlock).last()


async def test_a_burst_draws_the_text_in_view_not_the_whole_answer(
    tmp_path: Path, drawn: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(answer, "QUIET_SECONDS", 3600.0)  # this test looks at the burst alone
    text = burst_answer(400)  # ~60 KB
    app = build(tmp_path, None)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        block = await burst(pilot, app, text)
        assert block.text == text
        pieces = list(block.query_children(AnswerPiece))
        assert len(pieces) >= 10
        # Before, each piece was drawn as it was cut off: the whole text.
        assert sum(map(len, drawn)) < len(text) / 4
        assert block.guessing
        assert any("Last line of the answer." in row for row in transcript_text(app)[-3:])


async def test_once_quiet_each_piece_takes_its_true_height_and_the_screen_is_a_restarts(
    fake: FakeGemini, client: genai.Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(answer, "REDRAW_EVERY", 1.0)  # a step takes a second of the stream
    text = burst_answer(400)
    fake.add(text_reply(text, pieces=2000))
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await send(pilot, app, "explain")
        await settle(pilot, app)
        block = app.query(AnswerBlock).last()
        await wait_until(pilot, lambda: not block.guessing, "every piece drawn")
        await pilot.pause()
        pieces = list(block.query_children(AnswerPiece))
        assert all(p.size.height == p.drawn_rows(p.size.width) for p in pieces)
        transcript = app.query_one(Transcript)
        bottom, height = transcript_text(app), transcript.virtual_size.height
        transcript.scroll_home(animate=False, immediate=True)
        await pilot.pause()
        top = transcript_text(app)
    again = build(tmp_path, client)
    async with again.run_test(size=(120, 40)) as pilot:
        await settle(pilot, again)
        transcript = again.query_one(Transcript)
        replayed = again.query(AnswerBlock).last()
        await wait_until(pilot, lambda: not replayed.guessing, "every piece replayed drawn")
        await pilot.pause()
        # Replayed as a stream ends, in fewer pieces (see answer_plan.STORED_PIECE_CHARS).
        assert 1 < len(again.query(AnswerPiece)) < len(pieces)
        assert transcript.virtual_size.height == height
        assert transcript_text(again) == bottom
        transcript.scroll_home(animate=False, immediate=True)
        await pilot.pause()
        assert transcript_text(again) == top


def drawn_lines(piece: AnswerPiece) -> list[str]:
    """The lines Rich draws the piece's text in at its width (what a selection reads)."""
    console = Console(width=piece.size.width, file=io.StringIO(), color_system=None)
    with console.capture() as capture:
        console.print(Markdown(piece.source))
    return [line.rstrip() for line in capture.get().rstrip("\n").split("\n")]


async def test_a_piece_drawn_late_is_laid_out_at_once_and_selected_and_copied_as_drawn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(answer, "QUIET_SECONDS", 3600.0)  # drawn because scrolled to
    app = build(tmp_path, None)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        block = await burst(pilot, app, burst_answer(400))
        pieces = list(block.query_children(AnswerPiece))
        piece = pieces[len(pieces) // 2]
        assert piece.guessed
        guess, rows = piece.size.height, piece.drawn_rows(piece.size.width)
        assert guess > rows  # the guess was wrong: the layout must change
        app.query_one(Transcript).bring_into_view(piece)
        await wait_until(pilot, lambda: piece.size.height == rows, "the true height laid out")
        assert not piece.guessed
        await drag(pilot, piece, (0, 0), (12, 2))
        expected = drawn_lines(piece)[:3]
        expected[-1] = expected[-1][:13]  # the cell under the pointer included
        assert app.screen.get_selected_text() == "\n".join(expected)
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.clipboard == "\n".join(expected)


async def test_what_is_read_stays_in_place_when_pieces_above_it_take_their_true_height(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(answer, "QUIET_SECONDS", 2.0)  # long enough to scroll up first
    app = build(tmp_path, None)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        block = await burst(pilot, app, burst_answer(400))
        pieces = list(block.query_children(AnswerPiece))
        read = pieces[len(pieces) // 2]
        app.query_one(Transcript).bring_into_view(read)
        await wait_until(pilot, lambda: not read.guessed, "the piece read drawn")
        await pilot.pause()
        before = transcript_text(app)
        above = [p for p in pieces[: len(pieces) // 2 - 2] if p.guessed]
        assert above and sum(p.size.height - p.drawn_rows(p.size.width) for p in above) > 0
        await wait_until(pilot, lambda: not block.guessing, "every piece drawn")
        await pilot.pause()
        assert transcript_text(app) == before


def rich_lines(text: str, width: int) -> list[str]:
    """The lines Rich's Markdown draws ``text`` in at ``width``, as a restart shows it."""
    console = Console(width=width, file=io.StringIO(), color_system=None)
    with console.capture() as capture:
        console.print(Markdown(text, code_theme="ansi_dark", hyperlinks=False))
    return [line.rstrip() for line in capture.get().rstrip("\n").split("\n")]


async def grow_code_block(pilot: Pilot[None], app: KorokuApp) -> str:
    """Write 80 KB of code in an open code block, in ten parts, each drawn; the code."""
    code = "".join(f"def f{i}(a, b):\n    return a + b  # {i}: a comment\n" for i in range(1600))
    await settle(pilot, app)
    transcript = app.query_one(Transcript)
    await transcript.add_text("Here it is:\n\n```python\n")
    for part in fragments(code, len(code) // 10):
        await transcript.add_text(part)
        await settle(pilot, app)
    return code


async def test_a_growing_code_block_is_highlighted_a_stretch_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A code block cannot be cut: each redraw highlighted all of it (90 KB: 0.7 s a time)."""
    monkeypatch.setattr(answer, "REDRAW_EVERY", 0.0)  # a redraw for each part written
    highlighted: list[int] = []
    highlight = Syntax.highlight

    def counting(self: Syntax, code: str, line_range: tuple[int, int] | None = None) -> Text:
        highlighted.append(len(code))
        return highlight(self, code, line_range)

    monkeypatch.setattr(Syntax, "highlight", counting)
    app = build(tmp_path, None)
    async with app.run_test(size=(120, 40)) as pilot:
        transcript = app.query_one(Transcript)
        code = await grow_code_block(pilot, app)
        assert len(code) > 80_000 and max(highlighted) < len(code) / 10
        live = app.query(AnswerPiece).last()
        # Laid out as the whole block is drawn: the same lines, padding and all.
        shown = [live.render_line(y).text.rstrip() for y in range(live.size.height)]
        assert shown == rich_lines(live.source, live.size.width)
        highlighted.clear()
        await transcript.end_step()
        await settle(pilot, app)
        # Finished: highlighted whole, once, as after a restart (the same lines);
        # shown first from its stretches (the last one highlighted again).
        assert [n for n in highlighted if n >= len(code.rstrip())] == [highlighted[-1]]
        assert max(highlighted[:-1]) < len(code) / 10
        assert [live.render_line(y).text.rstrip() for y in range(live.size.height)] == shown


async def test_page_up_mid_burst_shows_the_page_above_what_was_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each PageUp shows the page above, even where pieces still had a guessed height.

    Drawn when painted, a piece took its true height a frame later and the
    text under it moved: PageUp showed the same page again, a few rows lower.
    """
    monkeypatch.setattr(answer, "QUIET_SECONDS", 3600.0)  # drawn because scrolled to
    text = burst_answer(400)
    app = build(tmp_path, None)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        block = await burst(pilot, app, text)
        whole = rich_lines(text, block.size.width)

        def read() -> int:
            """Where the lines in view start in the whole answer as a restart draws it."""
            shown = transcript_text(app)
            return next(i for i in range(len(whole)) if whole[i : i + len(shown)] == shown)

        app.query_one(Prompt).focus()
        page = app.query_one(Transcript).scrollable_content_region.height
        starts: list[int] = []
        for _ in range(13):  # the first from the end (blank rows under the answer)
            await pilot.press("pageup")
            await pilot.pause()
            starts.append(read())
        assert block.guessing  # pieces above are still guessed: no more was drawn
        assert [above - below for above, below in pairwise(starts)] == [page] * 12


@pytest.mark.parametrize(
    "text",
    [
        "Here:\n\n```python\n"
        + "".join(f"def f{i}(a):\n    return a  # {i}\n" for i in range(3000)),
        "".join(
            f"- item {n} of a list no cut can split\n  - under it {n}\n\n" for n in range(2000)
        ),
    ],
    ids=["one code block", "one list"],
)
@pytest.mark.parametrize("chunks", [1000, 3], ids=["small chunks", "a chunk past the bound"])
async def test_a_long_text_no_cut_can_split_is_drawn_off_the_event_loop(
    text: str,
    chunks: int,
    fake: FakeGemini,
    client: genai.Client,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The piece being written is parsed and drawn in a thread once long; the keys wait for none.

    One code block or list of hundreds of KB stays in the piece being
    written, parsed and drawn whole at each step: 475 KB of code held the
    keys 2.8 s at its end, a 250 KB list 0.6 s at each parse.

    A chunk past the bound is a step's text past it before the piece being
    written was ever laid out, as a loaded loop's first steps are: planned
    in the thread with no width to draw at, it was drawn here (17 KB in CI).
    """
    on_the_loop: list[int] = []  # the length of each text drawn or parsed on the event loop
    draw, parse = Markdown.__rich_console__, answer_cuts.Parsed.__init__

    def drawing(self: Markdown, console: Console, options: ConsoleOptions) -> RenderResult:
        if threading.current_thread() is threading.main_thread():
            on_the_loop.append(len(self.markup))
        return draw(self, console, options)

    def parsing(self: answer_cuts.Parsed, text: str) -> None:
        if threading.current_thread() is threading.main_thread():
            on_the_loop.append(len(text))
        parse(self, text)

    monkeypatch.setattr(Markdown, "__rich_console__", drawing)
    monkeypatch.setattr(answer_cuts.Parsed, "__init__", parsing)
    monkeypatch.setattr(answer, "REDRAW_EVERY", 0.0)  # redrawn as often as it can be
    fake.add(text_reply(text, pieces=chunks))
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await send(pilot, app, "go")
        await settle(pilot, app)
        assert len(text) > 4 * DRAWN_APART_CHARS and on_the_loop
        assert max(on_the_loop) <= DRAWN_APART_CHARS
        monkeypatch.undo()
        shown = transcript_text(app)
    again = build(tmp_path, client)
    async with again.run_test(size=(120, 40)) as pilot:
        await settle(pilot, again)
        assert transcript_text(again) == shown


async def test_keys_are_served_while_the_end_of_a_long_answer_is_drawn(
    fake: FakeGemini, client: genai.Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The last drawing of a long answer, made in a thread, holds no frame back.

    It was awaited in the screen's turn (where the turn's end is handled, or
    after a refresh): the screen drew no frame meanwhile, and a key typed at
    the end of 475 KB of code showed 3.7 s later.
    """
    # The answer's end: held until the key was served.
    ending, drawn = held_plans(monkeypatch, growing=False, within=30)
    # The first part drawn at once, the end comes while the next redraw waits.
    monkeypatch.setattr(answer, "REDRAW_EVERY", 3600.0)
    frames: list[str] = []  # the prompt's text in each frame drawn
    display = KorokuApp._display

    def recording(self: KorokuApp, screen: Screen[object], renderable: object) -> None:
        frames.append(self.query_one(Prompt).text)
        display(self, screen, renderable)  # type: ignore[arg-type]

    monkeypatch.setattr(KorokuApp, "_display", recording)
    code = "".join(f"def f{i}(a):\n    return a  # {i}\n" for i in range(2000))
    fake.add(text_reply(f"```python\n{code}```\n", pieces=50, chunk_delay=0.02))
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        prompt = app.query_one(Prompt)
        prompt.focus()
        await pilot.pause()
        try:
            # Keys posted, not pressed: Pilot waits for every widget's messages,
            # the block's too (it waits for the thread).
            prompt.text = "go"
            app.post_message(events.Key("enter", None))
            await asyncio.to_thread(ending.wait, 30)
            app.post_message(events.Key("q", "q"))  # typed while the end is drawn
            for _ in range(1000):  # polled for 10 s: no Pilot pause, which would wait too
                if "q" in frames:
                    break
                await asyncio.sleep(0.01)
            assert "q" in frames  # typed and drawn while the end was drawn
            assert not drawn.is_set()
        finally:
            drawn.set()
        await settle(pilot, app)
        assert app.query(AnswerBlock).last().text == f"```python\n{code}```\n"
