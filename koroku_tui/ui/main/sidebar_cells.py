"""The cells of the sidebar's rows: cheap to make, to measure and to keep.

A step of a thousand calls is a thousand rows at once (issue 22, item 21),
and the keys wait while they are made. So a cell costs as little as it can:

- DataTable measures every cell of every new row; a ``Text`` costs it a
  console's options each time (~25 µs a cell, 80 ms a thousand rows), a
  renderable without ``__rich_measure__`` nothing. No column's width comes
  from those measures: the status and args columns have theirs, and the
  tool column's is the widest ``width`` of its cells (``ToolTable.fit_tool``).
- The marks are one cell per state, shared by every row in that state, and
  a tool's name one cell per name shown (``LabelCells``).
- The arguments' text is made when the row is first drawn (``ArgsCell``):
  the table draws only the rows in view, and most of a thousand never are.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console, ConsoleOptions, RenderResult
from rich.text import Text

from koroku_tui.text.safety import escape_hidden
from koroku_tui.ui.main.format import args_short, status_mark
from koroku_tui.ui.safe_text import literal

__all__ = ["ArgsCell", "Cell", "LabelCells", "mark_cell"]

_ARGS_SOURCE = 500
"""Characters of one-line arguments a row keeps: wider than any sidebar, cut on screen."""


class Cell:
    """A table cell: ``text``, drawn as is, which DataTable measures as one column."""

    __slots__ = ("_text",)

    def __init__(self, text: Text | None) -> None:
        self._text = text

    @property
    def text(self) -> Text:
        """What the cell shows."""
        assert self._text is not None
        return self._text

    @property
    def width(self) -> int:
        """Cells the text takes on one line."""
        return self.text.cell_len

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield self.text

    def __str__(self) -> str:
        return self.text.plain


class ArgsCell(Cell):
    """A row's arguments on one line, cut to the column with "…"; made when first drawn."""

    __slots__ = ("_args",)

    def __init__(self, args: dict[str, Any]) -> None:
        super().__init__(None)
        self._args = args

    @property
    def text(self) -> Text:
        if self._text is None:
            shown = literal(args_short(self._args, _ARGS_SOURCE))
            # Cut to the column's width when drawn, with an ellipsis, never wrapped.
            shown.no_wrap, shown.overflow = True, "ellipsis"
            self._text = shown
        return self._text


_MARKS: dict[tuple[bool, bool, bool], Cell] = {}


def mark_cell(done: bool, failed: bool, denied: bool = False) -> Cell:
    """The status cell of a call in this state (one cell, shared by every such row)."""
    key = (done, failed, denied)
    cell = _MARKS.get(key)
    if cell is None:
        cell = _MARKS[key] = Cell(literal(status_mark(done, failed, denied)))
    return cell


class LabelCells:
    """The tool column's cells, one per label: a thousand calls of one tool share one."""

    def __init__(self) -> None:
        self._cells: dict[str, Cell] = {}

    def __call__(self, label: str) -> Cell:
        """The cell that shows ``label`` (hidden characters as escapes)."""
        cell = self._cells.get(label)
        if cell is None:
            cell = self._cells[label] = Cell(literal(escape_hidden(label)))
        return cell
