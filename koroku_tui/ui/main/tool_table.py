"""The sidebar's table of tool calls: status, tool, and arguments cut to the width left.

Its own module because Textual's DataTable is imported with it: the sidebar
mounts the table after the first frame (``ToolSidebar``), and only then is
this module (and DataTable's) loaded.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual._segment_tools import line_crop
from textual.strip import Strip
from textual.widgets import DataTable
from textual.widgets.data_table import ColumnKey

from koroku_tui.ui.main.draw_styles import StylesOncePerDraw

if TYPE_CHECKING:
    from koroku_tui.ui.main.sidebar_cells import Cell

__all__ = ["ToolTable"]

_ARGS_MIN = 8
_DRAWN_CELLS = 3_000
"""Cells' drawn lines kept at most (a few screens of them); past it the keeping starts again."""
_ARGS = ColumnKey("args")
_TOOL = ColumnKey("tool")
_TOOL_TITLE = "Tool"


class ToolTable(StylesOncePerDraw, DataTable[Any]):
    """The calls' table, whose last column fills the width left (DataTable has no "1fr").

    Its columns are keyed ``status``, ``tool`` and ``args``; a row's cells come in that order.
    Every column has a width: the tool column's is its widest name's (``fit_tool``), so
    DataTable's measures of the cells (a ``sidebar_cells.Cell`` each) are never needed.
    """

    def __init__(self, **kwargs: Any) -> None:
        self._drawn_cells: dict[tuple[object, ...], Any] = {}
        """Each cell's lines as drawn, by what they depend on (``_render_cell``)."""
        self._drawn_looks: dict[tuple[object, ...], Any] = {}
        """The same, whatever the row: a status or a tool's cell is shared by many rows."""
        self._drawn_lines: dict[tuple[object, ...], Strip] = {}
        """Each row's line as drawn, by what it depends on (``_render_line``)."""
        super().__init__(cursor_type="row", zebra_stripes=True, **kwargs)
        self.add_column(" ", key="status", width=1)
        self.add_column(_TOOL_TITLE, key="tool", width=len(_TOOL_TITLE))
        self.add_column("Args", key="args", width=_ARGS_MIN)

    def append_rows(self, rows: Mapping[str, Sequence[Cell]], *, more: bool = False) -> None:
        """Append ``rows`` (their cells by key), the tool column as wide as its widest name.

        ``more``: more rows follow in the next frames; these are measured with
        them (``measure_new_rows``), and the table is not drawn again till then.
        """
        if not self._appended(rows):
            for key, (status, tool, args) in rows.items():
                self.add_row(status, tool, args, key=key)
        self.fit_tool(max((cells[1].width for cells in rows.values()), default=0))
        if more:
            # Measured when idle, the rows would have the table drawn again
            # (~12-25 ms) a frame: once for all of them is enough.
            self._require_update_dimensions = False

    def _appended(self, rows: Mapping[str, Sequence[Cell]]) -> bool:
        """Append ``rows`` as ``add_row`` does, but with its reactions once for all of them.

        ``add_row`` sets the cursor again (a reactive: its validation and
        watchers), counts a change and asks for an idle check for each row:
        ~20 µs a row, 20 ms for a step of a thousand calls, while the keys
        wait. Here the rows go in DataTable's own stores (one line each, no
        label), then the cursor and the count are touched once. False (nothing
        done) when DataTable's stores are not what this knows (Textual 8.2);
        ``test_ui_draw_styles`` compares the two ways.
        """
        try:
            locations, data, table_rows = self._row_locations, self._data, self.rows
            new_rows = self._new_rows
        except AttributeError:
            return False
        from textual.widgets.data_table import DuplicateKey, Row, RowKey

        columns = [column.key for column in self.ordered_columns]
        if any(len(cells) != len(columns) for cells in rows.values()):
            return False  # add_row's way: missing cells empty, extra ones an error
        keys = [RowKey(key) for key in rows]
        if any(key in locations for key in keys):
            raise DuplicateKey("a row key already exists")
        made = [Row(key, 1) for key in keys]  # before any store changes: all or nothing
        was_empty = not table_rows
        placed = enumerate(zip(made, rows.values(), strict=True), len(table_rows))
        for index, (row, cells) in placed:
            locations[row.key] = index
            data[row.key] = dict(zip(columns, cells, strict=True))
            table_rows[row.key] = row
            new_rows.add(row.key)
        self._require_update_dimensions = True
        self.cursor_coordinate = self.cursor_coordinate
        if was_empty and rows and self.columns and self.show_cursor and self.cursor_type != "none":
            self._highlight_cursor()
        self._update_count += 1
        self.check_idle()
        return True

    def measure_new_rows(self) -> None:
        """Measure the rows added since the last measure now, as DataTable does when idle.

        Left to DataTable, the table is drawn three times for one batch of
        rows: with them, once measured (when idle), and once scrolled to the
        cursor (which waits for the measure). Each draw of its lines in
        view costs ~12 ms, while the keys wait. Measured here, the cursor
        moves at once and the table is drawn once. DataTable's own names
        (``_new_rows``, ``_update_dimensions``): if they change, it measures
        when idle again.
        """
        new_rows = getattr(self, "_new_rows", None)
        update = getattr(self, "_update_dimensions", None)
        if new_rows is None or update is None:
            self._require_update_dimensions = True  # DataTable measures when idle
            return
        if not (self._require_update_dimensions or new_rows):
            return
        if not self.is_mounted:
            return  # measured when idle, once mounted
        self._require_update_dimensions = False
        rows = set(new_rows)
        new_rows.clear()
        update(rows)

    def _get_row_style(self, row_index: int, base_style: Style) -> Style:
        # Asked once a row drawn: a header, fixed, odd or even row's style, kept for the draw.
        kept = self._drawn_styles
        if kept is None or row_index < -1:
            return super()._get_row_style(row_index, base_style)
        kind = -1 if row_index == -1 else -2 if row_index < self.fixed_rows else row_index % 2
        key = ("row", kind, base_style)
        style = kept.get(key)
        if style is None:
            style = kept[key] = super()._get_row_style(row_index, base_style)
        return style

    def _update_dimensions(self, new_rows: Iterable[Any]) -> None:
        # DataTable measures each new row's cells (~28 µs a row: 28 ms for a
        # step of a thousand calls, while the keys wait) to widen auto-width
        # columns and size rows of no fixed height. Here every column has a
        # width and every row is one line with no label (``append_rows``):
        # the measures would change nothing, the virtual size is from the
        # rows' count. A column made auto-width later is measured again.
        measured = any(column.auto_width for column in self.columns.values())
        super()._update_dimensions(new_rows if measured else ())

    def fit_tool(self, width: int) -> None:
        """Widen the tool column to ``width`` cells if it is narrower (it never narrows)."""
        column = self.columns[_TOOL]
        if width > column.width:
            column.width = width
            self._resized()

    def on_resize(self, event: events.Resize) -> None:
        self.fit_args()

    def fit_args(self) -> None:
        """Give the args column every cell the other columns leave."""
        column = self.columns.get(_ARGS)
        if column is None:
            return
        others = sum(c.get_render_width(self) for c in self.ordered_columns if c.key != _ARGS)
        left = self.scrollable_content_region.width - others - 2 * self.cell_padding
        width = max(_ARGS_MIN, left)
        if column.width != width:
            column.width = width
            self._resized()

    def _render_cell(
        self,
        row_index: int,
        column_index: int,
        base_style: Style,
        width: int,
        cursor: bool = False,
        hover: bool = False,
    ) -> Any:
        """A cell's lines, drawn again only when the cell, its place or its look changed.

        DataTable draws every cell in view again after any row is added (its
        caches are keyed by a count of changes): a step of a thousand calls,
        added a slice a frame, drew the table's ~90 cells in view each time
        (~6 ms of its ~12). A cell is replaced, never changed, so the cell
        itself, where it is and how it is styled say what it looks like.
        """
        row_key = self._row_locations.get_key(row_index) if row_index >= 0 else None
        column_key = self._column_locations.get_key(column_index) if column_index >= 0 else None
        row = self._data.get(row_key) if row_key is not None else None
        cell = row.get(column_key) if row is not None and column_key is not None else None
        if cell is None:  # the header, or a cell DataTable keeps as it likes
            return super()._render_cell(row_index, column_index, base_style, width, cursor, hover)
        look = (
            column_index,
            cell,
            base_style,
            width,
            cursor,
            hover,
            self._show_hover_cursor,
            self._pseudo_class_state,
            self.cell_padding,
        )
        key = (row_index, look)
        lines = self._drawn_cells.get(key)
        if lines is None:
            if len(self._drawn_cells) > _DRAWN_CELLS:
                self._drawn_cells.clear()
                self._drawn_looks.clear()
            drawn = self._drawn_looks.get(look)
            if drawn is None:
                lines = super()._render_cell(
                    row_index, column_index, base_style, width, cursor, hover
                )
                self._drawn_looks[look] = lines
            else:
                lines = _moved(drawn, row_index, column_index)
            self._drawn_cells[key] = lines
        return lines

    def _render_line(self, y: int, x1: int, x2: int, base_style: Style) -> Strip:
        """A row's line, drawn again only when the row, its place or its look changed.

        DataTable keeps a line by its ``y``, the cursor's place and a count
        of every change to the table: each batch of a step's calls (rows
        added, a call's mark changed, the cursor following the newest row)
        had every line in view drawn again (~0.27 ms a line), frame after
        frame. A row's line depends on its cells (replaced, never changed),
        its index (its stripe, and the meta a click reads), whether the
        cursor or the mouse is on it, and the table's look and widths.
        """
        index = y - self.header_height if self.show_header else y
        if index < 0 or self.fixed_rows or self.fixed_columns or self._labelled_row_exists:
            return super()._render_line(y, x1, x2, base_style)
        if index >= len(self.rows):
            return Strip.blank(self.size.width, base_style)
        row_key = self._row_locations.get_key(index)
        row = self.rows.get(row_key) if row_key is not None else None
        if row is None or row.height != 1:
            return super()._render_line(y, x1, x2, base_style)
        assert row_key is not None
        cursor = self.cursor_coordinate.row == index
        hover = self.hover_coordinate.row == index
        key = (
            index,
            *self._data[row_key].values(),
            cursor and self.show_cursor,
            hover and self.show_cursor and self._show_hover_cursor,
            x1,
            x2,
            self.size.width,
            base_style,
            self._pseudo_class_state,
            tuple(column.width for column in self.columns.values()),
        )
        line = self._drawn_lines.get(key)
        if line is None:
            if len(self._drawn_lines) > _DRAWN_CELLS:
                self._drawn_lines.clear()
            line = self._row_line(index, x1, x2, base_style, cursor, hover)
            self._drawn_lines[key] = line
        return line

    def _row_line(
        self, index: int, x1: int, x2: int, base_style: Style, cursor: bool, hover: bool
    ) -> Strip:
        """Row ``index``'s line as DataTable draws it (``_render_line_in_row``, then cut).

        Without what our rows never have (a label, fixed columns, a row of more
        than one line), and with what one draw shares looked up once: DataTable
        asks for the header's style, the widths and the background for each
        row (~0.3 ms a row, ~9 ms for a view of new rows). ``test_ui_draw_styles``
        compares the two.
        """
        widths = [column.get_render_width(self) for column in self.ordered_columns]
        row_style = self._get_row_style(index, base_style)
        segments: list[Segment] = []
        for column, width in enumerate(widths):
            segments += self._render_cell(index, column, row_style, width, cursor, hover)[0]
        extend, _ = self._get_styles_to_render_cell(
            False,
            False,
            False,
            hover,
            cursor,
            self.show_cursor,
            self._show_hover_cursor,
            False,
            False,
        )
        extend = (
            row_style + extend + Style.from_meta({"row": index, "column": 0, "out_of_bounds": True})
        )
        width = self.size.width
        segments.append(Segment(" " * max(0, width - sum(widths)), extend))
        return (
            Strip(line_crop(segments, x1, x2, width))
            .adjust_cell_length(width, base_style)
            .simplify()
        )

    def _clear_caches(self) -> None:
        self._forget_drawn()
        super()._clear_caches()

    def notify_style_update(self) -> None:
        self._forget_drawn()
        super().notify_style_update()

    def _forget_drawn(self) -> None:
        """Forget every cell and line this table kept (``_render_cell``, ``_render_line``)."""
        self._drawn_cells.clear()
        self._drawn_looks.clear()
        self._drawn_lines.clear()

    def _resized(self) -> None:
        # No public way to resize a column: the table re-measures and
        # redraws (its cached cells were cut to the old width).
        self._require_update_dimensions = True
        self._clear_caches()


def _moved(lines: list[list[Segment]], row: int, column: int) -> list[list[Segment]]:
    """A cell's ``lines`` as drawn for another row: only the mouse's meta says which.

    DataTable draws a cell through Rich's padding and styling (~0.15 ms);
    a status or a tool's cell drawn for one row is the same in any row of
    the same stripe and cursor, but for its ``{"row", "column"}`` meta,
    which a style added last replaces (``test_ui_draw_styles`` compares).
    """
    meta = Style.from_meta({"row": row, "column": column})
    return [
        [Segment(text, style + meta if style else style, control) for text, style, control in line]
        for line in lines
    ]
