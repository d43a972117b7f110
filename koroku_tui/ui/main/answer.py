"""The model's answer: streamed as one re-drawn piece, kept as a few cheap pieces once written.

Why pieces: Textual lays out every mounted widget on each reflow, and mounting
costs far more than drawing. Textual's ``Markdown`` widget mounts about one
widget per paragraph, list item or fence: streaming into it spent most of a
fast answer mounting and styling widgets (9.5 s of 20 for 100 KB), while
keys waited. So an answer is nothing but :class:`AnswerPiece` widgets, each
one Static holding Rich's Markdown: the last one, the stretch being written,
is drawn again as text arrives (at most a batch of the hooks at a time, see
``ui.main.bridge``), and once it holds a finished stretch of
:data:`PIECE_CHARS` or more, that stretch is frozen and a new last piece
takes the rest, so each redraw parses a bounded text.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

from textual.geometry import Region, Size
from textual.selection import Selection
from textual.strip import Strip
from textual.visual import Visual
from textual.widget import Widget
from textual.widgets import Static

from koroku_tui.text.safety import StreamCleaner
from koroku_tui.ui.main.selectable import SelectableRich, selected_text
from koroku_tui.ui.safe_text import sanitize

if TYPE_CHECKING:
    from rich.markdown import Markdown as RichMarkdown

MARKDOWN_MODULES = ("rich.markdown", "markdown_it")
"""Rich's Markdown and its parser (~50 ms to import here), imported where an
answer is first drawn: a new or empty session's first frame has none."""

__all__ = ["PIECE_CHARS", "AnswerBlock", "AnswerPiece", "split_point"]

PIECE_CHARS = 1_500
"""Live text kept before a finished stretch is frozen into a piece (each redraw parses it)."""

_CHECK_EVERY = 200
"""Characters of growth between two looks for a cut (each look parses the live text)."""
FRAME_CHARS = 4_000
"""Characters of the backlog a step moves into view (about what one frame can draw)."""
REDRAW_SPACING = 4
"""A live piece is drawn again no sooner than this many times its last drawing's cost..."""
REDRAW_EVERY = 0.2
"""...and no sooner than this many seconds after it (five frames a second read as a stream)."""


def split_point(text: str, min_chars: int = PIECE_CHARS) -> int | None:
    """Where ``text`` may be cut into two Markdown documents that render like the whole.

    The cut is at the start of the last top-level block (paragraph, list,
    fence, table...) that begins at least ``min_chars`` in and after a blank
    line, as the live widget's own parser (markdown-it, "gfm-like") sees the
    text. The block being written stays whole after the cut, however it
    grows. None when there is no such block yet, or when the text defines
    reference links (``[x]: url``), which a later piece could no longer see.
    """
    if len(text) < min_chars or "\r" in text:  # markdown-it counts a lone \r as a line end
        return None
    from markdown_it import MarkdownIt  # see MARKDOWN_MODULES

    env: dict[str, object] = {}
    tokens = MarkdownIt("gfm-like").parse(text, env)
    if env.get("references"):
        return None
    starts = [t.map[0] for t in tokens if t.level == 0 and t.map is not None and t.nesting >= 0]
    offsets = [0]
    for line in text.split("\n"):  # markdown-it numbers lines by "\n" alone
        offsets.append(offsets[-1] + len(line) + 1)
    cuts = [offsets[line] for line in starts[1:] if offsets[line] >= min_chars]
    # A block directly after another (no blank line) may be its continuation
    # (a lazy paragraph line, a table row): cut only after a blank line.
    cuts = [cut for cut in cuts if text[:cut].endswith("\n\n")]
    return cuts[-1] if cuts else None


