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

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style as RichStyle
from textual.selection import Selection
from textual.strip import Strip
from textual.style import Style
from textual.visual import RenderOptions, RichVisual, Visual
from textual.widget import Widget

__all__ = ["SelectableRich", "selected_text"]


class SelectableRich(RichVisual):
    """A Rich renderable drawn with text offsets and the selection highlighted."""

    def render_strips(
        self, width: int, height: int | None, style: Style, options: RenderOptions
    ) -> list[Strip]:
        strips = super().render_strips(width, height, style, options)
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
