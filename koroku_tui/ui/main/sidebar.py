"""The tool sidebar: one DataTable row per tool call of the session, args on selection.

DataTable is a Line API widget, so thousands of rows stay cheap (ListView
would not). Cells are ``rich.text.Text`` built with ``literal``: tool names and
arguments can never be read as markup. Hidden characters in them show as
``\u009d``-style escapes (``escape_hidden``, ``styled``), never dropped; the
selected call's arguments are laid out as in the approval dialog and cut
after ``SHOWN_AT_FIRST`` characters with "… N more characters".

The tool column names the tool as its spec says (``format.tool_label``: a
tool of an MCP server as ``time › get_current_time``).

The args column takes the width the other columns leave and cuts with "…"
(no horizontal scrolling). The cursor, and so the detail, follows the newest
call until the user moves it (keyboard or mouse) to another row.

A step of a thousand calls is a thousand rows at once (issue 22, item 21):
a row is added with its result when that came in the same batch (not
added pending, then changed); its cells cost next to nothing to make and
measure (``sidebar_cells``); and past ``ROWS_PER_FRAME`` rows the rest go
in after the next frames, so the keys typed meanwhile are served between.

The table (``tool_table.ToolTable``) is mounted after the first frame:
DataTable's module and widget cost ~0.13x of a bare Textual app's launch.
Calls added before then wait in the sidebar and become its first rows; the
sidebar's width is fixed, so the transcript beside it does not move.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, NamedTuple

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from koroku_tui.agent.tools.spec import ToolLookup, ToolSpec
from koroku_tui.text.tool_args import args_display
from koroku_tui.ui.main.format import SHOWN_AT_FIRST, capped_args, tool_label
from koroku_tui.ui.main.sidebar_cells import ArgsCell, Cell, LabelCells, mark_cell
from koroku_tui.ui.safe_text import styled

if TYPE_CHECKING:  # loaded with the table, after the first frame
    from textual.widgets import DataTable

    from koroku_tui.ui.main.tool_table import ToolTable

__all__ = ["NARROW", "ROWS_PER_FRAME", "Finished", "FinishedCall", "ToolSidebar"]

NARROW = 100
"""Below this many columns the sidebar starts hidden; shown (ctrl+t), it lies over the transcript.

Beside it, the transcript of an 80-column terminal would wrap at ~34 columns.
"""

ROWS_PER_FRAME = 250
"""Rows put in the table at once; more go in after the next frames, as many each.

A thousand rows at once held the keys ~50 ms, then the frame that drew
them. In slices (~4 ms each here) a key typed meanwhile is served and drawn
between two; the table is measured and drawn once, with the last.
"""


class FinishedCall(NamedTuple):
    """A stored call as its row shows it."""

    name: str
    args: dict[str, Any]
    failed: bool
    denied: bool
    """The user said no in the approval dialog (the call failed by choice: ⊘, not ✗)."""


class Finished(NamedTuple):
    """A call's result as its row shows it: the call (name, id) and how it ended."""

    name: str
    call_id: str | None
    failed: bool
    denied: bool


