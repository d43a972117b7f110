"""Styles looked up once a draw, not once a line, for widgets that draw many lines.

A Line API widget asks for its own style (``rich_style``, which walks every
ancestor's styles) for each line it draws, and DataTable a row style for each
row (``ToolTable``). In one draw none of them can change: Textual draws a
widget's lines in one synchronous call (``render_lines``). Drawing a sidebar
of thirty rows asked about a hundred times (~40% of a table's draw, issue 22,
item 21); a frame that waits on it is a frame the keys wait on. Component
styles (``get_component_rich_style``) need nothing here: Textual keeps them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.style import Style
from textual.geometry import Region
from textual.strip import Strip

__all__ = ["StylesOncePerDraw"]

if TYPE_CHECKING:
    from textual.widget import Widget

    _Drawn = Widget
else:  # a plain mixin: a Widget base here would pin ``can_focus`` before the widget's own
    _Drawn = object


class StylesOncePerDraw(_Drawn):
    """Mixed into a widget (first): its ``rich_style`` kept for the length of a draw.

    Outside a draw it is asked of Textual each time. A subclass may keep
    other styles of the draw in ``_drawn_styles`` (keys other than ``None``).
    """

    _drawn_styles: dict[Any, Style] | None = None
    """The styles looked up in the draw under way (``None`` between draws)."""

    def render_lines(self, crop: Region) -> list[Strip]:
        self._drawn_styles = {}
        try:
            return super().render_lines(crop)
        finally:
            self._drawn_styles = None

    @property
    def rich_style(self) -> Style:
        kept = self._drawn_styles
        if kept is None:
            return super().rich_style
        style = kept.get(None)
        if style is None:
            style = kept[None] = super().rich_style
        return style
