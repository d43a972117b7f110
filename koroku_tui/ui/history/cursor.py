"""``CursorList``: the history screen's lists, with a cursor nobody can miss and a memory of moves.

Two things every list of the history screen needs:

* The cursor row is marked with ``▶`` in a column of its own (and styled by
  ``history.tcss``), apart from the ``●`` that marks the current session, so
  which row a key acts on never depends on telling two colours apart.
* ``moved`` says whether the user moved the cursor in the list (arrows,
  Home/End, PageUp/PageDown, a click) since it last got the focus. Until
  they did, the screen sends letters to the search box instead of to the
  row's single-letter actions: typing that began as a search never renames,
  deletes, exports or forks anything.
"""

from __future__ import annotations

from typing import ClassVar

from rich.segment import Segment
from textual import events
from textual.strip import Strip
from textual.widgets import OptionList

__all__ = ["CURSOR_MARK", "CursorList"]

CURSOR_MARK = "▶ "
_GUTTER = len(CURSOR_MARK)


class CursorList(OptionList):
    """An ``OptionList`` with a ``▶`` column on the cursor's row, knowing whether the user moved."""

    MARK_UNFOCUSED: ClassVar[bool] = True
    """Whether the ``▶`` shows while another widget has the focus (the left pane's lists:
    their row is what the actions apply to; the detail pane's mark only while in use)."""

    def __init__(self, *, id: str | None = None) -> None:
        # markup=False: option lines are Text already, but never let a str slip through parsed.
        super().__init__(id=id, markup=False)
        self.moved = False
        """True once the user moved the cursor here since the list last got the focus."""

    # -- what the user did -------------------------------------------------

    def on_focus(self, event: events.Focus) -> None:
        # Focus arriving (Tab, Escape from the search, a search submitted) is
        # no move; the terminal window getting the focus back changes nothing.
        if not event.from_app_focus:
            self.moved = False

    def mark_moved(self) -> None:
        """The user moved the cursor: letters now act on its row (the key bar says so)."""
        if not self.moved:
            self.moved = True
            self.screen.refresh_bindings()

    async def _on_click(self, event: events.Click) -> None:
        self.mark_moved()  # OptionList's own handler runs next (the MRO's)

    def action_cursor_up(self) -> None:
        self.mark_moved()
        super().action_cursor_up()

    def action_cursor_down(self) -> None:
        self.mark_moved()
        super().action_cursor_down()

    def action_first(self) -> None:
        self.mark_moved()
        super().action_first()

    def action_last(self) -> None:
        self.mark_moved()
        super().action_last()

    def action_page_up(self) -> None:
        self.mark_moved()
        super().action_page_up()  # type: ignore[no-untyped-call]

    def action_page_down(self) -> None:
        self.mark_moved()
        super().action_page_down()  # type: ignore[no-untyped-call]

    # -- the cursor's column -------------------------------------------------

    def _get_left_gutter_width(self) -> int:
        return _GUTTER

    def render_line(self, y: int) -> Strip:
        strip = super().render_line(y)
        width = self.scrollable_content_region.width
        try:
            index, offset = self._lines[self.scroll_offset.y + y]
        except IndexError:
            return Strip.blank(width, self.get_visual_style("option-list--option").rich_style)
        option = self.options[index]
        divider = option._divider and offset == self._heights[index] - 1
        if option.disabled:
            state = "option-list--option-disabled"
        elif index == self.highlighted and not divider:
            state = "option-list--option-highlighted"
        elif index == self._mouse_hovering_over and not divider:
            state = "option-list--option-hover"
        else:
            state = ""
        names = ("option-list--option", state) if state else ("option-list--option",)
        style = self.get_visual_style(*names).rich_style
        marked = index == self.highlighted and offset == 0
        mark = CURSOR_MARK if marked and (self.has_focus or self.MARK_UNFOCUSED) else " " * _GUTTER
        gutter = Strip([Segment(mark, style)], _GUTTER).apply_meta({"option": index})
        return Strip.join([gutter, strip]).crop(0, width)