class AnswerPiece(Static):
    """A finished stretch of an answer, drawn as one widget.

    Links are shown with their address rather than made clickable (the text
    comes from the model), and code uses the terminal's own palette. Its
    text can be selected with the mouse and copied (``ui.main.selectable``).
    """

    def __init__(self, text: str, *, last: bool = False) -> None:
        self.source = text
        markdown = self._markdown(text)
        # ``last``: the answer's end (no blank line under it), stored or being written.
        super().__init__(markdown, classes="answer-piece -last" if last else "answer-piece")
        self._drawn = SelectableRich(self, markdown)

    @staticmethod
    def _markdown(text: str) -> RichMarkdown:
        from rich.markdown import Markdown  # see MARKDOWN_MODULES

        return Markdown(text, code_theme="ansi_dark", hyperlinks=False)

    def show(self, text: str) -> None:
        """Draw ``text`` instead (the piece being written grew)."""
        self.source = text
        markdown = self._markdown(text)
        self._drawn = SelectableRich(self, markdown)
        self.cost = 0.0
        self.update(markdown)

    cost = 0.0
    """Seconds spent measuring and drawing the text shown now (what a redraw will cost)."""

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        started = time.monotonic()
        try:
            return super().get_content_height(container, viewport, width)
        finally:
            self.cost += time.monotonic() - started

    def render_lines(self, crop: Region) -> list[Strip]:
        started = time.monotonic()
        try:
            return super().render_lines(crop)
        finally:
            self.cost += time.monotonic() - started

    def render(self) -> Visual:
        return self._drawn

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        return selected_text(self, self._drawn, selection), "\n"


class AnswerBlock(Widget):
    """The model's visible answer: finished pieces, the last one still written while streaming.

    Text is shown a frame's worth at a time: what arrives goes to a backlog,
    and each step moves at most :data:`FRAME_CHARS` of it into the last piece
    (freezing finished stretches on the way), draws it, and waits for the
    next frame before the next step. Drawing Markdown costs more than
    receiving it, so a fast stream is shown a little behind, and keys and
    Escape are served between two steps instead of after the whole answer.
    """

    DEFAULT_CSS = """
    AnswerBlock {
        height: auto;
        layout: vertical;
    }
    """

    def __init__(self, text: str = "") -> None:
        # A stored answer's piece is a constructor child, not composed: it is
        # then mounted with the block, in the same frame.
        text = sanitize(text)
        super().__init__(*([AnswerPiece(text, last=True)] if text else []), classes="block")
        self._cleaner = StreamCleaner()
        """Cleans the stream as a whole: a \\r\\n or an escape cut in two is cleaned whole."""
        self._live: AnswerPiece | None = None
        self._live_text = ""
        self._backlog = ""
        self._next_look = PIECE_CHARS
        self._stepping = False
        self._finishing = False
        self._drawn_at = 0.0
        self.shown = asyncio.Event()
        """Set once everything written so far is drawn (cleared by each write)."""
        self.shown.set()

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
        if not self._stepping:
            await self._step()

    def _carry_selection(self, live: AnswerPiece, frozen: AnswerPiece) -> None:
        """Text selected in the live piece stays selected where it now is: in ``frozen``.

        ``frozen`` draws the first lines the live piece drew (the cut is
        between blocks); left on the live piece, the selection would cover
        the text that follows instead, and ctrl+c would copy that.
        """
        selections = self.screen.selections
        if live in selections:
            kept = {widget: s for widget, s in selections.items() if widget is not live}
            self.screen.selections = {**kept, frozen: selections[live]}

    async def _step(self) -> None:
        """Move a frame's worth of the backlog into view; again after the next frame if more."""
        live = self._live
        if live is None or not self.is_attached:  # the app is quitting: nothing more is shown
            self._stepping = False
            self.shown.set()
            return
        taken, self._backlog = self._backlog[:FRAME_CHARS], self._backlog[FRAME_CHARS:]
        self._live_text += taken
        while len(self._live_text) >= self._next_look:
            # Geometric spacing: a long stretch with no cut (one huge fence)
            # is parsed O(log n) times, not once per 200 characters.
            size = len(self._live_text)
            self._next_look = size + max(_CHECK_EVERY, size // 4)
            cut = split_point(self._live_text)
            if cut is not None:
                done, self._live_text = self._live_text[:cut], self._live_text[cut:]
                self._next_look = PIECE_CHARS
                frozen = AnswerPiece(done)
                await self.mount(frozen, before=live)
                self._carry_selection(live, frozen)
        now = time.monotonic()
        spacing = max(REDRAW_EVERY, REDRAW_SPACING * live.cost)
        if self._backlog or now >= self._drawn_at + spacing or self._finishing:
            live.show(self._live_text)
            self._drawn_at = now
        if self._backlog:
            self.call_after_refresh(self._step)  # keys and a frame first
            return
        if self._live_text != live.source:  # drawn later: the stream is quick but not the redraw
            self.set_timer(self._drawn_at + spacing - now, self._step)
            return
        self._stepping = False
        if self._finishing:
            self._live, self._live_text, self._next_look = None, "", PIECE_CHARS
            self._finishing = False
        self.shown.set()