class ToolSidebar(Vertical):
    """Tool calls of the current session, newest at the bottom."""

    def __init__(self, *, tools: ToolLookup = ToolSpec.unregistered, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.tools = tools
        """Each call's spec by the tool's name: what its row calls the tool (``tool_label``)."""
        self._args: dict[str, dict[str, Any]] = {}
        self._pending: list[tuple[str, str, str | None]] = []
        self._count = 0
        self._follow_newest = True
        """False once the user moved the cursor off the newest row (back on it: True again)."""
        self._table: ToolTable | None = None
        self._waiting: dict[str, list[Cell]] = {}
        """The rows (cells by key) not in the table yet, in order: added before it was
        mounted, or past ``ROWS_PER_FRAME`` (they go in after the next frames)."""
        self._placing = False
        """A slice of ``_waiting`` is due after the next frame."""
        self._chosen: int | None = None
        """The row the cursor goes to once the rows waiting are in (older calls put above)."""
        self._labels = LabelCells()
        self._detail: tuple[object, ...] = ()
        """What the detail under the table shows (the cursor row's arguments, styled)."""

    def compose(self) -> ComposeResult:
        yield Static("Tool calls", classes="section-title")
        yield Static("", id="tool-args")

    def on_mount(self) -> None:
        self.call_after_refresh(self._table_after_first_frame)

    def _table_after_first_frame(self) -> None:
        # A quit as the first frame showed has taken the sidebar down by now.
        if self.is_attached and self._table is None:
            self._mount_table()

    def _mount_table(self) -> ToolTable:
        """Mount the table between the title and the detail, holding the calls added so far."""
        if self._table is not None:  # asked for (``table``) before the first frame
            return self._table
        from koroku_tui.ui.main.tool_table import ToolTable

        table = ToolTable(id="tool-table")
        self.mount(table, before=self.query_one("#tool-args"))
        self._table = table
        table.fit_args()
        self._place()  # the calls added so far, the cursor on the newest (as when its row came)
        return table

    @property
    def table(self) -> ToolTable:
        """The calls' table; before the first frame is drawn, asking for it mounts it."""
        return self._mount_table() if self._table is None else self._table

    @property
    def row_count(self) -> int:
        shown = 0 if self._table is None else self._table.row_count
        return shown + len(self._waiting)

    def rows(self) -> list[tuple[str, str, str]]:
        """Plain text of every row (status, tool, args): for tests and debugging."""
        return [(str(a), str(b), str(c)) for _, (a, b, c) in self._current_rows()]

    def add_calls(
        self,
        calls: list[tuple[str, dict[str, Any], str | None]],
        results: Iterable[Finished] = (),
    ) -> None:
        """A row per call (name, arguments, id), laid out once for all of them, then ``results``.

        A result for one of these calls is in its row from the start; one for
        an older call changes that row (as ``finish_call``).
        """
        rows: dict[str, list[Cell]] = {}
        for name, args, call_id in calls:
            key = self._new_key(args)
            rows[key] = self._cells(name, args, False, False)
            self._pending.append((key, name, call_id))
        for result in results:
            self._finish(result, rows)
        self._add_rows(rows)

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
        key = self._new_key(args)
        self._add_rows({key: self._cells(name, args, done, failed, denied)})
        if not done:
            self._pending.append((key, name, call_id))

    def finish_call(
        self, name: str, call_id: str | None, failed: bool, denied: bool = False
    ) -> None:
        """Turn the matching pending row into a check, a cross, or ⊘ when the user denied it."""
        self._finish(Finished(name, call_id, failed, denied), {})

    def _finish(self, result: Finished, unshown: dict[str, list[Cell]]) -> None:
        """Mark the row of the oldest pending call ``result`` answers (by id, else by name).

        ``unshown``: rows not in the table yet, by key (changed there instead).
        """
        name, call_id = result.name, result.call_id
        for index, (key, row_name, row_id) in enumerate(self._pending):
            if (call_id is not None and row_id == call_id) or (
                call_id is None and row_name == name
            ):
                mark = mark_cell(True, result.failed, result.denied)
                if key in unshown:
                    unshown[key][0] = mark
                elif key in self._waiting or self._table is None:
                    self._waiting[key][0] = mark
                else:
                    self._table.update_cell(key, "status", mark)
                del self._pending[index]
                return

    def prepend_calls(self, calls: list[FinishedCall]) -> None:
        """Put finished calls of an older page above the current rows.

        DataTable only appends, so the rows are rebuilt; pages are small and
        this happens on a key press, not per streamed chunk.
        """
        table = self._table
        current = self._current_rows()
        # While an earlier page's slices go in, the cursor is not the user's (the
        # table was emptied): the row kept for it is.
        chosen = table.cursor_row if table is not None else 0
        if self._chosen is not None:
            chosen = self._chosen
        self._clear_rows()
        rows: dict[str, list[Cell]] = {}
        for name, args, failed, denied in calls:
            rows[self._new_key(args)] = self._cells(name, args, True, failed, denied)
        renamed: dict[str, str] = {}
        for old_key, old_cells in current:
            renamed[old_key] = key = self._new_key(self._args.pop(old_key, {}))
            rows[key] = old_cells
        if table is not None and not self._follow_newest:  # the row the user chose stays chosen
            self._chosen = chosen + len(calls)  # once its row is in (the last slice's, see _place)
        self._add_rows(rows)
        self._pending = [(renamed.get(k, k), n, i) for k, n, i in self._pending]

    def _cells(
        self, name: str, args: dict[str, Any], done: bool, failed: bool, denied: bool = False
    ) -> list[Cell]:
        label = self._labels(tool_label(self.tools(name)))
        return [mark_cell(done, failed, denied), label, ArgsCell(args)]

    def _new_key(self, args: dict[str, Any]) -> str:
        """The key of a new row (keeping its arguments for the detail)."""
        self._count += 1
        key = f"call-{self._count}"
        self._args[key] = args
        return key

    def _add_rows(self, rows: dict[str, list[Cell]]) -> None:
        """Append ``rows`` (cells by key) to the table, ``ROWS_PER_FRAME`` a frame."""
        self._waiting.update(rows)
        # Without a table, they are placed once it is mounted (after the first
        # frame); with a slice due, the rows wait their turn behind it. Many
        # rows start after the next frame: the batch that brought them (a
        # step's calls in the transcript too) is a frame's work already.
        if self._table is None or self._placing:
            return
        if len(rows) > ROWS_PER_FRAME:
            self._place_after_frame()
        else:
            self._place()

    def _place(self) -> None:
        """Put the oldest ``ROWS_PER_FRAME`` waiting rows in the table; the next after a frame."""
        self._placing = False
        table = self._table
        if table is None or not self._waiting or not self.is_attached:
            return
        keys = list(self._waiting)[:ROWS_PER_FRAME]
        more = len(keys) < len(self._waiting)
        table.append_rows({key: self._waiting.pop(key) for key in keys}, more=more)
        if more:
            # Nothing moves in the table till the last slice is in: it is
            # measured and drawn once, with the cursor on the newest.
            self._place_after_frame()
            return
        # Fit the columns to the rows (the tool column may have grown), follow the newest.
        table.fit_args()
        table.measure_new_rows()
        chosen, self._chosen = self._chosen, None
        if self._follow_newest:
            table.move_cursor(row=table.row_count - 1, animate=False)
        elif chosen is not None:
            table.move_cursor(row=chosen, animate=False)

    def _place_after_frame(self) -> None:
        # From the sidebar's own queue: run by the screen right after its
        # frame, the slice held the keys as long as the frame.
        self._placing = True
        self.call_after_refresh(self.call_later, self._place)

    def _current_rows(self) -> list[tuple[str, list[Cell]]]:
        """Every row's key and cells, top to bottom."""
        table = self._table
        placed = (
            []
            if table is None
            else [(str(row.key.value), table.get_row(row.key)) for row in table.ordered_rows]
        )
        return placed + list(self._waiting.items())

    def _clear_rows(self) -> None:
        self._waiting.clear()
        if self._table is not None:
            self._table.clear()

    def clear(self) -> None:
        self._clear_rows()
        self._args.clear()
        self._pending.clear()
        self._follow_newest = True
        self._chosen = None
        self._detail = ()
        self.query_one("#tool-args", Static).update("")

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        table = self._table
        if table is None or event.data_table is not table:
            return
        if event.cursor_row != table.cursor_row:
            return  # a newer highlight is on its way
        # An emptied table (a session switch, ctrl+l) highlights "no row": no key.
        row = getattr(event.row_key, "value", None)
        if row is None:
            return
        # Rows are only appended: a cursor off the last row is the user's choice
        # (while a batch's rows go in, the cursor waits for the last of them).
        if not self._waiting:
            self._follow_newest = table.cursor_row >= table.row_count - 1
        # Laid out as in the approval dialog, and cut the same way: drawing
        # a megabyte of escapes here froze the app on every start.
        args = self._args.get(str(row))
        pieces = args_display(args) if args is not None else []
        shown, more = capped_args(pieces, SHOWN_AT_FIRST)
        text = styled(shown)
        if more:
            text.append(f"\n… {more:,} more characters", style="italic")
        detail = (text.plain, tuple(text.spans), str(text.style))
        if detail != self._detail:  # the cursor following a step's calls that say the same
            self._detail = detail
            self.query_one("#tool-args", Static).update(text)
