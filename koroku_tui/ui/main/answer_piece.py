"""One stretch of an answer drawn as one widget, its height guessed until it is drawn.

See ``ui.main.answer`` for why an answer is made of pieces, and why a piece
cut off out of view while a burst streams is laid out by a guessed height.
"""

from __future__ import annotations

import time
from functools import partial
from typing import TYPE_CHECKING

from textual.geometry import Offset, Region, Size
from textual.selection import Selection
from textual.strip import Strip
from textual.style import Style
from textual.visual import Visual
from textual.widgets import Static

from koroku_tui.ui.main.answer_cuts import estimated_rows, markdown
from koroku_tui.ui.main.answer_plan import DRAWN_APART_CHARS, apart
from koroku_tui.ui.main.laid_out import LaidOutOnce
from koroku_tui.ui.main.selectable import SelectableRich, selected_text

if TYPE_CHECKING:
    from collections.abc import Callable

    from rich.console import RenderableType
    from rich.markdown import Markdown as RichMarkdown

    from koroku_tui.ui.main.answer_fence import CodeStretches

__all__ = ["AnswerPiece"]


class AnswerPiece(Static, LaidOutOnce):
    """A stretch of an answer, drawn as one widget (Rich's Markdown).

    Its text can be selected with the mouse and copied
    (``ui.main.selectable``). A piece cut off out of view while a burst
    streams is ``guessed``: laid out by a height guessed from its source
    until it is drawn (see the module's doc).
    """

    def __init__(
        self,
        text: str,
        *,
        last: bool = False,
        drawn: RichMarkdown | None = None,
        visual: SelectableRich | None = None,
    ) -> None:
        """``drawn``: the text's Markdown if made; ``visual``: it drawn already (in a thread)."""
        self.source = text
        shown: RenderableType = visual.renderable if visual is not None else drawn or markdown(text)
        # ``last``: the answer's end (no blank line under it), stored or being written.
        super().__init__(shown, classes="answer-piece -last" if last else "answer-piece")
        self._drawn = SelectableRich(self, shown) if visual is None else visual.bound_to(self)
        self.guessed = False
        """True while the height laid out is a guess: the text was not drawn yet."""
        self._guess = (0, 0)
        """The width last guessed for and the height guessed."""
        self._stretches: CodeStretches | None = None
        """A growing code block's stretches drawn so far (while the piece is written)."""
        self._laid_out: Callable[[], object] | None = None
        """Called once the piece has a width (see ``when_laid_out``)."""
        self.apart = False
        """True while the text is drawn at a new width in a thread (``guess_anew``)."""

    def drawing(self, drawn: RichMarkdown, *, growing: bool) -> SelectableRich:
        """How this piece draws the Markdown ``drawn`` once shown; any thread.

        ``growing``: more text will come; a long code block is then drawn a
        stretch at a time (``ui.main.answer_fence``), not highlighted whole
        at each redraw.
        """
        # Imports Rich's Markdown: an answer is drawn already (answer_cuts.MARKDOWN_MODULES).
        from koroku_tui.ui.main.answer_fence import CodeStretches, drawn_finished, drawn_growing

        if growing:
            self._stretches = self._stretches or CodeStretches()
            return SelectableRich(self, drawn_growing(drawn, self._stretches))
        # Finished: shown from the stretches, drawn whole later (see answer_fence).
        stretches, self._stretches = self.stretches, None
        return SelectableRich(self, drawn_finished(drawn, stretches))

    @property
    def stretches(self) -> CodeStretches | None:
        """The stretches of a long code block drawn while this piece grew (None: none grew)."""
        stretches = self._stretches
        return stretches if stretches is not None and stretches.used else None

    @property
    def provisional(self) -> bool:
        """True while a long code block is shown from its stretches, not yet drawn whole."""
        from koroku_tui.ui.main.answer_fence import GrowingMarkdown

        # The piece being written draws from stretches too, but holds them.
        return self._stretches is None and isinstance(self._drawn.renderable, GrowingMarkdown)

    def when_laid_out(self, callback: Callable[[], object]) -> None:
        """Call ``callback`` once this piece is laid out (has a width): what a thread draws at.

        Not polled frame after frame: a piece on a screen not shown is laid
        out only once its screen is shown again.
        """
        if self.size.width:
            callback()
        else:
            self._laid_out = callback

    def on_resize(self) -> None:
        """Laid out: the callback waiting for a width, if any, is called."""
        callback = self._laid_out
        if callback is not None and self.size.width:
            self._laid_out = None
            callback()

    def redrawn(self, visual: SelectableRich) -> None:
        """Show ``visual``, this piece's text drawn whole, instead of its stretches."""
        self._drawn = visual
        self.update(visual.renderable)

    def show(self, text: str, visual: SelectableRich, cost: float = 0.0) -> None:
        """Draw ``text`` instead (the piece being written grew), as ``visual`` draws it.

        ``cost``: seconds spent drawing it already (in a thread).
        """
        self.source = text
        self._drawn = visual
        self.cost = cost
        self.update(visual.renderable)

    cost = 0.0
    """Seconds spent measuring and drawing the text shown now (what a redraw will cost)."""

    def measure(self) -> int:
        """Draw the text now and lay the piece out by its true height: how many rows it grew.

        Nothing to do for a piece already drawn. A guess that was wrong is
        corrected at the next layout.
        """
        if not self.guessed or self.apart:  # drawn in a thread (``guess_anew``)
            return 0
        self.guessed = False
        width, guess = self.size
        if not width:  # never laid out: the next layout measures it
            self.refresh(layout=True)
            return 0
        grown = self._drawn.rows(width) - guess
        if grown:
            self.refresh(layout=True)
        return grown

    def guess_anew(self) -> None:
        """Laid out by a guessed height at the next width, drawn at it later (a resize).

        A text too long to draw between two frames (:data:`DRAWN_APART_CHARS`)
        is drawn in a thread, and shown meanwhile as drawn at the width before.
        """
        self.guessed = True
        self.apart = len(self.source) > DRAWN_APART_CHARS

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        if self.apart and self._drawn.drawn_at(width):  # back to the width it was drawn at
            self.guessed = self.apart = False
            self.refresh(layout=True)  # by its true height, which the block lays out again
        if self.guessed:
            if self._guess[0] != width:  # asked at each layout: counted once per width
                self._guess = (width, estimated_rows(self.source, width))
                if self.apart:
                    self._draw_apart(width)
            return self._guess[1]
        started = time.monotonic()
        try:
            return super().get_content_height(container, viewport, width)
        finally:
            self.cost += time.monotonic() - started

    def _draw_apart(self, width: int) -> None:
        """Draw the text at ``width`` in a thread, then lay the piece out by its true height."""
        visual = SelectableRich(self, self._drawn.renderable)

        def drawn() -> None:
            if self.is_attached and self.apart and self._guess[0] == width:
                self.guessed = self.apart = False
                self._drawn = visual
                self.refresh(layout=True)

        apart("answer-drawn-anew", partial(visual.prepare, width), drawn)

    def render_lines(self, crop: Region) -> list[Strip]:
        self.measure()  # painted: its true height from the next frame on
        started = time.monotonic()
        try:
            return super().render_lines(crop)
        finally:
            self.cost += time.monotonic() - started

    def render(self) -> Visual:
        return self._drawn

    def render_line(self, y: int) -> Strip:
        # Only the lines painted are made (see SelectableRich.line), not the
        # whole piece's as Textual's Static does at each repaint.
        self._dirty_regions.clear()
        width, style, selection = self.size.width, self.visual_style, self.text_selection
        selected = None
        if selection is not None:
            selected = Style.from_styles(self.screen.get_component_styles("screen--selection"))
        if self.apart:  # as drawn at the width before, until drawn at this one
            before = self._drawn.width
            line = self._drawn.line(y, before, style, selection, selected) if before else None
            line = line and line.crop_extend(0, width, style.rich_style)
        else:
            line = self._drawn.line(y, width, style, selection, selected)
        return Strip.blank(width, style.rich_style) if line is None else line

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        # The blank line under a piece is its margin, not its text: copied
        # across a cut, it went missing (a restart's one piece holds it).
        ending = "\n" if self.has_class("-last") else "\n\n"
        return selected_text(self, self._drawn, selection), ending

    def drawn_at(self, width: int) -> bool:
        """True when the text is drawn at ``width`` already (its true height known at no cost)."""
        return self._drawn.drawn_at(width)

    def draw_at(self, width: int) -> None:
        """Draw the text at ``width`` now, laid out by it at the next ``measure`` (any thread)."""
        self._drawn.prepare(width)

    def drawn_rows(self, width: int) -> int:
        """How many lines the text takes drawn at ``width`` (drawing it if it was not)."""
        return self._drawn.rows(width)

    def carry_selection(self, pieces: list[AnswerPiece]) -> None:
        """Text selected in this live piece stays selected where it now is: in ``pieces``.

        ``pieces``, cut off this piece's text, draw the first lines it drew,
        each followed by a blank line (the cuts are between blocks); left on
        this piece, the selection would cover the text that follows instead,
        and ctrl+c would copy that.
        """
        live, selections = self, self.screen.selections
        selection = selections.get(live)
        if selection is None:
            return
        kept = {widget: s for widget, s in selections.items() if widget is not live}
        top, width = 0, live.size.width
        for piece in pieces:
            rows = piece.drawn_rows(width)
            part = _shifted(selection, top, top + rows)
            if part is not None:
                kept[piece] = part
            top += rows + 1
        rest = _shifted(selection, top, None)
        if rest is not None:
            kept[live] = rest
        self.screen.selections = kept


def _shifted(selection: Selection, top: int, bottom: int | None) -> Selection | None:
    """The part of ``selection`` on lines ``top`` to ``bottom`` (excluded; None: to the end).

    Moved up by ``top``: as the piece drawing those lines selects it. None: nothing there.
    """
    start, end = selection.start, selection.end
    if (end is not None and end.y < top) or (
        start is not None and bottom is not None and start.y >= bottom
    ):
        return None
    inside_start = None if start is None or start.y < top else Offset(start.x, start.y - top)
    inside_end = (
        None
        if end is None or (bottom is not None and end.y >= bottom)
        else Offset(end.x, end.y - top)
    )
    return Selection(inside_start, inside_end)
