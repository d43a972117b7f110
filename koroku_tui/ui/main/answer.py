"""The model's answer: streamed as one re-drawn piece, kept as a few cheap pieces once written.

Why pieces: Textual lays out every mounted widget on each reflow, and mounting
costs far more than drawing. Textual's ``Markdown`` widget mounts about one
widget per paragraph, list item or fence: streaming into it spent most of a
fast answer mounting and styling widgets (9.5 s of 20 for 100 KB), while
keys waited. So an answer is nothing but :class:`AnswerPiece` widgets, each
one Static holding Rich's Markdown: the last one, the stretch being written,
is drawn again as text arrives (a few times a second at most), and the
finished stretches before it are cut off into pieces of :data:`PIECE_CHARS`
or more, so each redraw draws a bounded text.

Why guessed heights: Textual asks every piece its height, and drawing
Markdown costs more than receiving it (100 KB: ~0.4 s, more than
``--print`` takes for the whole reply). A piece cut off while a burst
streams, out of view below the screen's height of newer text, is given a
height guessed from its source and drawn only when it is painted, or once
the stream is quiet (:data:`QUIET_SECONDS`), in a thread; its true height
then replaces the guess (``ui.main.answer_guesses``). A text no cut can
split is drawn whole at each step: once long, in a thread
(``ui.main.answer_plan``). A long streamed step parses only its tail: its
head is cut by a scan of its lines and parsed when drawn
(``ui.main.answer_tail``). A long stored answer is shown as a stream's end
is, and a long answer at a new width laid out by guesses again.
"""

from __future__ import annotations

import asyncio
import time
from functools import partial
from itertools import pairwise
from typing import TYPE_CHECKING

from textual.widget import AwaitMount

from koroku_tui.text.safety import StreamCleaner
from koroku_tui.ui.main.answer_cuts import (
    MARKDOWN_MODULES,
    estimated_rows,
    markdown,
    split_point,
)
from koroku_tui.ui.main.answer_guesses import GuessedPieces
from koroku_tui.ui.main.answer_piece import AnswerPiece
from koroku_tui.ui.main.answer_plan import (
    DRAWN_APART_CHARS,
    PIECE_CHARS,
    STORED_PIECE_CHARS,
    apart,
    plan,
)
from koroku_tui.ui.main.laid_out import mounted
from koroku_tui.ui.main.selectable import SelectableRich
from koroku_tui.ui.safe_text import sanitize

if TYPE_CHECKING:
    from collections.abc import Callable

    from textual.timer import Timer

__all__ = [
    "MARKDOWN_MODULES",
    "PIECE_CHARS",
    "AnswerBlock",
    "AnswerPiece",
    "split_point",
]

REDRAW_SPACING = 4
"""A live piece is drawn again no sooner than this many times its last drawing's cost..."""
REDRAW_EVERY = 0.2
"""...and no sooner than this many seconds after it (five frames a second read as a stream)..."""
BURST_REDRAW_EVERY = 0.5
"""...or this many, once more text than the screen holds arrived since it (a burst): the
reader sees whole pages go by either way, and the agent receiving them gets the time.
A 100 KB burst was redrawn twice on its way, which made it ~8% slower (issue 22, item 21)."""
QUIET_SECONDS = 0.3
"""Once no text arrived for this long, the pieces whose height was guessed are drawn."""


