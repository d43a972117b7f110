"""A long stored answer opens, and is drawn again at a new width, with the keys served meanwhile.

Drawn whole on the loop, a 475 KB answer held the keys ~3 s when its session
opened, and as long again at each resize (issue 22, item 21): it is laid out
as a stream's end is, in a thread, and its pieces drawn a batch at a time.
Here the threads are held until a key typed meanwhile is on screen.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from google.genai import types
from helpers.ui_kit import build, plain, settle, wait_until
from test_ui_answer_burst import rich_lines, transcript_text
from textual import events
from textual.drivers.headless_driver import HeadlessDriver
from textual.geometry import Size
from textual.pilot import Pilot
from textual.screen import Screen

from koroku_tui.config.settings import Settings
from koroku_tui.events import SessionEvent
from koroku_tui.store import SessionManager
from koroku_tui.ui.app import KorokuApp
from koroku_tui.ui.main import answer, answer_plan
from koroku_tui.ui.main.answer import AnswerBlock, AnswerPiece
from koroku_tui.ui.main.prompt import Prompt
from koroku_tui.ui.main.selectable import SelectableRich
from koroku_tui.ui.main.session_view import PAGE_SIZE
from koroku_tui.ui.main.transcript import Transcript

pytestmark = pytest.mark.timeout(120)

END = "Last words of the answer."


def long_answer(chars: int) -> str:
    """About ``chars`` of Markdown: headings, long paragraphs, nested lists, code blocks."""
    blocks = [
        "## Section {n}\n\n",
        "A paragraph about item {n}, with *emphasis*, `code` and a [link](http://e.st/{n}). " * 5
        + "\n\n",
        "- first point {n}\n- second point {n}\n  - nested {n}\n- third {n}\n\n",
        "```python\n"
        + "".join(f"def f{{n}}_{i}(a, b):\n    return a + b  # {i}\n" for i in range(12))
        + "```\n\n",
        "1. step one {n}\n2. step two {n}\n\n",
    ]
    out: list[str] = []
    n = 0
    while sum(map(len, out)) < chars:
        out.append(blocks[n % len(blocks)].format(n=n))
        n += 1
    return "".join(out) + END


async def store_answer(home: Path, text: str, then: int = 0) -> None:
    """Store a session of one question and ``text`` as its answer, and ``then`` short turns."""
    turns = [("explain", text), *((f"question {n}", f"answer {n}") for n in range(then))]
    async with SessionManager(Settings(home=home).database_path) as store:
        for question, answer_text in turns:
            for role, said in (("user", question), ("model", answer_text)):
                content = types.Content(role=role, parts=[types.Part(text=said)])
                await store.add_message(SessionEvent.from_content(content))


@contextmanager
def frames_seen(
    monkeypatch: pytest.MonkeyPatch, state: Callable[[KorokuApp], bool]
) -> Iterator[list[tuple[str, bool]]]:
    """Each frame drawn: the prompt's text, and ``state`` of the app then."""
    frames: list[tuple[str, bool]] = []
    display = KorokuApp._display

    def recording(self: KorokuApp, screen: Screen[object], renderable: object) -> None:
        if self.query(Prompt):
            frames.append((self.query_one(Prompt).text, state(self)))
        display(self, screen, renderable)  # type: ignore[arg-type]

    monkeypatch.setattr(KorokuApp, "_display", recording)
    yield frames


async def polled(condition: Callable[[], bool]) -> None:
    """Wait until ``condition()`` holds, polled without Pilot (see ``type_key``); 30 s at most."""
    for _ in range(3000):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("never came")


async def type_key(app: KorokuApp, key: str, frames: list[tuple[str, bool]]) -> tuple[str, bool]:
    """Post ``key`` to the prompt and wait for the first frame showing it; that frame.

    Posted, not pressed, and polled without Pilot: Pilot waits for every
    widget's messages, the block's too (it waits for the held thread).
    """
    app.query_one(Prompt).focus()
    app.post_message(events.Key(key, key))
    await polled(lambda: any(text.endswith(key) for text, _ in frames))
    return next(frame for frame in frames if frame[0].endswith(key))


def drawn_lines(block: AnswerBlock) -> list[str]:
    """The block's lines as its pieces draw them, a blank line between two pieces."""
    lines: list[str] = []
    for piece in block.query_children(AnswerPiece):
        lines += [*piece._drawn.lines(piece), ""]
    return [line.rstrip() for line in lines[:-1]]


async def fully_drawn(pilot: Pilot[None], app: KorokuApp) -> AnswerBlock:
    """Wait until the answer is drawn and every piece laid out by its true height."""
    await settle(pilot, app)
    block = app.query_one(AnswerBlock)

    def drawn() -> bool:
        pieces = block.query_children(AnswerPiece)
        return not any(piece.guessed for piece in pieces)

    await wait_until(pilot, drawn, "every piece drawn", within=60)
    await pilot.pause()
    return block


def end_shown(app: KorokuApp) -> bool:
    return any(END in row for row in transcript_text(app))


