"""The tool sidebar: one DataTable row per tool call of the session, args on selection.

DataTable is a Line API widget, so thousands of rows stay cheap (ListView
would not). Cells are ``rich.text.Text`` built with ``literal``: tool names and
arguments can never be read as markup. Hidden characters in them show as
``\u009d``-style escapes (``escape_hidden``, ``styled``), never dropped; the
selected call's arguments are laid out as in the approval dialog and cut
after ``SHOWN_AT_FIRST`` characters with "… N more characters".

The args column takes the width the other columns leave and cuts with "…"
(no horizontal scrolling). The cursor, and so the detail, follows the newest
call until the user moves it (keyboard or mouse) to another row.
"""

from __future__ import annotations

from typing import Any, NamedTuple, cast

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import DataTable, Static
from textual.widgets.data_table import ColumnKey, RowKey

from koroku_tui.text.safety import escape_hidden
from koroku_tui.text.tool_args import args_display
from koroku_tui.ui.main.format import SHOWN_AT_FIRST, args_short, capped_args, status_mark
from koroku_tui.ui.safe_text import literal, styled

__all__ = ["NARROW", "ToolSidebar"]

NARROW = 100
"""Below this many columns the sidebar starts hidden; shown (ctrl+t), it lies over the transcript.

Beside it, the transcript of an 80-column terminal would wrap at ~34 columns.
"""


_ARGS_SOURCE = 500
"""Characters of one-line arguments a row keeps: wider than any sidebar, cut on screen."""
_ARGS_MIN = 8
_ARGS = ColumnKey("args")


class FinishedCall(NamedTuple):
    """A stored call as its row shows it."""

    name: str
    args: dict[str, Any]
    failed: bool
    denied: bool
    """The user said no in the approval dialog (the call failed by choice: ⊘, not ✗)."""


def _cells(
    name: str, args: dict[str, Any], done: bool, failed: bool, denied: bool = False
) -> tuple[Any, ...]:
    shown = literal(args_short(args, _ARGS_SOURCE))
    # Cut to the column's width when drawn, with an ellipsis, never wrapped.
    shown.no_wrap, shown.overflow = True, "ellipsis"
    return (
        literal(status_mark(done, failed, denied)),
        literal(escape_hidden(name)),
        shown,
    )


class ToolTable(DataTable[Any]):
    """The calls' table, whose last column fills the width left (DataTable has no "1fr")."""

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
            # No public way to resize a column: the table re-measures and
            # redraws (its cached cells were cut to the old width).
            self._require_update_dimensions = True
            self._clear_caches()


class ToolSidebar(Vertical):
    """Tool calls of the current session, newest at the bottom."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._args: dict[RowKey, dict[str, Any]] = {}
        self._pending: list[tuple[RowKey, str, str | None]] = []
        self._count = 0
        self._follow_newest = True
        """False once the user moved the cursor off the newest row (back on it: True again)."""

    def compose(self) -> ComposeResult:
        yield Static("Tool calls", classes="section-title")
        yield ToolTable(id="tool-table", cursor_type="row", zebra_stripes=True)
        yield Static("", id="tool-args")

    def on_mount(self) -> None:
        table = self.table
        table.add_column(" ", key="status", width=1)
        table.add_column("Tool", key="tool")
        table.add_column("Args", key="args", width=_ARGS_MIN)

    @property
    def table(self) -> ToolTable:
        return self.query_one("#tool-table", ToolTable)

    @property
    def row_count(self) -> int:
        return self.table.row_count

    def rows(self) -> list[tuple[str, str, str]]:
        """Plain text of every row (status, tool, args): for tests and debugging."""
        return [
            (str(cells[0]), str(cells[1]), cast(Text, cells[2]).plain)
            for cells in (self.table.get_row_at(i) for i in range(self.table.row_count))
        ]

    def add_call(
        self,
        name: str,
        args: dict[str, Any],
        call_id: str | None = None,
        *,
        done: bool = False,
        failed: bool = False,
        denied: bool = False,
    ) -> None:
        """Add a row; a pending one waits for :meth:`finish_call`."""
        key = self._append(_cells(name, args, done, failed, denied), args)
        if not done:
            self._pending.append((key, name, call_id))

    def finish_call(
        self, name: str, call_id: str | None, failed: bool, denied: bool = False
    ) -> None:
        """Turn the matching pending row into a check, a cross, or ⊘ when the user denied it."""
        for entry in self._pending:
            key, row_name, row_id = entry
            if (call_id is not None and row_id == call_id) or (
                call_id is None and row_name == name
            ):
                mark = status_mark(True, failed, denied)
                self.table.update_cell(key, "status", literal(mark))
                self._pending.remove(entry)
                return

    def prepend_calls(self, calls: list[FinishedCall]) -> None:
        """Put finished calls of an older page above the current rows.

        DataTable only appends, so the rows are rebuilt; pages are small and
        this happens on a key press, not per streamed chunk.
        """
        table = self.table
        current = [(row.key, table.get_row(row.key)) for row in table.ordered_rows]
        chosen = table.cursor_row
        table.clear()
        for name, args, failed, denied in calls:
            self._append(_cells(name, args, True, failed, denied), args)
        renamed: dict[RowKey, RowKey] = {}
        for old_key, old_cells in current:
            renamed[old_key] = self._append(tuple(old_cells), self._args.pop(old_key, {}))
        self._pending = [(renamed.get(k, k), n, i) for k, n, i in self._pending]
        if not self._follow_newest:  # the row the user chose stays chosen
            table.move_cursor(row=chosen + len(calls), animate=False)

    def _append(self, cells: tuple[Any, ...], args: dict[str, Any]) -> RowKey:
        self._count += 1
        table = self.table
        key = table.add_row(*cells, key=f"call-{self._count}")
        self._args[key] = args
        table.fit_args()  # the tool column may have grown
        if self._follow_newest:
            table.move_cursor(row=table.row_count - 1, animate=False)
        return key

    def clear(self) -> None:
        self.table.clear()
        self._args.clear()
        self._pending.clear()
        self._follow_newest = True
        self.query_one("#tool-args", Static).update("")

    @on(DataTable.RowHighlighted, "#tool-table")
    def _show_args(self, event: DataTable.RowHighlighted) -> None:
        table = self.table
        if event.cursor_row != table.cursor_row:
            return  # a newer highlight is on its way
        # Rows are only appended: a cursor off the last row is the user's choice.
        self._follow_newest = table.cursor_row >= table.row_count - 1
        # Laid out as in the approval dialog, and cut the same way: drawing
        # a megabyte of escapes here froze the app on every start.
        args = self._args.get(event.row_key)
        pieces = args_display(args) if args is not None else []
        shown, more = capped_args(pieces, SHOWN_AT_FIRST)
        text = styled(shown)
        if more:
            text.append(f"\n… {more:,} more characters", style="italic")
        self.query_one("#tool-args", Static).update(text)