class AnswerBlock(GuessedPieces):
    """The model's visible answer: finished pieces, the last one still written while streaming.

    What arrives goes to a backlog; each step (a few times a second at most,
    see :data:`REDRAW_EVERY`) takes all of it, cuts the finished stretches
    off into pieces and draws the rest in the last piece. Keys and Escape
    are served between two steps, and a step draws only the text being
    written and what is in view.
    """

    DEFAULT_CSS = """
    AnswerBlock {
        height: auto;
        layout: vertical;
    }
    """

    def __init__(self, text: str = "") -> None:
        # A stored answer's piece is a constructor child, not composed: it is
        # then mounted with the block, in the same frame. A long one is shown
        # as a stream's end is (``on_mount``): drawn whole, it held the keys
        # (475 KB: ~3 s before the first frame).
        text = sanitize(text)
        stored = text if len(text) > DRAWN_APART_CHARS else ""
        shown = [AnswerPiece(text, last=True)] if text and not stored else []
        super().__init__(*shown, classes="block")
        self._cleaner = StreamCleaner()
        """Cleans the stream as a whole: a \\r\\n or an escape cut in two is cleaned whole."""
        self._live: AnswerPiece | None = None
        self._live_text = ""
        self._backlog = stored
        """Text not yet shown: arrived since the last step, or a long stored answer's."""
        self._stored = bool(stored)
        self._next_look = PIECE_CHARS
        self._stepping = False
        self._finishing = False
        self._drawn_at = 0.0
        self._written_at = 0.0
        self._waiting: Timer | None = None
        """The step waiting for its turn to draw (stopped when the answer ends: drawn at once)."""
        self._quiet_mount = False
        self.shown = asyncio.Event()
        """Set once everything written so far is drawn (cleared by each write)."""
        self.ended = asyncio.Event()
        """Set once the answer's last words are drawn (``finish``): its long code blocks
        may still be drawn whole after (``shown`` waits for those too)."""
        if not stored:
            self.shown.set()

    def on_mount(self) -> None:
        """A long stored answer is shown as a finished stream: planned in a thread, a frame first.

        Its pieces are cut and parsed in the thread once the block has a
        width; those out of view are laid out by a guessed height and drawn
        in a thread (``ui.main.answer_guesses``). Keys typed meanwhile are served.
        """
        if self._backlog and self._live is None:
            self._live = AnswerPiece("", last=True)
            self.mount(self._live)
            self._finishing = self._stepping = True
            self.call_later(self._step)

    @property
    def text(self) -> str:
        """Everything this answer holds so far, as Markdown source (drawn or not yet)."""
        done = self.query_children(AnswerPiece)
        pieces = "".join(piece.source for piece in done if piece is not self._live)
        return pieces + self._live_text + self._backlog + self._cleaner.pending

    async def write(self, fragment: str) -> None:
        """Add a streamed fragment; it is drawn within a few frames (see the class doc)."""
        await self._add(self._cleaner.feed(fragment))

    async def _add(self, text: str) -> None:
        self._backlog += text
        if not text or not self.is_attached:  # detached: the app is quitting, kept unshown
            return
        self._written_at = time.monotonic()
        self.shown.clear()
        if self._live is None:
            self._live = AnswerPiece("", last=True)
            await self.mount(self._live)
        if not self._stepping:
            self._stepping = True
            self.call_later(self._step)

    async def finish(self) -> None:
        """Keep the text as finished pieces once all of it is drawn (safe to call twice)."""
        await self._add(self._cleaner.flush())  # an escape sequence the answer ended in
        self._finishing = True
        waiting, self._waiting = self._waiting, None
        if waiting is not None:  # the last text is drawn now, not when its turn would come
            waiting.stop()
        elif self._stepping:
            return  # the step under way draws it
        self._stepping = True
        if len(self._live_text) + len(self._backlog) > DRAWN_APART_CHARS:
            # Drawn in a thread (ui.main.answer_plan), awaited in this block's
            # turn: the caller's (the screen's) serves the keys meanwhile.
            self.call_later(self._step)
        else:
            await self._step()

    async def _step(self) -> None:
        """Draw what arrived (cutting finished stretches off), once its turn to be drawn came."""
        self._waiting = None
        live = self._live
        if live is None or not self.is_attached:  # the app is quitting: nothing more is shown
            self._stepping = False
            self.ended.set()
            self.shown.set()
            return
        now = time.monotonic()
        spacing = max(REDRAW_EVERY, REDRAW_SPACING * live.cost)
        if len(self._backlog) > self.screen.size.area:
            spacing = max(spacing, BURST_REDRAW_EVERY)
        wait = self._drawn_at + spacing - now
        if wait > 0 and not self._finishing:  # drawn again later: the stream is quicker
            self._waiting = self.set_timer(wait, self._step)
            return
        if not live.size.width and len(self._live_text) + len(self._backlog) > DRAWN_APART_CHARS:
            # Drawn apart, a text is drawn in the thread at the piece's width: not
            # laid out yet (mounted by this stream, or its steps came with no frame
            # between them: a loaded loop), it would be drawn here once laid out.
            live.when_laid_out(partial(self.call_later, self._step))
            return
        self._drawn_at = now
        text, self._backlog = self._live_text + self._backlog, ""
        self._live_text = text  # the answer's ``text`` until shown (a plan may take a while)
        growing = not self._finishing
        await self._draw(live, text, growing)
        # More came while a plan was made or pieces were mounted: drawn at its
        # turn (``_step`` waits for it, keys and frames first), or at once if
        # the answer ends before (``finish``). The answer ended meanwhile:
        # drawn whole now, its end in the frame that shows this step. (Drawn
        # after the next frame, the end waited for a frame of its own: ~25 ms
        # at the end of a fast 100 KB answer, issue 22, item 21.)
        if self._backlog or (growing and self._finishing):
            self.call_later(self._step)
            return
        self._stepping = False
        if self._finishing:
            self._live, self._live_text, self._next_look = None, "", PIECE_CHARS
            self._finishing = False
            self.ended.set()
            if any(piece.provisional for piece in self.query_children(AnswerPiece)):
                self.call_after_refresh(self._draw_whole)  # its end is shown first
                return
        self.shown.set()

    def _draw_whole(self) -> None:
        """Draw whole the long code blocks shown from their stretches, in a thread; swap them in."""
        pieces = [piece for piece in self.query_children(AnswerPiece) if piece.provisional]
        width = next((piece.size.width for piece in pieces if piece.size.width), 0)
        visuals: list[tuple[AnswerPiece, SelectableRich]] = []

        def draw() -> None:
            for piece in pieces:
                visual = SelectableRich(piece, markdown(piece.source))
                if width:  # else drawn when laid out
                    visual.prepare(width)
                visuals.append((piece, visual))

        def swap() -> None:
            for piece, visual in visuals:
                if piece.is_attached and piece.provisional:
                    piece.redrawn(visual)
            if not self._stepping:  # else a new write's step sets it
                self.shown.set()

        apart("answer-drawn-whole", draw, swap)

    async def _draw(self, live: AnswerPiece, text: str, growing: bool) -> None:
        """Show ``text`` (the live piece's and what arrived), finished stretches cut off first."""
        if len(text) > DRAWN_APART_CHARS:  # see ui.main.answer_plan
            started, width = time.monotonic(), live.size.width  # laid out (see _step)
            # A stored answer: fewer pieces, and its rows in view drawn here too.
            rows, chars = (self.screen.size.height, STORED_PIECE_CHARS) if self._stored else (0, 0)
            planned = await asyncio.to_thread(
                partial(
                    plan,
                    growing=growing,
                    piece_chars=chars or PIECE_CHARS,
                    shown_rows=rows,
                    tail_first=not self._stored,  # a stored answer is read from its top too
                ),
                live,
                text,
                self._next_look,
                width,
            )
            if not live.is_attached:
                return  # the app is quitting (the text stays the live text)
            drawing = time.monotonic() - started  # what the next redraw will cost (a thread's)
        else:
            planned, drawing = plan(live, text, self._next_look, 0, growing=growing), 0.0
        self._next_look = planned.next_look
        self._live_text = text[planned.bounds[-1] :]
        if len(planned.bounds) == 1:
            live.show(self._live_text, planned.live, drawing)
            return
        parts = zip(pairwise(planned.bounds), planned.pieces, strict=True)
        pieces = [AnswerPiece(text[a:b], visual=drawing) for (a, b), drawing in parts]
        self._guess_out_of_view(pieces)
        # A stored answer in a page read above what is read (scrolled up to)
        # grows once planned: what is read stays in place.
        held = self._height_above_view() if self._stored else None
        if held is not None:
            self.call_after_refresh(self._grown_above_view, held)
        self._quiet_mount = True  # see call_next
        try:
            self.mount_all(pieces, before=live)  # children now: laid out in the next frame
        finally:
            self._quiet_mount = False
        live.carry_selection(pieces)
        # In the same frame as the pieces: no text is shown twice.
        live.show(self._live_text, planned.live, drawing)
        await mounted(pieces)

    def call_next(self, callback: Callable[..., object], *args: object, **kwargs: object) -> None:
        """As Textual's, less the wait a step's mount schedules (see ``ui.main.laid_out``).

        Textual's mount runs its own wait once the block's handler ends,
        which then lays the block out again: the step's pieces were laid out
        already, in the frame that showed them with the live piece's text.
        """
        if self._quiet_mount and isinstance(callback, AwaitMount):
            return
        super().call_next(callback, *args, **kwargs)

    def _guess_out_of_view(self, pieces: list[AnswerPiece]) -> None:
        """Guess the heights of ``pieces`` that a screen's height of newer text puts out of view."""
        width = self.size.width or self.app.size.width
        below = estimated_rows(self._live_text, width)
        guessed: list[AnswerPiece] = []
        for piece in reversed(pieces):
            if below >= self.screen.size.height and not piece.drawn_at(width):
                piece.guessed = True
                guessed.insert(0, piece)
            below += estimated_rows(piece.source, width) + 1  # the blank line between pieces
        if guessed:
            self._watch_view()
        self._guessed += guessed
        if self._guessed and not self._measuring:
            self._measuring = True
            self.set_timer(QUIET_SECONDS, self._measure_guessed)

    def _measure_guessed(self) -> None:
        """Draw the guessed pieces (in a thread, newest first) once the stream is quiet."""
        quiet = time.monotonic() - self._written_at
        if quiet < QUIET_SECONDS and self._live is not None:
            self.set_timer(QUIET_SECONDS - quiet, self._measure_guessed)
            return
        self._draw_ahead()