async def test_a_key_typed_while_a_long_stored_answer_opens_shows_before_the_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = long_answer(200_000)
    await store_answer(tmp_path, text)
    key_shown = threading.Event()

    def plan(*args: Any, **options: Any) -> answer_plan.Plan:
        key_shown.wait(30)  # the answer's layout, held until the key was on screen
        return answer_plan.plan(*args, **options)

    monkeypatch.setattr(answer, "plan", plan)
    with frames_seen(monkeypatch, end_shown) as frames:
        app = build(tmp_path, None)
        async with app.run_test(size=(120, 40)) as pilot:
            await polled(lambda: bool(app.query(AnswerBlock)))  # the session's blocks mounted
            try:
                _, answer_shown = await type_key(app, "x", frames)
            finally:
                key_shown.set()
            # Before, the first frame came once the answer was drawn whole.
            assert not answer_shown
            block = await fully_drawn(pilot, app)
            assert block.text == text
            assert end_shown(app)
            assert app.query_one(Prompt).text == "x"


async def test_a_long_stored_answer_is_drawn_as_its_text_is_and_kept_so_at_a_new_width(
    tmp_path: Path,
) -> None:
    text = long_answer(120_000)
    await store_answer(tmp_path, text)
    app = build(tmp_path, None)
    async with app.run_test(size=(120, 40)) as pilot:
        block = await fully_drawn(pilot, app)
        assert len(block.query_children(AnswerPiece)) > 1  # laid out as a stream's end
        width = block.size.width
        assert drawn_lines(block) == rich_lines(text, width)
        assert all(p.size.height == p.drawn_rows(p.size.width) for p in block.query(AnswerPiece))
        await pilot.resize_terminal(90, 30)
        block = await fully_drawn(pilot, app)
        assert block.size.width != width
        assert drawn_lines(block) == rich_lines(text, block.size.width)
        assert all(p.size.height == p.drawn_rows(p.size.width) for p in block.query(AnswerPiece))
        assert end_shown(app)


def resize(app: KorokuApp, size: Size) -> None:
    """As ``Pilot.resize_terminal``, less its pause (which would wait for the held thread)."""
    if isinstance(app._driver, HeadlessDriver):
        app._driver._size = size
    app.post_message(events.Resize(size, size))


def still_guessed(app: KorokuApp) -> bool:
    return any(piece.guessed for piece in app.query(AnswerPiece))


@pytest.mark.parametrize(
    "text",
    [
        pytest.param(long_answer(200_000), id="mixed"),
        pytest.param(
            "```python\n"
            + "".join(f"def f{i}(a):\n    return a  # {i}\n" for i in range(3000))
            + f"```\n\n{END}",
            id="one code block",
        ),
    ],
)
async def test_a_key_typed_after_a_resize_shows_before_the_answer_is_drawn_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str
) -> None:
    await store_answer(tmp_path, text)
    with frames_seen(monkeypatch, still_guessed) as frames:
        app = build(tmp_path, None)
        async with app.run_test(size=(120, 40)) as pilot:
            await fully_drawn(pilot, app)
            key_shown = threading.Event()
            prepare = SelectableRich.prepare

            def held(self: SelectableRich, width: int) -> SelectableRich:
                key_shown.wait(30)  # drawing at the new width, held until the key was shown
                return prepare(self, width)

            monkeypatch.setattr(SelectableRich, "prepare", held)
            try:
                width = app.query_one(AnswerBlock).size.width
                resize(app, Size(90, 40))
                # Laid out at the new width (before: drawn whole, too).
                await polled(lambda: app.query_one(AnswerBlock).size.width != width)
                _, guessed = await type_key(app, "y", frames)
            finally:
                key_shown.set()
            # Before, the resize drew the whole answer again before the next frame.
            assert guessed
            block = await fully_drawn(pilot, app)
            assert drawn_lines(block) == rich_lines(text, block.size.width)
            assert end_shown(app)


async def test_a_long_answer_in_a_page_read_above_keeps_what_is_read_in_place(
    tmp_path: Path,
) -> None:
    await store_answer(tmp_path, long_answer(100_000), then=PAGE_SIZE // 2 + 5)
    app = build(tmp_path, None)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        assert not any(block.text.endswith(END) for block in app.query(AnswerBlock))
        transcript = app.query_one(Transcript)
        transcript.scroll_home(animate=False, immediate=True)  # the page above comes
        read = transcript.children[0]
        text, where = plain(read), read.virtual_region.y - transcript.scroll_y
        await settle(pilot, app)
        [long] = [block for block in app.query(AnswerBlock) if block.text.endswith(END)]
        await wait_until(pilot, lambda: not long.guessing, "every piece drawn")
        await pilot.pause()
        assert len(long.query_children(AnswerPiece)) > 1  # laid out as a stream's end
        assert read.is_attached and plain(read) == text
        assert read.virtual_region.y - transcript.scroll_y == where  # did not move


async def test_every_frame_after_a_resize_shows_the_answer_as_drawn_at_last(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pieces laid out by a guess meanwhile: no frame shows one on screen (misdrawn)."""
    await store_answer(tmp_path, long_answer(200_000))
    screens: list[list[str]] = []

    def kept(app: KorokuApp) -> bool:
        screens.append(transcript_text(app))
        return True

    with frames_seen(monkeypatch, kept):
        app = build(tmp_path, None)
        async with app.run_test(size=(120, 40)) as pilot:
            await fully_drawn(pilot, app)
            screens.clear()
            await pilot.resize_terminal(90, 40)
            await fully_drawn(pilot, app)
            assert screens
            assert all(screen == transcript_text(app) for screen in screens)
