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
from rich.segment import Segment, Segments
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

    def _segments(self, width: int) -> list[Segment]:
        """The renderable's segments at ``width``, rendered on first use."""
        if self._drawn is None or self._drawn[0] != width:
            app = active_app.get()
            options = app.console_options.update(highlight=False, width=width, height=None)
            self._drawn = (width, list(app.console.render(self._renderable, options)))
        return self._drawn[1]

    def rows(self, width: int) -> int:
        """How many lines the renderable takes at ``width`` (rendering it if it was not)."""
        return sum(text.count("\n") for text, _, _ in self._segments(width))

    def get_height(self, rules: RulesMap, width: int) -> int:
        return self.rows(width)

    def render_strips(
        self, width: int, height: int | None, style: Style, options: RenderOptions
    ) -> list[Strip]:
        app = active_app.get()
        drawn = Segments(self._segments(width))
        renderable = self._widget.post_render(drawn, style.rich_style)
        console_options = app.console_options.update(highlight=False, width=width)
        segments = app.console.render(renderable, console_options)
        lines = Segment.split_and_crop_lines(segments, width, include_new_lines=False, pad=False)
        strips = [Strip(line) for line in islice(lines, None, height)]
        selection, selected = options.selection, options.selection_style
        shown: list[Strip] = []
        for y, strip in enumerate(strips):
            span = selection.get_span(y) if selection is not None else None
            if span is not None and selected is not None:
                strip = _highlighted(strip, *span, selected)
            shown.append(strip.apply_offsets(0, y))
        return shown

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
