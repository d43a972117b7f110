"""A finished answer's text can be selected with the mouse and copied (ctrl+c), as any text.

Textual selects text only in what it draws itself (``Content``): a Static
holding a Rich renderable (an ``AnswerPiece``'s Markdown) takes no
selection, shows none, and gives no text to copy. ``SelectableRich`` draws
the renderable as Textual does and adds what ``Content`` adds: each cell
carries its place in the drawn text (how Textual finds where a drag starts
and ends), and the selected stretch is highlighted. ``selected_text`` gives
the text under a selection, as drawn (the Markdown's layout, not its source).
"""

from __future__ import annotations

from itertools import islice

from rich.cells import cell_len
from rich.console import RenderableType
from rich.segment import Segment
from rich.style import Style as RichStyle
from textual._context import active_app
from textual.css.styles import RulesMap
from textual.selection import Selection
from textual.strip import Strip
from textual.style import Style
from textual.visual import RenderOptions, RichVisual, Visual
from textual.widget import Widget

__all__ = ["SelectableRich", "selected_text"]


class SelectableRich(RichVisual):
    """A Rich renderable drawn with text offsets and the selection highlighted.

    Drawn once per width: Textual renders a Rich renderable to measure its
    height, then again to paint it, and for an answer's Markdown (parsed,
    wrapped, its code highlighted) each time costs about as much as the whole
    stream of that text (``bench/stream_input_bench.py``).
    """

    def __init__(self, widget: Widget, renderable: RenderableType) -> None:
        super().__init__(widget, renderable)
        self._drawn: tuple[int, list[Segment]] | None = None
        self._split: tuple[int, list[list[Segment]]] | None = None

    def _segments(self, width: int) -> list[Segment]:
        """The renderable's segments at ``width``, rendered on first use."""
        if self._drawn is None or self._drawn[0] != width:
            app = active_app.get()
            options = app.console_options.update(highlight=False, width=width, height=None)
            self._drawn = (width, list(app.console.render(self._renderable, options)))
        return self._drawn[1]

    def _lines(self, width: int) -> list[list[Segment]]:
        """The segments at ``width`` cut into lines (each cropped to the width)."""
        if self._split is None or self._split[0] != width:
            drawn = self._segments(width)
            lines = Segment.split_and_crop_lines(drawn, width, include_new_lines=False, pad=False)
            self._split = (width, list(lines))
        return self._split[1]

    @property
    def renderable(self) -> RenderableType:
        """What is drawn (Rich's Markdown of an answer piece)."""
        return self._renderable

    def prepare(self, width: int) -> SelectableRich:
        """Draw at ``width`` now, cut into lines (in a thread: the keys wait for no drawing)."""
        self._lines(width)
        return self

    @property
    def width(self) -> int:
        """The width last drawn at (0: none yet)."""
        return self._drawn[0] if self._drawn is not None else 0

    def drawn_at(self, width: int) -> bool:
        """True when drawn at ``width`` already."""
        return self._drawn is not None and self._drawn[0] == width

    def bound_to(self, widget: Widget) -> SelectableRich:
        """The same renderable, drawn as far as it was, for ``widget`` (made in a thread)."""
        bound = SelectableRich(widget, self._renderable)
        bound._drawn, bound._split = self._drawn, self._split
        return bound

    def rows(self, width: int) -> int:
        """How many lines the renderable takes at ``width`` (rendering it if it was not)."""
        return sum(text.count("\n") for text, _, _ in self._segments(width))

    def get_height(self, rules: RulesMap, width: int) -> int:
        return self.rows(width)

    def line(
        self, y: int, width: int, style: Style, selection: Selection | None, selected: Style | None
    ) -> Strip | None:
        """Line ``y`` as drawn at ``width`` over ``style``, ``selection`` in ``selected`` style.

        One line at a time: Textual paints the lines in view, and making the
        strips of a long piece's every line (thousands for a big code block)
        cost more than drawing its Markdown. None past the last line.
        """
        lines = self._lines(width)
        if y >= len(lines):
            return None
        base = style.rich_style
        # Over the widget's style, as Textual's post_render lays a Rich renderable.
        strip = Strip([Segment(text, base + own, control) for text, own, control in lines[y]])
        span = selection.get_span(y) if selection is not None else None
        if span is not None and selected is not None:
            strip = _highlighted(strip, *span, selected)
        return strip.apply_offsets(0, y)

    def render_strips(
        self, width: int, height: int | None, style: Style, options: RenderOptions
    ) -> list[Strip]:
        count = len(self._lines(width))
        selection, selected = options.selection, options.selection_style
        lines = (self.line(y, width, style, selection, selected) for y in range(count))
        return [line for line in islice(lines, None, height) if line is not None]

    def lines(self, widget: Widget) -> list[str]:
        """The text of each line as ``widget`` draws it, at its width."""
        width = widget.content_region.width or widget.size.width
        strips = Visual.to_strips(widget, self, width, None, widget.visual_style)
        return [strip.text for strip in strips]


def _highlighted(strip: Strip, start: int, end: int, style: Style) -> Strip:
    """``strip`` with characters ``start`` to ``end`` (-1: the line's end) in ``style``."""
    text = strip.text
    end = len(text) if end == -1 else min(end, len(text))
    if start >= end:
        return strip
    first, last = cell_len(text[:start]), cell_len(text[:end])
    before, middle, after = strip.divide([first, last, strip.cell_length])
    # Laid over each piece's own colours, as Content draws a selection: the
    # selection's background is half transparent, its text colour the text's.
    over = [
        Segment(text, (Style.from_rich_style(own or RichStyle()) + style).rich_style, control)
        for text, own, control in middle
    ]
    return Strip.join([before, Strip(over, middle.cell_length), after])


def selected_text(widget: Widget, visual: SelectableRich, selection: Selection) -> str:
    """The text under ``selection`` in ``visual`` as ``widget`` draws it, lines right-trimmed."""
    drawn = visual.lines(widget)
    picked = selection.extract("\n".join(drawn))
    return "\n".join(line.rstrip() for line in picked.split("\n"))
